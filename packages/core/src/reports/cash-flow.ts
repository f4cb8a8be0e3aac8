import BigNumber from "bignumber.js"
import { Effect, Schema } from "effect"
import { formatDecimal } from "../money/decimal.js"
import { periodsOf } from "./calendar.js"
import { PERIOD_PARAMETERS, readPeriod, type ReportParameters } from "./parameters.js"
import { type Interval, type PeriodFlow, ReportQueries } from "./queries.js"
import { defineReport } from "./report.js"

const INTERVALS: ReadonlyArray<Interval> = ["day", "week", "month"]

const Period = Schema.Struct({
  start: Schema.String,
  end: Schema.String,
  opening: Schema.String,
  realized_in: Schema.String,
  realized_out: Schema.String,
  projected_in: Schema.String,
  projected_out: Schema.String,
  closing: Schema.String
})

const CashFlow = Schema.Struct({
  from: Schema.String,
  to: Schema.String,
  interval: Schema.Literals(INTERVALS),
  periods: Schema.Array(Period)
}).annotate({ identifier: "CashFlow" })

const parameters = {
  ...PERIOD_PARAMETERS,
  interval: { kind: { type: "choice", values: INTERVALS }, description: "Periods of a day, a week (Monday to Sunday) or a month (default month)" },
  financial_account_id: { kind: { type: "uuid" }, description: "One financial account (default: all of them)" }
} satisfies ReportParameters

const byStart = (flows: ReadonlyArray<PeriodFlow>) => new Map(flows.map((flow) => [flow.start, flow]))

export const cashFlow = defineReport({
  name: "cash-flow",
  title: "Cash flow",
  description:
    "Money in and out per period. Realized: financial transactions posted in the period (deleted and ignored ones left out), " +
    "realized_out a positive sum. Projected: open amounts of pending, overdue and partial receivables (in) and payables (out) " +
    "due in the period, an overdue one in the first period. The first opening is the accounts' initial balances plus every " +
    "transaction before from; closing = opening + realized_in − realized_out + projected_in − projected_out, and each " +
    "period opens with the previous closing.",
  parameters,
  answer: CashFlow,
  run: ({ tenantId, today, values }) =>
    Effect.gen(function* () {
      const { from, to } = yield* Effect.fromResult(readPeriod(values, today))
      const interval = values.interval === "day" || values.interval === "week" ? values.interval : "month"
      const queries = yield* ReportQueries
      const figures = yield* queries.cashFlow({ tenantId, from, to, interval, accountId: values.financial_account_id })
      const realized = byStart(figures.realized)
      const projected = byStart(figures.projected)
      let balance = new BigNumber(figures.opening)
      const periods = periodsOf(from, to, interval).map(({ start, end }) => {
        const opening = balance
        const moved = realized.get(start)
        const expected = projected.get(start)
        const inflow = new BigNumber(moved?.in ?? 0)
        const outflow = new BigNumber(moved?.out ?? 0)
        const projectedIn = new BigNumber(expected?.in ?? 0)
        const projectedOut = new BigNumber(expected?.out ?? 0)
        balance = opening.plus(inflow).minus(outflow).plus(projectedIn).minus(projectedOut)
        return {
          start,
          end,
          opening: formatDecimal(opening),
          realized_in: formatDecimal(inflow),
          realized_out: formatDecimal(outflow),
          projected_in: formatDecimal(projectedIn),
          projected_out: formatDecimal(projectedOut),
          closing: formatDecimal(balance)
        }
      })
      return { from, to, interval, periods }
    }),
  table: (answer) => ({
    columns: ["start", "end", "opening", "realized_in", "realized_out", "projected_in", "projected_out", "closing"],
    rows: answer.periods.map((period) => [period.start, period.end, period.opening, period.realized_in, period.realized_out, period.projected_in, period.projected_out, period.closing])
  })
})

