import BigNumber from "bignumber.js"
import { Effect, Schema } from "effect"
import { formatDecimal } from "../money/decimal.js"
import { MAX_GROUPS, type ReportParameters, tooManyGroups } from "./parameters.js"
import { ReportQueries, type SettlementSide } from "./queries.js"
import { defineReport } from "./report.js"

const DEFAULT_BOUNDS = [30, 60, 90]

const Bucket = Schema.Struct({
  key: Schema.String.annotate({ description: "`current` (not yet due), `<from>-<to>` days past due, or `over-<n>`" }),
  from_days: Schema.NullOr(Schema.Int),
  to_days: Schema.NullOr(Schema.Int)
})
type Bucket = typeof Bucket.Type

const Amounts = Schema.Record(Schema.String, Schema.String).annotate({ description: "Open amount per bucket key, six-digit decimal strings" })

/** The buckets of upper bounds `30,60,90`: current, 1-30, 31-60, 61-90, over-90. */
export const agingBuckets = (bounds: ReadonlyArray<number>): ReadonlyArray<Bucket> => [
  { key: "current", from_days: null, to_days: 0 },
  ...bounds.map((bound, index) => {
    const from = index === 0 ? 1 : bounds[index - 1] + 1
    return { key: `${from}-${bound}`, from_days: from, to_days: bound }
  }),
  { key: `over-${bounds[bounds.length - 1]}`, from_days: bounds[bounds.length - 1] + 1, to_days: null }
]

const sides = {
  receivables: { party: "customer_id", parties: "customers", owed: "owed to the tenant by each customer" },
  payables: { party: "supplier_id", parties: "suppliers", owed: "the tenant owes each supplier" }
} as const

/** `{ [key]: value }` typed by its literal key (TypeScript widens a computed key to `string`). */
const keyed = <K extends string, V>(key: K, value: V): Record<K, V> => Object.fromEntries([[key, value]]) as Record<K, V>

const agingReport = <const Side extends SettlementSide>(side: Side) => {
  const { party, parties, owed } = sides[side]
  const Row = Schema.Struct({
    ...keyed(party, Schema.NullOr(Schema.String)),
    name: Schema.NullOr(Schema.String),
    amounts: Amounts,
    total: Schema.String,
    count: Schema.Int
  })
  const Answer = Schema.Struct({
    as_of: Schema.String,
    buckets: Schema.Array(Bucket),
    rows: Schema.Array(Row),
    totals: Schema.Struct({ amounts: Amounts, total: Schema.String, count: Schema.Int })
  }).annotate({ identifier: side === "receivables" ? "ReceivablesAging" : "PayablesAging" })
  const parameters = {
    as_of: { kind: { type: "date" }, description: "The day past-due days are counted to (default: the tenant's today)" },
    buckets: { kind: { type: "days" }, description: "Upper bounds of the past-due buckets in days, rising, comma-separated (default 30,60,90)" },
    financial_account_id: { kind: { type: "uuid" }, description: "Only documents expected to move this financial account" },
    financial_category_id: { kind: { type: "uuid" }, description: "Only documents of this financial category" },
    ...keyed(party, { kind: { type: "uuid" }, description: `Only this ${party === "customer_id" ? "customer" : "supplier"}'s documents` })
  } satisfies ReportParameters
  return defineReport({
    name: `${side}-aging`,
    title: side === "receivables" ? "Receivables aging" : "Payables aging",
    description:
      `What is ${owed}, by how long past due on as_of: open amount (amount − discount_amount + surcharge_amount less its ` +
      "allocations) of every pending, overdue or partial document; paid, cancelled and deleted ones are left out. " +
      "Days past due = as_of − due_date; not yet due is current. Rows by total, largest first.",
    parameters,
    answer: Answer,
    run: ({ tenantId, today, values }) =>
      Effect.gen(function* () {
        const asOf = values.as_of ?? today
        const bounds = values.buckets ? values.buckets.split(",").map(Number) : DEFAULT_BOUNDS
        const buckets = agingBuckets(bounds)
        const queries = yield* ReportQueries
        const found = yield* queries.aging({
            tenantId,
            side,
            asOf,
            starts: buckets.slice(1).map((bucket) => bucket.from_days ?? 0),
            accountId: values.financial_account_id,
            categoryId: values.financial_category_id,
            partyId: values[party],
            limit: MAX_GROUPS + 1
          })
        if (found.length > MAX_GROUPS) return yield* Effect.fail(tooManyGroups(party, MAX_GROUPS, parties))
        const zero = () => Object.fromEntries(buckets.map((bucket) => [bucket.key, new BigNumber(0)]))
        const totals = zero()
        let count = 0
        const rows = found.map((found) => {
          const sums = zero()
          for (const { bucket, amount } of found.amounts) {
            const key = buckets[bucket].key
            sums[key] = sums[key].plus(amount)
            totals[key] = totals[key].plus(amount)
          }
          count += found.count
          return {
            ...keyed(party, found.party_id),
            name: found.name,
            amounts: formatted(sums),
            total: formatDecimal(sumOf(sums)),
            count: found.count
          }
        })
        return {
          as_of: asOf,
          buckets,
          rows,
          totals: { amounts: formatted(totals), total: formatDecimal(sumOf(totals)), count }
        }
      }),
    table: (answer) => ({
      columns: [party, "name", ...answer.buckets.map((bucket) => bucket.key), "total", "count"],
      rows: [
        ...answer.rows.map((row) => [row[party], row.name, ...answer.buckets.map((bucket) => row.amounts[bucket.key]), row.total, row.count]),
        ["total", null, ...answer.buckets.map((bucket) => answer.totals.amounts[bucket.key]), answer.totals.total, answer.totals.count]
      ]
    })
  })
}

const formatted = (sums: Readonly<Record<string, BigNumber>>) => Object.fromEntries(Object.entries(sums).map(([key, sum]) => [key, formatDecimal(sum)]))
const sumOf = (sums: Readonly<Record<string, BigNumber>>) => Object.values(sums).reduce((total, sum) => total.plus(sum), new BigNumber(0))

export const receivablesAging = agingReport("receivables")
export const payablesAging = agingReport("payables")
