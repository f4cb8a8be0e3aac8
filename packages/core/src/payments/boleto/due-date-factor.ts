import { refuse, type BoletoResult } from "./result.js"

const DAY_MS = 86_400_000
const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/

/** Factor 0 is 1997-10-07 (FEBRABAN's base date); factor 9999 falls on 2025-02-21. */
const BASE = Date.UTC(1997, 9, 7)
/** FEBRABAN restarts the factor at 1000 on 2025-02-22, the day after it reaches 9999. */
const RESTART = Date.UTC(2025, 1, 22)
/** After the restart the factor runs 1000 to 9999, so it starts again every 9000 days. */
const CYCLE_DAYS = 9000

/** Milliseconds since the epoch of a real calendar date written `YYYY-MM-DD`, or undefined. */
export const parseIsoDate = (text: string): number | undefined => {
  const match = ISO_DATE.exec(text)
  if (!match) return undefined
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])]
  const time = Date.UTC(year, month - 1, day)
  const date = new Date(time)
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day ? time : undefined
}

/**
 * The four-digit "fator de vencimento" of a due date: days since 1997-10-07 up to
 * 2025-02-21 (9999), then 1000 + days since 2025-02-22, cycling every 9000 days.
 * Factor 0000 means "no due date", so the base date itself is refused with the dates before it.
 */
export const dueDateFactor = (dueDate: string): BoletoResult<{ readonly factor: string }> => {
  const time = parseIsoDate(dueDate)
  if (time === undefined) return refuse(`due date "${dueDate}" must be a calendar date written YYYY-MM-DD`)
  if (time <= BASE) return refuse(`due date ${dueDate} is not after 1997-10-07, where the FEBRABAN due-date factor starts`)
  const factor = time < RESTART
    ? Math.round((time - BASE) / DAY_MS)
    : 1000 + (Math.round((time - RESTART) / DAY_MS) % CYCLE_DAYS)
  return { ok: true, factor: String(factor).padStart(4, "0") }
}
