import BigNumber from "bignumber.js"

/** EMV QRCPS-MPM, Transaction Amount (ID "54"): at most 13 characters, so 9999999999.99. */
const MAX_AMOUNT_LENGTH = 13

const DECIMAL_TEXT = /^[+-]?\d+(?:\.\d+)?$/

export type BrCodeAmountResult = { readonly ok: true; readonly value: string } | { readonly ok: false; readonly message: string }

/**
 * The value of field 54 for an amount in the six-digit form the API carries ("123.450000" → "123.45").
 * An amount with a fraction of a cent is refused, not rounded: the payer would be charged a sum
 * nobody asked for, and the payment would then not match the invoice it settles.
 */
export const toBrCodeAmount = (amount: string): BrCodeAmountResult => {
  const text = amount.trim()
  if (!DECIMAL_TEXT.test(text)) return { ok: false, message: "the amount must be a decimal number such as \"10.50\"" }
  const value = new BigNumber(text)
  if (!value.isGreaterThan(0)) return { ok: false, message: "the amount must be greater than zero" }
  if ((value.decimalPlaces() ?? 0) > 2) return { ok: false, message: "the amount must be a whole number of cents: PIX amounts have two decimal places" }
  const fixed = value.toFixed(2)
  if (fixed.length > MAX_AMOUNT_LENGTH) return { ok: false, message: "the amount must be at most 9999999999.99" }
  return { ok: true, value: fixed }
}
