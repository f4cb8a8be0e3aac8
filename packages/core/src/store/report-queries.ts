import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import BigNumber from "bignumber.js"
import { Effect, Layer, Schema } from "effect"
import { formatDecimal } from "../money/decimal.js"
import { type AgingQuery, type CashFlowQuery, type IncomeQuery, ReportQueries, type SalesQuery, type SettlementSide } from "../reports/queries.js"
import { decodeRows, openAmountSql, settlement } from "./settlement-sql.js"

/**
 * The reports' aggregates: each sums in SQL over the tenant's rows (`numeric`, answered as
 * six-digit text) and answers a few rows per group, decoded by their schema. Table and column
 * names come from the fixed maps below, never from a request.
 */

const Amount = Schema.String

const AgingRow = Schema.Struct({ party_id: Schema.NullOr(Schema.String), name: Schema.NullOr(Schema.String), count: Schema.Int, amounts: Schema.String })
const FlowRow = Schema.Struct({ start: Schema.String, inflow: Amount, outflow: Amount })
const CategoryAmountRow = Schema.Struct({ side: Schema.Literals(["revenue", "expenses"]), category_id: Schema.NullOr(Schema.String), amount: Amount })
const CategoryRow = Schema.Struct({ id: Schema.String, name: Schema.String, code: Schema.NullOr(Schema.String), parent_id: Schema.NullOr(Schema.String), position: Schema.Int })
const SalesRow = Schema.Struct({
  key: Schema.NullOr(Schema.String),
  label: Schema.NullOr(Schema.String),
  documents: Schema.Int,
  quantity: Amount,
  subtotal: Amount,
  discounts: Amount,
  taxes: Amount,
  total: Amount
})

const sales = {
  "sales-orders": {
    table: "sales_orders",
    items: "sales_order_items",
    key: "sales_order_id",
    statuses: "('confirmed', 'fulfilled')",
    documentTaxes: "0",
    itemTaxes: "0"
  },
  invoices: {
    table: "invoices",
    items: "invoice_items",
    key: "invoice_id",
    statuses: "('issued')",
    documentTaxes: "d.total_tax",
    itemTaxes: "coalesce((SELECT sum((x.value ->> 'amount')::numeric) FROM jsonb_array_elements(i.taxes) x), 0)"
  }
} as const

const text = (expression: string) => `coalesce(${expression}, 0)::numeric(20, 6)::text`

