import { describe, expect, it } from "@effect/vitest"
import { Result, Schema } from "effect"
import { Decimal, NonNegativeDecimal, parseDecimal } from "../src/index.js"

const decode = Schema.decodeUnknownResult(Decimal)

describe("decimal strings", () => {
  it.each([
    ["10", "10.000000"],
    ["10.5", "10.500000"],
    ["-0.000001", "-0.000001"],
    ["+3.25", "3.250000"],
    ["00012.100000", "12.100000"],
    ["99999999999999.999999", "99999999999999.999999"]
  ])("normalises %s to %s", (input, output) => {
    expect(Result.getOrThrow(decode(input))).toBe(output)
  })

  it.each([["abc"], ["1e3"], ["1.2345678"], ["123456789012345"], [""], ["1,5"], [" "], ["0x10"]])("refuses %j", (input) => {
    expect(Result.isFailure(decode(input))).toBe(true)
  })

  it("refuses numbers: amounts travel as strings", () => {
    expect(Result.isFailure(decode(10.5))).toBe(true)
  })

  it("refuses negatives where they make no sense", () => {
    expect(Result.isFailure(Schema.decodeUnknownResult(NonNegativeDecimal)("-1"))).toBe(true)
    expect(Result.getOrThrow(Schema.decodeUnknownResult(NonNegativeDecimal)("0"))).toBe("0.000000")
  })

  it.prop("keeps every value of up to six fractional digits exactly", { units: Schema.BigInt.check(Schema.isBetweenBigInt({ minimum: -(10n ** 20n) + 1n, maximum: 10n ** 20n - 1n })) }, ({ units }) => {
    const negative = units < 0n
    const digits = (negative ? -units : units).toString().padStart(7, "0")
    const text = `${negative ? "-" : ""}${digits.slice(0, -6)}.${digits.slice(-6)}`
    const parsed = parseDecimal(text)
    expect(parsed.ok).toBe(true)
    if (parsed.ok) expect(BigInt(parsed.value.replace(".", ""))).toBe(units)
  })
})
