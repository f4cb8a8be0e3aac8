/**
 * The one check of the dates and datetimes the API takes, wherever they arrive (bodies, list
 * filters, action inputs, CLI options): ISO 8601 text within years 0001 to 9999, and offsets
 * PostgreSQL stores (at most ±15:59). JavaScript's `Date.parse` takes more (extended years,
 * other spellings); the store refuses what falls outside, so nothing outside reaches it.
 */

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/
const DATETIME = /^(\d{4}-\d{2}-\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,6}))?)?(Z|([+-])(\d{2}):?(\d{2}))$/

/** The instants a datetime may name, in UTC milliseconds: 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z. */
/** Midnight UTC of a calendar day, years 0 to 99 included (`Date.UTC` reads those as 1900 to 1999). */
const dayStart = (year: number, month: number, day: number): number => {
  const date = new Date(0)
  date.setUTCFullYear(year, month - 1, day)
  return date.getTime()
}

const FIRST_INSTANT = dayStart(1, 1, 1)
const LAST_INSTANT = dayStart(10000, 1, 1) - 1

/** A real calendar day `YYYY-MM-DD` in years 0001 to 9999. */
export const isValidDate = (text: string): boolean => {
  const match = DATE.exec(text)
  if (!match) return false
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])]
  if (year < 1) return false
  const date = new Date(dayStart(year, month, day))
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day
}

/** What is wrong with an ISO 8601 datetime, or its instant in UTC milliseconds. */
export const parseDatetime = (text: string): { readonly ok: true; readonly millis: number } | { readonly ok: false; readonly reason: string } => {
  const match = DATETIME.exec(text)
  if (!match || !isValidDate(match[1])) return { ok: false, reason: "must be an ISO 8601 datetime with Z or an offset, e.g. 2024-01-15T13:45:00Z" }
  const [hours, minutes, seconds] = [Number(match[2]), Number(match[3]), Number(match[4] ?? "0")]
  if (hours > 23 || minutes > 59 || seconds > 59) return { ok: false, reason: "must be a time of day from 00:00:00 to 23:59:59" }
  const offsetHours = Number(match[8] ?? "0")
  const offsetMinutes = Number(match[9] ?? "0")
  if (offsetHours > 15 || offsetMinutes > 59) return { ok: false, reason: "must have an offset of at most ±15:59" }
  const [year, month, day] = match[1].split("-").map(Number)
  const fraction = Number(`0.${match[5] ?? "0"}`) * 1000
  const offset = (match[7] === "-" ? -1 : 1) * (offsetHours * 60 + offsetMinutes) * 60_000
  const millis = dayStart(year, month, day) + ((hours * 60 + minutes) * 60 + seconds) * 1000 + Math.floor(fraction) - offset
  if (millis < FIRST_INSTANT || millis > LAST_INSTANT) return { ok: false, reason: "must be between 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z" }
  return { ok: true, millis }
}

export const isValidDatetime = (text: string): boolean => parseDatetime(text).ok
