import { refuse, type BoletoResult } from "./result.js"

/**
 * The collection ("cobrança") data of a financial account, as its bank assigns them.
 * Every value is digits only, without its check digit; shorter values are zero-padded.
 */
export interface BankData {
  /** Convênio (Banco do Brasil) or código do beneficiário (Santander). */
  readonly agreement?: string
  /** Carteira. */
  readonly wallet?: string
  /** Agência, without its check digit. */
  readonly agency?: string
  /** Conta corrente, without its check digit. */
  readonly account?: string
  /** The sequence value of the nosso número, without the bank's prefix or check digit. */
  readonly ourNumber?: string
}

/** The bank's free field and the nosso número as the bank prints it on the boleto. */
export interface FreeField {
  readonly freeField: string
  readonly ourNumber: string
}

/** A value of `BankData` checked and zero-padded to the width the bank's layout gives it. */
export const digitsField = (bank: string, label: string, value: string | undefined, width: number): BoletoResult<{ readonly digits: string }> => {
  if (value === undefined || value === "") return refuse(`${bank} needs the ${label}`)
  if (!/^\d+$/.test(value)) return refuse(`${bank} ${label} "${value}" must hold digits only, without a check digit`)
  if (value.length > width) return refuse(`${bank} ${label} "${value}" has more than ${width} digits`)
  return { ok: true, digits: value.padStart(width, "0") }
}