export const layerReportQueries = Layer.effect(
  ReportQueries,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const agingRows = decodeRows(AgingRow)
    const flowRows = decodeRows(FlowRow)
    const categoryAmounts = decodeRows(CategoryAmountRow)
    const categoryRows = decodeRows(CategoryRow)
    const salesRows = decodeRows(SalesRow)
    const documentCount = (rows: ReadonlyArray<unknown>) => Effect.map(decodeRows(Schema.Struct({ documents: Schema.Int }))(rows), (found) => found[0]?.documents ?? 0)
    /**
     * A statement that joins or groups a large share of the tenant's rows: in a transaction of its
     * own with room to hash in memory, as spilling to disk would take it past seconds.
     */
    const heavy = <A>(statement: Effect.Effect<A, SqlError>) => sql.withTransaction(Effect.andThen(sql`SET LOCAL work_mem = '64MB'`, statement))
    const uuidOrNull = (value: string | undefined) => value ?? null

    const aging = (query: AgingQuery) => {
      const { table, party, parties } = settlement[query.side]
      return sql`WITH open AS (
          SELECT r.${sql.literal(party)} AS party_id, ${sql.literal(openAmountSql(query.side))} AS open,
            width_bucket(${query.asOf}::date - r.due_date, ${`{${query.starts.join(",")}}`}::int[]) AS bucket
          FROM ${sql.literal(table)} r
          WHERE r.tenant_id = ${query.tenantId}::uuid AND r.deleted_at IS NULL AND r.status IN ('pending', 'partial')
            AND (${uuidOrNull(query.accountId)}::uuid IS NULL OR r.financial_account_id = ${uuidOrNull(query.accountId)}::uuid)
            AND (${uuidOrNull(query.categoryId)}::uuid IS NULL OR r.financial_category_id = ${uuidOrNull(query.categoryId)}::uuid)
            AND (${uuidOrNull(query.partyId)}::uuid IS NULL OR r.${sql.literal(party)} = ${uuidOrNull(query.partyId)}::uuid)
        ), buckets AS (
          SELECT party_id, bucket, sum(open) AS amount, count(*) AS count FROM open WHERE open > 0 GROUP BY party_id, bucket
        )
        SELECT b.party_id::text AS party_id, p.legal_name AS name, sum(b.count)::int AS count,
          string_agg(b.bucket || ':' || b.amount::numeric(20, 6)::text, ',' ORDER BY b.bucket) AS amounts
        FROM buckets b LEFT JOIN ${sql.literal(parties)} p ON p.tenant_id = ${query.tenantId}::uuid AND p.id = b.party_id
        GROUP BY b.party_id, p.legal_name
        ORDER BY sum(b.amount) DESC, p.legal_name NULLS LAST, b.party_id NULLS LAST
        LIMIT ${query.limit}`.pipe(
        Effect.orDie,
        Effect.flatMap(agingRows),
        Effect.map((rows) =>
          rows.map((row) => ({
            party_id: row.party_id,
            name: row.name,
            count: row.count,
            amounts: row.amounts.split(",").map((pair) => {
              const [bucket, amount] = pair.split(":")
              return { bucket: Number(bucket), amount }
            })
          })))
      )
    }

    const cashFlow = (query: CashFlowQuery) => {
      const account = uuidOrNull(query.accountId)
      const liveAccount = sql`EXISTS (SELECT 1 FROM financial_accounts fa WHERE fa.tenant_id = x.tenant_id AND fa.id = x.account_id AND fa.deleted_at IS NULL)`
      const periodStart = (column: string) =>
        sql.literal(`to_char(greatest(date_trunc('${query.interval}', ${column}::timestamp)::date, '${query.from}'::date), 'YYYY-MM-DD')`)
      const initial = sql`SELECT ${sql.literal(text("sum(fa.initial_balance)"))} AS amount FROM financial_accounts fa
        WHERE fa.tenant_id = ${query.tenantId}::uuid AND fa.deleted_at IS NULL AND (${account}::uuid IS NULL OR fa.id = ${account}::uuid)`
      const before = sql`SELECT ${sql.literal(text("sum(x.amount)"))} AS amount FROM financial_transactions x
        WHERE x.tenant_id = ${query.tenantId}::uuid AND x.posted_at < ${query.from}::date AND x.deleted_at IS NULL AND x.ignored_at IS NULL
          AND (${account}::uuid IS NULL OR x.account_id = ${account}::uuid) AND ${liveAccount}`
      const realized = sql`SELECT ${periodStart("x.posted_at")} AS start,
          ${sql.literal(text("sum(x.amount) FILTER (WHERE x.amount > 0)"))} AS inflow,
          ${sql.literal(text("-sum(x.amount) FILTER (WHERE x.amount < 0)"))} AS outflow
        FROM financial_transactions x
        WHERE x.tenant_id = ${query.tenantId}::uuid AND x.posted_at BETWEEN ${query.from}::date AND ${query.to}::date
          AND x.deleted_at IS NULL AND x.ignored_at IS NULL AND (${account}::uuid IS NULL OR x.account_id = ${account}::uuid) AND ${liveAccount}
        GROUP BY 1`
      const openDocuments = (side: SettlementSide) => sql`SELECT r.due_date, ${sql.literal(openAmountSql(side))} AS open, ${sql.literal(side === "receivables" ? "1" : "-1")} AS sign
        FROM ${sql.literal(settlement[side].table)} r
        WHERE r.tenant_id = ${query.tenantId}::uuid AND r.deleted_at IS NULL AND r.status IN ('pending', 'partial') AND r.due_date <= ${query.to}::date
          AND (${account}::uuid IS NULL OR r.financial_account_id = ${account}::uuid)`
      const projected = sql`SELECT ${periodStart("d.due_date")} AS start,
          ${sql.literal(text("sum(d.open) FILTER (WHERE d.sign = 1)"))} AS inflow,
          ${sql.literal(text("sum(d.open) FILTER (WHERE d.sign = -1)"))} AS outflow
        FROM (${openDocuments("receivables")} UNION ALL ${openDocuments("payables")}) d
        WHERE d.open > 0
        GROUP BY 1`
      return Effect.all([initial, before, realized, heavy(projected)], { concurrency: 4 }).pipe(
        Effect.orDie,
        Effect.flatMap(([initialRows, beforeRows, realizedRows, projectedRows]) =>
          Effect.all([decodeRows(Schema.Struct({ amount: Amount }))([...initialRows, ...beforeRows]), flowRows(realizedRows), flowRows(projectedRows)])),
        Effect.map(([openings, realizedFlows, projectedFlows]) => ({
          opening: formatDecimal(openings.reduce((sum, row) => sum.plus(row.amount), new BigNumber(0))),
          realized: realizedFlows.map((row) => ({ start: row.start, in: row.inflow, out: row.outflow })),
          projected: projectedFlows.map((row) => ({ start: row.start, in: row.inflow, out: row.outflow }))
        }))
      )
    }

    const income = (query: IncomeQuery) => {
      const accrual = (side: SettlementSide) => sql`SELECT ${sql.literal(side === "receivables" ? "'revenue'" : "'expenses'")} AS side, r.financial_category_id::text AS category_id,
          ${sql.literal(text("sum(r.amount - r.discount_amount + r.surcharge_amount)"))} AS amount
        FROM ${sql.literal(settlement[side].table)} r
        WHERE r.tenant_id = ${query.tenantId}::uuid AND r.deleted_at IS NULL AND r.status <> 'cancelled'
          AND coalesce(r.issue_date, r.due_date) BETWEEN ${query.from}::date AND ${query.to}::date
        GROUP BY r.financial_category_id`
      const cash = (side: SettlementSide) => {
        const { table, allocations, key } = settlement[side]
        return sql`SELECT ${sql.literal(side === "receivables" ? "'revenue'" : "'expenses'")} AS side, r.financial_category_id::text AS category_id,
            ${sql.literal(text("sum(a.allocated_amount)"))} AS amount
          FROM ${sql.literal(allocations)} a
          JOIN ${sql.literal(table)} r ON r.tenant_id = a.tenant_id AND r.id = a.${sql.literal(key)}
          JOIN financial_transactions x ON x.tenant_id = a.tenant_id AND x.id = a.financial_transaction_id
          WHERE a.tenant_id = ${query.tenantId}::uuid AND r.deleted_at IS NULL AND x.posted_at BETWEEN ${query.from}::date AND ${query.to}::date
          GROUP BY r.financial_category_id`
      }
      const part = query.basis === "cash" ? cash : accrual
      const amounts = sql`${part("receivables")} UNION ALL ${part("payables")}`
      // Deleted categories too: a document may still name one.
      const categories = sql`SELECT id::text AS id, name, code, parent_id::text AS parent_id, position FROM financial_categories
        WHERE tenant_id = ${query.tenantId}::uuid ORDER BY position, id LIMIT 10001`
      return Effect.all([amounts, categories], { concurrency: 2 }).pipe(
        Effect.orDie,
        Effect.flatMap(([amountRows, categoryList]) => Effect.all([categoryAmounts(amountRows), categoryRows(categoryList)])),
        Effect.map(([amounts, categories]) => ({ amounts, categories }))
      )
    }

    const salesGroups = (query: SalesQuery) => {
      const source = sales[query.source]
      const tenant = query.tenantId
      // The tenant's time zone, an uncorrelated subquery the planner reads once and hands to parallel workers.
      const zone = sql`(SELECT t.time_zone FROM tenants t WHERE t.id = ${tenant}::uuid)`
      // An order without an order date counts on the day it was created, in the tenant's time zone.
      const date = query.source === "sales-orders" ? sql`coalesce(d.order_date, (d.created_at AT TIME ZONE ${zone})::date)` : sql`d.invoice_date`
      // The documents counted: `d` of the period, in the states that count (an order's date read as documented above).
      const counted = sql`d.tenant_id = ${tenant}::uuid AND d.deleted_at IS NULL AND d.status IN ${sql.literal(source.statuses)} AND ${
        query.source === "sales-orders"
          ? sql`(d.order_date BETWEEN ${query.from}::date AND ${query.to}::date OR (d.order_date IS NULL
              AND (d.created_at AT TIME ZONE ${zone})::date BETWEEN ${query.from}::date AND ${query.to}::date))`
          : sql`d.invoice_date BETWEEN ${query.from}::date AND ${query.to}::date`
      }`
      const items = sql`${sql.literal(source.items)} i JOIN ${sql.literal(source.table)} d ON d.tenant_id = i.tenant_id AND d.id = i.${sql.literal(source.key)}`
      const limit = query.limit
      if (query.groupBy === "product") {
        // A product's documents are its items less those repeating it within a document (stored on write),
        // so the statement aggregates in parallel without sorting for a distinct count.
        const groups = heavy(sql`SELECT g.product_id::text AS key, p.name AS label, g.documents::int AS documents, ${sql.literal(text("g.quantity"))} AS quantity,
            ${sql.literal(text("g.subtotal"))} AS subtotal, ${sql.literal(text("g.discounts"))} AS discounts, ${sql.literal(text("g.taxes"))} AS taxes,
            ${sql.literal(text("g.total"))} AS total
          FROM (SELECT i.product_id, count(*) FILTER (WHERE NOT i.repeats_product) AS documents, sum(i.quantity) AS quantity, sum(i.subtotal) AS subtotal,
              sum(i.discount_amount) AS discounts, sum(${sql.literal(source.itemTaxes)}) AS taxes, sum(i.total) AS total
            FROM ${items} WHERE i.tenant_id = ${tenant}::uuid AND ${counted} GROUP BY i.product_id) g
          LEFT JOIN products p ON p.tenant_id = ${tenant}::uuid AND p.id = g.product_id
          ORDER BY g.total DESC, p.name NULLS LAST, g.product_id NULLS LAST LIMIT ${limit}`)
        const count = sql`SELECT count(*)::int AS documents FROM ${sql.literal(source.table)} d WHERE ${counted}`
        return Effect.all([groups, count], { concurrency: 2 }).pipe(
          Effect.orDie,
          Effect.flatMap(([rows, total]) => Effect.all([salesRows(rows), documentCount(total)])),
          Effect.map(([groups, documents]) => ({ groups, documents }))
        )
      }
      // Grouped by the bare key first (a uuid, a text, a month's first day) so the planner sees few groups
      // and aggregates in parallel; the label and the key's text are added to the groups afterwards.
      const key = query.groupBy === "customer" ? sql`d.customer_id`
        : query.groupBy === "salesperson_name" ? sql`nullif(trim(d.salesperson_name), '')`
        : sql`date_trunc('month', ${date})::date`
      const label = query.groupBy === "customer" ? sql`c.legal_name` : query.groupBy === "month" ? sql`to_char(g.key, 'YYYY-MM')` : sql`g.key`
      const customers = query.groupBy === "customer" ? sql`LEFT JOIN customers c ON c.tenant_id = ${tenant}::uuid AND c.id = g.key` : sql``
      const order = query.groupBy === "month" ? sql`g.key` : sql`g.total DESC, 2 NULLS LAST, 1 NULLS LAST`
      // Quantities are the documents' stored Σ of their items', so no grouping here reads an item.
      return sql`SELECT ${query.groupBy === "month" ? sql`to_char(g.key, 'YYYY-MM')` : sql`g.key::text`} AS key, ${label} AS label, g.documents::int AS documents,
          ${sql.literal(text("g.quantity"))} AS quantity, ${sql.literal(text("g.subtotal"))} AS subtotal, ${sql.literal(text("g.discounts"))} AS discounts,
          ${sql.literal(text("g.taxes"))} AS taxes, ${sql.literal(text("g.total"))} AS total
        FROM (SELECT ${key} AS key, count(*) AS documents, sum(d.items_quantity) AS quantity, sum(d.subtotal) AS subtotal,
            sum(d.total_discount) AS discounts, sum(${sql.literal(source.documentTaxes)}) AS taxes, sum(d.total) AS total
          FROM ${sql.literal(source.table)} d WHERE ${counted} GROUP BY 1) g ${customers}
        ORDER BY ${order} LIMIT ${limit}`.pipe(
        Effect.orDie,
        Effect.flatMap(salesRows),
        Effect.map((groups) => ({ groups, documents: groups.reduce((sum, group) => sum + group.documents, 0) }))
      )
    }

    return ReportQueries.of({
      today: (tenantId) =>
        sql`SELECT to_char((now() AT TIME ZONE time_zone)::date, 'YYYY-MM-DD') AS today FROM tenants WHERE id = ${tenantId}::uuid`.pipe(
          Effect.orDie,
          Effect.flatMap(decodeRows(Schema.Struct({ today: Schema.String }))),
          Effect.map((rows) => rows[0]?.today ?? new Date().toISOString().slice(0, 10))
        ),
      aging,
      cashFlow,
      income,
      sales: salesGroups
    })
  })
)
