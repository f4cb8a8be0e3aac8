import BigNumber from "bignumber.js"
import { Effect, Schema, SchemaIssue, SchemaTransformation } from "effect"

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

/** A decimal string as clients write it, checked and brought to six fractional digits on decoding; `docs` describe its encoded side (OpenAPI, MCP). */
const decimalFrom = (allowNegative: boolean, docs: { readonly identifier: string; readonly description: string }) =>
  Schema.String.annotate({ ...docs, examples: ["10.500000"] }).pipe(
    Schema.decodeTo(
      Schema.String,
      SchemaTransformation.transformEffect({
        decode: (text: string) => {
          const parsed = parseDecimal(text)
          if (!parsed.ok) return Effect.fail(new SchemaIssue.InvalidValue({ message: parsed.reason }, text))
          if (!allowNegative && parsed.value.startsWith("-")) return Effect.fail(new SchemaIssue.InvalidValue({ message: "must not be negative" }, text))
          return Effect.succeed(parsed.value)
        },
        encode: (value: string) => Effect.succeed(value)
      })
    )
  )

/** A decimal string, normalised to six fractional digits ("10.5" becomes "10.500000"). */
export const Decimal = decimalFrom(true, {
  identifier: "Decimal",
  description: "Decimal number as a string with up to six fractional digits; answered with exactly six."
})

/** A decimal string that must be zero or more. */
export const NonNegativeDecimal = decimalFrom(false, {
  identifier: "NonNegativeDecimal",
  description: "Non-negative decimal number as a string with up to six fractional digits; answered with exactly six."
})
