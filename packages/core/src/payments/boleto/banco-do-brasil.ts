import { digitsField, type BankData, type FreeField } from "./bank-data.js"
import { refuse, type BoletoResult } from "./result.js"

const BANK = "Banco do Brasil"

/**
 * Banco do Brasil, convênio of 7 digits ("Especificações Técnicas para Confecção de Boleto
 * de Cobrança do Banco do Brasil"): free field = "000000" + nosso número (17: convênio 7 +
 * sequence 10) + carteira (2). That nosso número carries no check digit, and the boleto
 * prints its 17 digits. Convênios of 4 and 6 digits use other free fields, not built here.
 */
export const bancoDoBrasilFreeField = (data: BankData): BoletoResult<FreeField> => {
  const agreement = data.agreement ?? ""
  if (!/^\d{7}$/.test(agreement)) {
    return refuse(`${BANK} convênio "${agreement}" must be 7 digits: convênios of 4 or 6 digits use free fields that are not built here`)
  }
  const wallet = digitsField(BANK, "carteira", data.wallet, 2)
  if (!wallet.ok) return wallet
  const sequence = digitsField(BANK, "nosso número sequence", data.ourNumber, 10)
  if (!sequence.ok) return sequence
  const ourNumber = agreement + sequence.digits
  return { ok: true, freeField: "000000" + ourNumber + wallet.digits, ourNumber }
}
