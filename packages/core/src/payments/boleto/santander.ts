import { digitsField, type BankData, type FreeField } from "./bank-data.js"
import { modulo11Sum } from "./check-digits.js"
import type { BoletoResult } from "./result.js"

const BANK = "Santander"

/**
 * The nosso número check digit (Santander cobrança manual): módulo 11 with weights 2 to 9
 * over the 12 digits; remainder 0 or 1 gives 0, remainder 10 gives 1, any other r gives 11 − r.
 */
export const santanderOurNumberDigit = (ourNumber: string): string => {
  const remainder = modulo11Sum(ourNumber, 9) % 11
  if (remainder === 0 || remainder === 1) return "0"
  if (remainder === 10) return "1"
  return String(11 - remainder)
}

/**
 * Santander: free field = "9" + código do beneficiário (7) + nosso número (12) + its DV (1)
 * + IOF (1) + carteira (3). The IOF digit is "0": only insurers (seguradoras) put their IOF
 * rate there. The boleto prints the nosso número as `nosso número-DV`.
 */
export const santanderFreeField = (data: BankData): BoletoResult<FreeField> => {
  const agreement = digitsField(BANK, "código do beneficiário", data.agreement, 7)
  if (!agreement.ok) return agreement
  const sequence = digitsField(BANK, "nosso número", data.ourNumber, 12)
  if (!sequence.ok) return sequence
  const wallet = digitsField(BANK, "carteira", data.wallet, 3)
  if (!wallet.ok) return wallet
  const digit = santanderOurNumberDigit(sequence.digits)
  return {
    ok: true,
    freeField: `9${agreement.digits}${sequence.digits}${digit}0${wallet.digits}`,
    ourNumber: `${sequence.digits}-${digit}`
  }
}
