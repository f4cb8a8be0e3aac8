import { digitsField, type BankData, type FreeField } from "./bank-data.js"
import { modulo11Sum } from "./check-digits.js"
import type { BoletoResult } from "./result.js"

const BANK = "Bradesco"

/**
 * The nosso número check digit (Bradesco cobrança manual): módulo 11 with weights 2 to 7
 * over carteira (2) + nosso número (11); remainder 0 gives "0", remainder 1 gives "P",
 * any other remainder r gives 11 − r.
 */
export const bradescoOurNumberDigit = (wallet: string, ourNumber: string): string => {
  const remainder = modulo11Sum(wallet + ourNumber, 7) % 11
  if (remainder === 0) return "0"
  if (remainder === 1) return "P"
  return String(11 - remainder)
}

/**
 * Bradesco: free field = agência (4) + carteira (2) + nosso número (11) + conta (7) + "0".
 * The boleto prints the nosso número as `carteira/nosso número-DV`.
 */
export const bradescoFreeField = (data: BankData): BoletoResult<FreeField> => {
  const agency = digitsField(BANK, "agência", data.agency, 4)
  if (!agency.ok) return agency
  const wallet = digitsField(BANK, "carteira", data.wallet, 2)
  if (!wallet.ok) return wallet
  const sequence = digitsField(BANK, "nosso número", data.ourNumber, 11)
  if (!sequence.ok) return sequence
  const account = digitsField(BANK, "conta", data.account, 7)
  if (!account.ok) return account
  return {
    ok: true,
    freeField: `${agency.digits}${wallet.digits}${sequence.digits}${account.digits}0`,
    ourNumber: `${wallet.digits}/${sequence.digits}-${bradescoOurNumberDigit(wallet.digits, sequence.digits)}`
  }
}
