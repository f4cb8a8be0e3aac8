import { amountField } from "./amount.js"
import { barcodeCheckDigit, modulo10 } from "./check-digits.js"
import { dueDateFactor } from "./due-date-factor.js"
import { refuse, type BoletoResult } from "./result.js"

export interface BoletoInput {
  /** The bank's three-digit code in the clearing house (COMPE), e.g. "001", "341". */
  readonly bankCode: string
  /** "9" for the real, the only currency code FEBRABAN assigns to boletos in reais. */
  readonly currency: string
  /** `YYYY-MM-DD`. */
  readonly dueDate: string
  /** Decimal string in whole cents, e.g. "1234.560000". */
  readonly amount: string
  /** The 25-digit "campo livre" the bank defines (see `freeFieldFor`). */
  readonly freeField: string
}

export interface BoletoDigits {
  /** The 44 digits the barcode (Interleaved 2 of 5) encodes. */
  readonly barcode: string
  /** The 47-digit "linha digitável", digits only. */
  readonly digitableLine: string
  /** The linha digitável as printed: `AAAAA.AAAAA BBBBB.BBBBBB CCCCC.CCCCCC D EEEEEEEEEEEEEE`. */
  readonly formattedLine: string
  readonly dueDateFactor: string
  /** The general check digit, position 5 of the barcode and field 4 of the line. */
  readonly checkDigit: string
}

/**
 * The barcode and linha digitável of a boleto, FEBRABAN "bloqueto de cobrança" layout.
 *
 * Barcode (44): bank (3) · currency (1) · general check digit (1, módulo 11) · due-date
 * factor (4) · amount in cents (10) · free field (25).
 *
 * Linha digitável (47): field 1 = bank, currency, free field 1–5, módulo 10 digit;
 * field 2 = free field 6–15, módulo 10 digit; field 3 = free field 16–25, módulo 10 digit;
 * field 4 = the general check digit; field 5 = factor and amount.
 */
export const boletoDigits = (input: BoletoInput): BoletoResult<BoletoDigits> => {
  if (!/^\d{3}$/.test(input.bankCode)) return refuse(`bank code "${input.bankCode}" must be three digits`)
  if (input.currency !== "9") return refuse(`currency code "${input.currency}" is not "9" (real), the only currency a boleto in reais carries`)
  if (!/^\d{25}$/.test(input.freeField)) return refuse(`free field "${input.freeField}" must be 25 digits`)
  const factor = dueDateFactor(input.dueDate)
  if (!factor.ok) return factor
  const amount = amountField(input.amount)
  if (!amount.ok) return amount

  const head = input.bankCode + input.currency
  const tail = factor.factor + amount.field
  const checkDigit = String(barcodeCheckDigit(head + tail + input.freeField))
  const barcode = head + checkDigit + tail + input.freeField

  const free = input.freeField
  const field1 = head + free.slice(0, 5)
  const field2 = free.slice(5, 15)
  const field3 = free.slice(15, 25)
  const block1 = field1 + modulo10(field1)
  const block2 = field2 + modulo10(field2)
  const block3 = field3 + modulo10(field3)
  const digitableLine = block1 + block2 + block3 + checkDigit + tail
  const formattedLine = [
    `${block1.slice(0, 5)}.${block1.slice(5)}`,
    `${block2.slice(0, 5)}.${block2.slice(5)}`,
    `${block3.slice(0, 5)}.${block3.slice(5)}`,
    checkDigit,
    tail
  ].join(" ")
  return { ok: true, barcode, digitableLine, formattedLine, dueDateFactor: factor.factor, checkDigit }
}
