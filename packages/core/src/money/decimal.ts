import BigNumber from "bignumber.js"
import { ParseResult, Schema } from "effect"

/** Every amount, quantity and rate carries six fractional digits. */
export const SCALE = 6
/** numeric(20, 6): fourteen integer digits. */
const MAX_INTEGER_DIGITS = 14

const Decimal6 = BigNumber.clone({ DECIMAL_PLACES: SCALE, ROUNDING_MODE: BigNumber.ROUND_HALF_EVEN })

const DECIMAL_TEXT = /^[+-]?(\d+)(?:\.(\d+))?$/

/** Parses a decimal string into canonical six-digit form, or explains why it cannot. */
export const parseDecimal = (text: string): { ok: true; value: string } | { ok: false; reason: string } => {
  const match = DECIMAL_TEXT.exec(text.trim())
  if (!match) return { ok: false, reason: "must be a decimal number written as a string, for example \"10.50\"" }
  const [, integer, fraction = ""] = match
  if (fraction.length > SCALE) return { ok: false, reason: `must have at most ${SCALE} fractional digits` }
  if (integer.replace(/^0+/, "").length > MAX_INTEGER_DIGITS) {
    return { ok: false, reason: `must have at most ${MAX_INTEGER_DIGITS} integer digits` }
  }
  return { ok: true, value: new Decimal6(text.trim()).toFixed(SCALE) }
}

export const decimal = (value: BigNumber.Value) => new Decimal6(value)
export const formatDecimal = (value: BigNumber.Value) => new Decimal6(value).toFixed(SCALE)

const decimalFrom = (allowNegative: boolean) =>
  Schema.transformOrFail(Schema.String, Schema.String, {
    strict: true,
    decode: (text, _, ast) => {
      const parsed = parseDecimal(text)
      if (!parsed.ok) return ParseResult.fail(new ParseResult.Type(ast, text, parsed.reason))
      if (!allowNegative && parsed.value.startsWith("-")) {
        return ParseResult.fail(new ParseResult.Type(ast, text, "must not be negative"))
      }
      return ParseResult.succeed(parsed.value)
    },
    encode: (value) => ParseResult.succeed(value)
  })

/** A decimal string, normalised to six fractional digits ("10.5" becomes "10.500000"). */
export const Decimal = decimalFrom(true).annotations({
  identifier: "Decimal",
  description: "Decimal number as a string with up to six fractional digits; answered with exactly six.",
  examples: ["10.500000"]
})

/** A decimal string that must be zero or more. */
export const NonNegativeDecimal = decimalFrom(false).annotations({
  identifier: "NonNegativeDecimal",
  description: "Non-negative decimal number as a string with up to six fractional digits; answered with exactly six.",
  examples: ["10.500000"]
})
