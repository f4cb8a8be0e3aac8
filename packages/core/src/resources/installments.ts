import BigNumber from "bignumber.js"
import { Schema } from "effect"
import { decimal, formatDecimal } from "../money/decimal.js"
import { DateString, WholeNumber } from "./common.js"

/** The most installments one request creates. */
export const MAX_INSTALLMENTS = 120

/** The highest installment number or count a record may carry (a plan made elsewhere may be longer than ours). */
export const MAX_INSTALLMENT_POSITION = 999

export const InstallmentPosition = WholeNumber.check(
  Schema.isBetween({ minimum: 1, maximum: MAX_INSTALLMENT_POSITION }, { message: `must be a whole number from 1 to ${MAX_INSTALLMENT_POSITION}` })
)

const Count = WholeNumber.check(Schema.isBetween({ minimum: 1, maximum: MAX_INSTALLMENTS }, { message: `must be a whole number from 1 to ${MAX_INSTALLMENTS}` }))

/**
 * `installments` on a create: the amount split into `count` records due every
 * `interval_days` or every `interval_months` from `first_due_date`.
 */
export const InstallmentPlan = Schema.Struct({
  count: Count.annotate({ description: `How many installments (1 to ${MAX_INSTALLMENTS})` }),
  first_due_date: DateString.annotate({ description: "Due date of the first installment (YYYY-MM-DD)" }),
  interval_days: Schema.optionalKey(WholeNumber.check(Schema.isBetween({ minimum: 1, maximum: 366 }, { message: "must be a whole number from 1 to 366" })).annotate({
    description: "Days between due dates (send this or interval_months)"
  })),
  interval_months: Schema.optionalKey(WholeNumber.check(Schema.isBetween({ minimum: 1, maximum: 12 }, { message: "must be a whole number from 1 to 12" })).annotate({
    description: "Months between due dates, the day kept or moved to the month's last day (send this or interval_days)"
  }))
}).annotate({ identifier: "InstallmentPlan", description: "Creates the whole group: the amounts split to the cent, the remainder on the last one." })
export type InstallmentPlan = typeof InstallmentPlan.Type

/** `total` in `count` parts to the cent, the remainder (cents and any sub-cent digits) on the last part. */
export const splitToCents = (total: BigNumber.Value, count: number): ReadonlyArray<string> => {
  const whole = decimal(total)
  const part = whole.dividedBy(count).decimalPlaces(2, BigNumber.ROUND_DOWN)
  const last = whole.minus(part.times(count - 1))
  return [...Array.from({ length: count - 1 }, () => formatDecimal(part)), formatDecimal(last)]
}

const pad = (value: number) => String(value).padStart(2, "0")

const parts = (date: string) => date.split("-").map(Number) as [number, number, number]

/** `date` plus `days`. */
export const addDays = (date: string, days: number): string => {
  const [year, month, day] = parts(date)
  const moved = new Date(Date.UTC(year, month - 1, day + days))
  return `${moved.getUTCFullYear()}-${pad(moved.getUTCMonth() + 1)}-${pad(moved.getUTCDate())}`
}

/** `date` plus `months`, on the same day or the month's last when it is shorter (Jan 31 + 1 month = Feb 28 or 29). */
export const addMonths = (date: string, months: number): string => {
  const [year, month, day] = parts(date)
  const index = year * 12 + (month - 1) + months
  const targetYear = Math.floor(index / 12)
  const targetMonth = (index % 12) + 1
  const lastDay = new Date(Date.UTC(targetYear, targetMonth, 0)).getUTCDate()
  return `${targetYear}-${pad(targetMonth)}-${pad(Math.min(day, lastDay))}`
}

/** The due date of each installment. */
export const dueDates = (plan: InstallmentPlan): ReadonlyArray<string> =>
  Array.from({ length: plan.count }, (_, index) =>
    plan.interval_months !== undefined ? addMonths(plan.first_due_date, plan.interval_months * index) : addDays(plan.first_due_date, (plan.interval_days ?? 0) * index))

/** A plan must name exactly one interval (unless it has a single installment). */
export const planProblem = (plan: InstallmentPlan): string | undefined => {
  const both = plan.interval_days !== undefined && plan.interval_months !== undefined
  const neither = plan.interval_days === undefined && plan.interval_months === undefined
  if (both) return "send interval_days or interval_months, not both"
  if (neither && plan.count > 1) return "needs interval_days or interval_months"
  return undefined
}
