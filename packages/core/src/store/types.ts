import pg from "pg"

/**
 * Both drivers return the same JavaScript values for the same SQL: dates as
 * `YYYY-MM-DD`, timestamps as ISO 8601 UTC strings, numerics as strings
 * (never floats), bigints as numbers.
 */
const TIMESTAMP_TEXT = /^(\d{4,}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2}(?:\.\d+)?)(?:([+-])(\d{2})(?::?(\d{2}))?(?::?(\d{2}))?)?$/

/** The general case: any offset, any spelling the pattern admits (what the fast path leaves). */
const parseTimestampSlowly = (text: string): string => {
  const match = TIMESTAMP_TEXT.exec(text)
  if (!match) return text
  const [, date, time, sign, hh, mm = "00"] = match
  const offset = sign ? `${sign}${hh}:${mm}` : "Z"
  const parsed = new Date(`${date}T${time}${offset}`)
  return Number.isNaN(parsed.getTime()) ? text : parsed.toISOString()
}

const isDigit = (text: string, at: number) => {
  const code = text.charCodeAt(at)
  return code >= 48 && code <= 57
}

/** Two digits at `at` as a number. */
const twoDigits = (text: string, at: number) => (text.charCodeAt(at) - 48) * 10 + text.charCodeAt(at + 1) - 48

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
const daysIn = (month: number, year: number) =>
  month === 2 && year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : DAYS_IN_MONTH[month - 1]

const MILLIS_PADDING = ["000", "00", "0", ""]

/**
 * A timestamp as PostgreSQL prints it (`2024-05-01 13:45:07.123456+00`) to ISO 8601 in UTC
 * (`2024-05-01T13:45:07.123Z`), exactly as `new Date(…).toISOString()` would. It runs for every
 * timestamp of every row, so the common case — a four-digit year in a UTC session, or a
 * timestamp without zone — is rewritten character by character (fractions are truncated to
 * milliseconds, as `Date` does); other offsets, other years, `infinity` and BC dates take the
 * general path.
 */
export const parseTimestamp = (text: string): string => {
  const length = text.length
  if (length < 19) return parseTimestampSlowly(text)
  const separator = text.charCodeAt(10)
  if (
    !isDigit(text, 0) || !isDigit(text, 1) || !isDigit(text, 2) || !isDigit(text, 3) || text.charCodeAt(4) !== 45 ||
    !isDigit(text, 5) || !isDigit(text, 6) || text.charCodeAt(7) !== 45 || !isDigit(text, 8) || !isDigit(text, 9) ||
    (separator !== 32 && separator !== 84) ||
    !isDigit(text, 11) || !isDigit(text, 12) || text.charCodeAt(13) !== 58 || !isDigit(text, 14) || !isDigit(text, 15) ||
    text.charCodeAt(16) !== 58 || !isDigit(text, 17) || !isDigit(text, 18)
  ) return parseTimestampSlowly(text)
  const month = twoDigits(text, 5)
  const day = twoDigits(text, 8)
  // Out-of-range fields are what `Date` would roll over or refuse: left to it.
  if (month < 1 || month > 12 || day < 1 || day > daysIn(month, twoDigits(text, 0) * 100 + twoDigits(text, 2))) return parseTimestampSlowly(text)
  if (twoDigits(text, 11) > 23 || twoDigits(text, 14) > 59 || twoDigits(text, 17) > 59) return parseTimestampSlowly(text)
  let at = 19
  let millis = ".000"
  if (at < length && text.charCodeAt(at) === 46) {
    at++
    const start = at
    while (at < length && isDigit(text, at)) at++
    const digits = at - start
    if (digits === 0) return parseTimestampSlowly(text)
    millis = digits >= 3 ? `.${text.slice(start, start + 3)}` : `.${text.slice(start, at)}${MILLIS_PADDING[digits]}`
  }
  // No zone (`timestamp`), or UTC as PostgreSQL prints it (`+00`, with `:00` parts in some spellings).
  const zone = at === length ? "" : text.slice(at)
  if (zone !== "" && zone !== "+00" && zone !== "+00:00" && zone !== "+0000" && zone !== "+00:00:00" && zone !== "-00") return parseTimestampSlowly(text)
  return `${text.slice(0, 10)}T${text.slice(11, 19)}${millis}Z`
}

export const identity = (text: string): string => text

/** PostgreSQL type OIDs whose text form we keep or normalise ourselves. */
export const OID = {
  int8: 20,
  date: 1082,
  timestamp: 1114,
  timestamptz: 1184,
  numeric: 1700
} as const

export const textParsers: Record<number, (text: string) => unknown> = {
  [OID.int8]: (text) => Number(text),
  [OID.date]: identity,
  [OID.timestamp]: parseTimestamp,
  [OID.timestamptz]: parseTimestamp,
  [OID.numeric]: identity
}

/** node-postgres with our parsers first: the same values over a server or the embedded store's socket. */
export const pgTypeParser = ((oid: number, format?: string) =>
  textParsers[oid] ?? pg.types.getTypeParser(oid, format as "text")) as typeof pg.types.getTypeParser
