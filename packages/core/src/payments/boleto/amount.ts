import BigNumber from "bignumber.js"
import { refuse, type BoletoResult } from "./result.js"

const DECIMAL = /^\d+(?:\.\d+)?$/
/** The barcode holds the amount in cents in ten digits: R$ 99,999,999.99 at most. */
const MAX_AMOUNT = new BigNumber("99999999.99")

/** The ten-digit amount field of the barcode (cents, zero-padded) from a decimal string such as "1234.560000". */
export const amountField = (amount: string): BoletoResult<{ readonly field: string }> => {
  if (!DECIMAL.test(amount)) return refuse(`amount "${amount}" must be a non-negative decimal string such as "1234.560000"`)
  const value = new BigNumber(amount)
  if ((value.decimalPlaces() ?? 0) > 2) return refuse(`amount ${amount} is not a whole number of cents`)
  if (value.isGreaterThan(MAX_AMOUNT)) return refuse(`amount ${amount} is over 99999999.99, the most a boleto barcode holds`)
  return { ok: true, field: value.shiftedBy(2).toFixed(0).padStart(10, "0") }
}
