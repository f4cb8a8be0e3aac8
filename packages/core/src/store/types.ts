import pg from "pg"

/**
 * Both drivers return the same JavaScript values for the same SQL: dates as
 * `YYYY-MM-DD`, timestamps as ISO 8601 UTC strings, numerics as strings
 * (never floats), bigints as numbers.
 */
const TIMESTAMP_TEXT = /^(\d{4,}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2}(?:\.\d+)?)(?:([+-])(\d{2})(?::?(\d{2}))?(?::?(\d{2}))?)?$/

export const parseTimestamp = (text: string): string => {
  const match = TIMESTAMP_TEXT.exec(text)
  if (!match) return text
  const [, date, time, sign, hh, mm = "00"] = match
  const offset = sign ? `${sign}${hh}:${mm}` : "Z"
  const parsed = new Date(`${date}T${time}${offset}`)
  return Number.isNaN(parsed.getTime()) ? text : parsed.toISOString()
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
