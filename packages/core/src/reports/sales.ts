import BigNumber from "bignumber.js"
import { Effect, Schema } from "effect"
import { formatDecimal } from "../money/decimal.js"
import { MAX_GROUPS, PERIOD_PARAMETERS, readPeriod, type ReportParameters, tooManyGroups } from "./parameters.js"
import { ReportQueries, type SalesGrouping, type SalesSource } from "./queries.js"
import { defineReport } from "./report.js"

const SOURCES: ReadonlyArray<SalesSource> = ["sales-orders", "invoices"]
const GROUPINGS: ReadonlyArray<SalesGrouping> = ["product", "customer", "salesperson_name", "month"]

const Figures = {
  documents: Schema.Int.annotate({ description: "Documents counted in the group" }),
  quantity: Schema.String,
  subtotal: Schema.String,
  discounts: Schema.String,
  taxes: Schema.NullOr(Schema.String).annotate({ description: "Σ of the items' taxes (invoices; null for sales orders)" }),
  total: Schema.String
}

const Sales = Schema.Struct({
  from: Schema.String,
  to: Schema.String,
  source: Schema.Literals(SOURCES),
  group_by: Schema.Literals(GROUPINGS),
  rows: Schema.Array(Schema.Struct({
    key: Schema.NullOr(Schema.String).annotate({ description: "The product or customer id, the salesperson's name, or the month (YYYY-MM); null for items without a product or documents without a salesperson" }),
    label: Schema.NullOr(Schema.String).annotate({ description: "The product's or customer's name, the salesperson's name, or the month" }),
    ...Figures
  })),
  totals: Schema.Struct(Figures)
}).annotate({ identifier: "SalesReport" })

const parameters = {
  ...PERIOD_PARAMETERS,
  group_by: { kind: { type: "choice", values: GROUPINGS }, description: "product, customer (default), salesperson_name or month" },
  source: { kind: { type: "choice", values: SOURCES }, description: "sales-orders (default: confirmed and fulfilled, by order date) or invoices (issued, by invoice date)" }
} satisfies ReportParameters

const FIGURES = ["quantity", "subtotal", "discounts", "total"] as const

export const sales = defineReport({
  name: "sales",
  title: "Sales",
  description:
    "Sales per product, customer, salesperson or month: quantity, subtotal, discounts, taxes (invoices) and total, and the totals. " +
    "Sales orders count when confirmed or fulfilled, by order date (the day they were created when they have none); invoices " +
    "when issued, by invoice date; deleted ones never. By product, figures are the items' own: quantity × unit price, the item's " +
    "discount and its taxes (a document's header discount is not spread over its items); otherwise the documents' totals.",
  parameters,
  answer: Sales,
  run: ({ tenantId, today, values }) =>
    Effect.gen(function* () {
      const { from, to } = yield* Effect.fromResult(readPeriod(values, today))
      const source = values.source === "invoices" ? "invoices" : "sales-orders"
      const groupBy = GROUPINGS.find((grouping) => grouping === values.group_by) ?? "customer"
      const queries = yield* ReportQueries
      const { groups, documents } = yield* queries.sales({ tenantId, from, to, source, groupBy, limit: MAX_GROUPS + 1 })
      if (groups.length > MAX_GROUPS) return yield* Effect.fail(tooManyGroups("group_by", MAX_GROUPS, "groups"))
      const sums = Object.fromEntries(FIGURES.map((figure) => [figure, new BigNumber(0)]))
      let taxes = new BigNumber(0)
      const rows = groups.map((group) => {
        for (const figure of FIGURES) sums[figure] = sums[figure].plus(group[figure])
        taxes = taxes.plus(group.taxes)
        return {
          key: group.key,
          label: group.label,
          documents: group.documents,
          quantity: group.quantity,
          subtotal: group.subtotal,
          discounts: group.discounts,
          taxes: source === "invoices" ? group.taxes : null,
          total: group.total
        }
      })
      return {
        from,
        to,
        source,
        group_by: groupBy,
        rows,
        totals: {
          // A document in several product groups counts once.
          documents,
          quantity: formatDecimal(sums.quantity),
          subtotal: formatDecimal(sums.subtotal),
          discounts: formatDecimal(sums.discounts),
          taxes: source === "invoices" ? formatDecimal(taxes) : null,
          total: formatDecimal(sums.total)
        }
      }
    }),
  table: (answer) => ({
    columns: ["key", "label", "documents", "quantity", "subtotal", "discounts", "taxes", "total"],
    rows: [
      ...answer.rows.map((row) => [row.key, row.label, row.documents, row.quantity, row.subtotal, row.discounts, row.taxes, row.total]),
      ["total", null, answer.totals.documents, answer.totals.quantity, answer.totals.subtotal, answer.totals.discounts, answer.totals.taxes, answer.totals.total]
    ]
  })
})
