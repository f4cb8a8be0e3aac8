import type { Interval } from "./queries.js"

/** Calendar arithmetic on `YYYY-MM-DD` dates, in UTC so no time zone moves a day. */
const parse = (date: string) => new Date(`${date}T00:00:00Z`)
const format = (date: Date) => date.toISOString().slice(0, 10)

export const addDays = (date: string, days: number): string => {
  const day = parse(date)
  day.setUTCDate(day.getUTCDate() + days)
  return format(day)
}

/** The start of the period after the one holding `date`: the next day, Monday, or first of the month. */
const nextStart = (date: string, interval: Interval): string => {
  const day = parse(date)
  if (interval === "day") return addDays(date, 1)
  if (interval === "week") return addDays(date, 7 - ((day.getUTCDay() + 6) % 7))
  return format(new Date(Date.UTC(day.getUTCFullYear(), day.getUTCMonth() + 1, 1)))
}

/**
 * The periods from `from` to `to`: calendar days, weeks (Monday to Sunday) or months, the first
 * starting on `from` and the last ending on `to`, as the store's `date_trunc` groups them.
 */
export const periodsOf = (from: string, to: string, interval: Interval): ReadonlyArray<{ readonly start: string; readonly end: string }> => {
  const periods: Array<{ start: string; end: string }> = []
  for (let start = from; start <= to; start = nextStart(start, interval)) {
    const next = nextStart(start, interval)
    periods.push({ start, end: next <= to ? addDays(next, -1) : to })
  }
  return periods
}
