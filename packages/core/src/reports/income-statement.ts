import BigNumber from "bignumber.js"
import { Effect, Schema } from "effect"
import { formatDecimal } from "../money/decimal.js"
import { MAX_GROUPS, PERIOD_PARAMETERS, readPeriod, type ReportParameters, tooManyGroups } from "./parameters.js"
import { type Basis, type CategoryAmount, type CategoryNode, ReportQueries } from "./queries.js"
import { defineReport } from "./report.js"

const BASES: ReadonlyArray<Basis> = ["accrual", "cash"]

const Line = Schema.Struct({
  financial_category_id: Schema.NullOr(Schema.String).annotate({ description: "null: documents without a category" }),
  parent_id: Schema.NullOr(Schema.String),
  name: Schema.String,
  code: Schema.NullOr(Schema.String),
  level: Schema.Int.annotate({ description: "0 for a top-level category" }),
  amount: Schema.String.annotate({ description: "This category's own documents" }),
  subtotal: Schema.String.annotate({ description: "This category and every category under it" })
})
type Line = typeof Line.Type

const Section = Schema.Struct({
  total: Schema.String,
  lines: Schema.Array(Line).annotate({ description: "Categories depth first, each parent before its children" })
})
type Section = typeof Section.Type

const IncomeStatement = Schema.Struct({
  from: Schema.String,
  to: Schema.String,
  basis: Schema.Literals(BASES),
  revenue: Section,
  expenses: Section,
  result: Schema.String.annotate({ description: "revenue.total − expenses.total" })
}).annotate({ identifier: "IncomeStatement" })

const parameters = {
  ...PERIOD_PARAMETERS,
  basis: {
    kind: { type: "choice", values: BASES },
    description: "accrual (default): receivables and payables by issue date (due date when none); cash: their allocations, by the posting date of the transaction"
  }
} satisfies ReportParameters

const UNCATEGORIZED = "Uncategorized"

/** One side's lines: each category with an amount, under its ancestors, with subtotals. */
const sectionOf = (amounts: ReadonlyArray<CategoryAmount>, categories: ReadonlyMap<string, CategoryNode>): Section => {
  const own = new Map<string | null, BigNumber>()
  for (const { category_id, amount } of amounts) own.set(category_id, (own.get(category_id) ?? new BigNumber(0)).plus(amount))
  const children = new Map<string | null, Array<CategoryNode>>()
  const included = new Set<string>()
  for (const id of own.keys()) {
    // A category and its ancestors; a missing parent (deleted) makes it top level.
    for (let at = id === null ? undefined : categories.get(id); at && !included.has(at.id); at = at.parent_id ? categories.get(at.parent_id) : undefined) {
      included.add(at.id)
      const parent = at.parent_id && categories.has(at.parent_id) ? at.parent_id : null
      children.set(parent, [...(children.get(parent) ?? []), at])
    }
  }
  const lines: Array<Line> = []
  const visit = (node: CategoryNode, parent: string | null, level: number): BigNumber => {
    const at = lines.length
    lines.push({ financial_category_id: node.id, parent_id: parent, name: node.name, code: node.code, level, amount: "", subtotal: "" })
    const mine = own.get(node.id) ?? new BigNumber(0)
    const subtotal = ordered(children.get(node.id)).reduce((sum, child) => sum.plus(visit(child, node.id, level + 1)), mine)
    lines[at] = { ...lines[at], amount: formatDecimal(mine), subtotal: formatDecimal(subtotal) }
    return subtotal
  }
  let total = ordered(children.get(null)).reduce((sum, root) => sum.plus(visit(root, null, 0)), new BigNumber(0))
  const uncategorized = own.get(null)
  if (uncategorized) {
    lines.push({ financial_category_id: null, parent_id: null, name: UNCATEGORIZED, code: null, level: 0, amount: formatDecimal(uncategorized), subtotal: formatDecimal(uncategorized) })
    total = total.plus(uncategorized)
  }
  return { total: formatDecimal(total), lines }
}

const ordered = (nodes: ReadonlyArray<CategoryNode> | undefined) =>
  [...(nodes ?? [])].sort((a, b) => a.position - b.position || a.name.localeCompare(b.name) || a.id.localeCompare(b.id))

export const incomeStatement = defineReport({
  name: "income-statement",
  title: "Income statement",
  description:
    "Revenue (receivables) and expenses (payables) by financial category, each category with its own amount and the subtotal " +
    "of everything under it, and the result. Accrual basis: what settles each document (amount − discount_amount + surcharge_amount) " +
    "by its issue date (its due date when it has none), cancelled and deleted ones left out. Cash basis: allocations, by the " +
    "posting date of the transaction that settled them.",
  parameters,
  answer: IncomeStatement,
  run: ({ tenantId, today, values }) =>
    Effect.gen(function* () {
      const { from, to } = yield* Effect.fromResult(readPeriod(values, today))
      const basis = values.basis === "cash" ? "cash" : "accrual"
      const queries = yield* ReportQueries
      const figures = yield* queries.income({ tenantId, from, to, basis })
      if (figures.categories.length > MAX_GROUPS) return yield* Effect.fail(tooManyGroups("to", MAX_GROUPS, "categories"))
      const categories = new Map(figures.categories.map((category) => [category.id, category]))
      const revenue = sectionOf(figures.amounts.filter((amount) => amount.side === "revenue"), categories)
      const expenses = sectionOf(figures.amounts.filter((amount) => amount.side === "expenses"), categories)
      return { from, to, basis, revenue, expenses, result: formatDecimal(new BigNumber(revenue.total).minus(expenses.total)) }
    }),
  table: (answer) => ({
    columns: ["section", "financial_category_id", "parent_id", "code", "name", "level", "amount", "subtotal"],
    rows: [
      ...(["revenue", "expenses"] as const).flatMap((section) => [
        ...answer[section].lines.map((line) => [section, line.financial_category_id, line.parent_id, line.code, line.name, line.level, line.amount, line.subtotal]),
        [section, null, null, null, "Total", null, null, answer[section].total]
      ]),
      ["result", null, null, null, "Result", null, null, answer.result]
    ]
  })
})
