import { digitsField, type BankData, type FreeField } from "./bank-data.js"
import { modulo10 } from "./check-digits.js"
import { refuse, type BoletoResult } from "./result.js"

const BANK = "Itaú"

/** Carteiras whose nosso número DAC covers carteira and nosso número only (Itaú boleto manual, annex 4). */
const DAC_WITHOUT_ACCOUNT = new Set(["126", "131", "146", "150", "168"])
/** Carteiras whose free field carries seu número and código do cliente instead of agência and conta. */
const CLIENT_CODE_WALLETS = new Set(["106", "107", "122", "142", "143", "195", "196", "198"])

/**
 * Itaú: free field = carteira (3) + nosso número (8) + DAC of agência/conta/carteira/nosso
 * número (módulo 10) + agência (4) + conta (5) + DAC of agência/conta (módulo 10) + "000".
 * The boleto prints the nosso número as `carteira/nosso número-DAC`.
 */
export const itauFreeField = (data: BankData): BoletoResult<FreeField> => {
  const wallet = digitsField(BANK, "carteira", data.wallet, 3)
  if (!wallet.ok) return wallet
  if (CLIENT_CODE_WALLETS.has(wallet.digits)) {
    return refuse(`${BANK} carteira ${wallet.digits} uses the free field with seu número and código do cliente, which is not built here`)
  }
  const sequence = digitsField(BANK, "nosso número", data.ourNumber, 8)
  if (!sequence.ok) return sequence
  const agency = digitsField(BANK, "agência", data.agency, 4)
  if (!agency.ok) return agency
  const account = digitsField(BANK, "conta", data.account, 5)
  if (!account.ok) return account
  const ourNumberDac = modulo10(
    DAC_WITHOUT_ACCOUNT.has(wallet.digits)
      ? wallet.digits + sequence.digits
      : agency.digits + account.digits + wallet.digits + sequence.digits
  )
  const accountDac = modulo10(agency.digits + account.digits)
  return {
    ok: true,
    freeField: `${wallet.digits}${sequence.digits}${ourNumberDac}${agency.digits}${account.digits}${accountDac}000`,
    ourNumber: `${wallet.digits}/${sequence.digits}-${ourNumberDac}`
  }
}
