import { describe, expect, it } from "vitest"
import { parseTimestamp } from "../src/store/types.js"

/** What the drivers answered before the fast path: the pattern, `new Date`, `toISOString`. */
const reference = (text: string): string => {
  const match = /^(\d{4,}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2}(?:\.\d+)?)(?:([+-])(\d{2})(?::?(\d{2}))?(?::?(\d{2}))?)?$/.exec(text)
  if (!match) return text
  const [, date, time, sign, hh, mm = "00"] = match
  const parsed = new Date(`${date}T${time}${sign ? `${sign}${hh}:${mm}` : "Z"}`)
  return Number.isNaN(parsed.getTime()) ? text : parsed.toISOString()
}

describe("parseTimestamp (PostgreSQL text → ISO 8601 UTC)", () => {
  it.each([
    ["2024-05-01 13:45:07+00", "2024-05-01T13:45:07.000Z"],
    ["2024-05-01 13:45:07.1+00", "2024-05-01T13:45:07.100Z"],
    ["2024-05-01 13:45:07.12+00", "2024-05-01T13:45:07.120Z"],
    ["2024-05-01 13:45:07.123+00", "2024-05-01T13:45:07.123Z"],
    ["2024-05-01 13:45:07.123999+00", "2024-05-01T13:45:07.123Z"],
    ["2024-05-01 13:45:07.5", "2024-05-01T13:45:07.500Z"],
    ["2024-05-01 13:45:07", "2024-05-01T13:45:07.000Z"],
    ["2024-05-01T13:45:07+00:00", "2024-05-01T13:45:07.000Z"],
    ["2024-05-01 00:30:00+05:30", "2024-04-30T19:00:00.000Z"],
    ["2024-12-31 22:00:00-03", "2025-01-01T01:00:00.000Z"],
    ["2024-02-29 23:59:59.999+00", "2024-02-29T23:59:59.999Z"],
    ["0001-01-01 00:00:00+00", "0001-01-01T00:00:00.000Z"],
    ["0999-06-15 12:00:00+00", "0999-06-15T12:00:00.000Z"],
    ["9999-12-31 23:59:59.999999+00", "9999-12-31T23:59:59.999Z"],
    ["infinity", "infinity"],
    ["-infinity", "-infinity"],
    ["2000-01-01 00:00:00+00 BC", "2000-01-01 00:00:00+00 BC"],
    ["0044-03-15 12:00:00+00 BC", "0044-03-15 12:00:00+00 BC"],
    ["12345-01-01 00:00:00+00", "12345-01-01 00:00:00+00"]
  ])("%s → %s", (text, iso) => {
    expect(parseTimestamp(text)).toBe(iso)
    expect(parseTimestamp(text)).toBe(reference(text))
  })

  it("answers what the general path answers for every spelling and range it may meet", () => {
    const pad = (value: number, width: number) => String(value).padStart(width, "0")
    const offsets = ["", "+00", "-00", "+00:00", "+0000", "+00:00:00", "+01", "-03", "+05:30", "-09:30", "+05:53:28", "+14", "-12"]
    const fractions = ["", ".0", ".9", ".05", ".999", ".1234", ".999999", "."]
    let seed = 16
    const random = (below: number) => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648
      return seed % below
    }
    for (let index = 0; index < 20_000; index++) {
      // Now and then a field out of range (day 31 of April, hour 24, second 60) or a malformed separator.
      const year = [random(10_000), 1970 + random(100), 2000, 1900, 2100, 0][random(6)]
      const month = 1 + random(index % 50 === 0 ? 13 : 12)
      const day = 1 + random(index % 7 === 0 ? 31 : 28)
      const time = `${pad(random(index % 40 === 0 ? 25 : 24), 2)}:${pad(random(60), 2)}:${pad(random(index % 30 === 0 ? 61 : 60), 2)}`
      const separator = index % 97 === 0 ? "x" : random(5) === 0 ? "T" : " "
      const text = `${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}${separator}${time}${fractions[random(fractions.length)]}${offsets[random(offsets.length)]}`
      expect(parseTimestamp(text), text).toBe(reference(text))
    }
  })
})
