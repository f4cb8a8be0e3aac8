// Each report on a large tenant: the median and slowest of several runs through the reports' use
// case (what every transport runs). Run after `npm run build`, on the hot-path data set:
//   DATABASE_URL=postgres://…/erp_million ERP_SECRET_KEY=… node bench/reports.mjs [receivables] [runs]
// It picks the tenant with the most sales orders and, once, adds `receivables` receivables (default
// 200,000), half as many payables and as many transactions in batched SQL, a third of each settled.
import { ALL_PERMISSIONS, allReports, Authenticator, layerCore, Reports, resolveStoreLocation, Tenancy } from "@erp/core"
import { Effect, ManagedRuntime } from "effect"
import { SqlClient } from "effect/sql"

if (!process.env.DATABASE_URL) {
  console.error("Set DATABASE_URL (and ERP_SECRET_KEY) to the bench database: the reports are timed on PostgreSQL")
  process.exit(2)
}
const documents = Number(process.argv[2] ?? 200_000)
const runs = Number(process.argv[3] ?? 5)
const runtime = ManagedRuntime.make(layerCore(resolveStoreLocation()))
const run = (effect) => runtime.runPromise(effect)

const setup = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const [largest] = yield* sql`SELECT tenant_id, count(*)::int AS orders FROM sales_orders GROUP BY tenant_id ORDER BY 2 DESC LIMIT 1`
  if (!largest) return yield* Effect.die(new Error("No sales orders here: seed the data set first (bench/README.md)"))
  const tenant = largest.tenant_id
  const [{ added }] = yield* sql`SELECT count(*)::int AS added FROM receivables WHERE tenant_id = ${tenant}::uuid AND metadata ->> 'bench' = 'reports'`
  if (added === 0) yield* sql.withTransaction(Effect.gen(function* () {
    // Bulk inserts take longer than a request may: this transaction alone has no time limit.
    yield* sql`SET LOCAL statement_timeout = 0`
    const started = Date.now()
    const [{ account }] = yield* sql`INSERT INTO financial_accounts (tenant_id, name, type, initial_balance) VALUES (${tenant}::uuid, 'Bench reports', 'checking', 100000) RETURNING id AS account`
    const category = (name, type) => sql`INSERT INTO financial_categories (tenant_id, name, type) VALUES (${tenant}::uuid, ${name}, ${type}) RETURNING id`
    const [income] = yield* category("Bench revenue", "income")
    const [expense] = yield* category("Bench costs", "expense")
    // Documents due over two years around today, on the tenant's customers and suppliers in turn.
    const settlements = (table, party, parties, count, categoryId) => sql`
      INSERT INTO ${sql.literal(table)} (tenant_id, record_number, ${sql.literal(party)}, financial_account_id, financial_category_id, amount, issue_date, due_date, metadata)
      SELECT ${tenant}::uuid, coalesce((SELECT max(record_number) FROM ${sql.literal(table)} WHERE tenant_id = ${tenant}::uuid), 0) + g,
        (SELECT id FROM ${sql.literal(parties)} WHERE tenant_id = ${tenant}::uuid ORDER BY id OFFSET (g % greatest(1, (SELECT count(*) FROM ${sql.literal(parties)} WHERE tenant_id = ${tenant}::uuid))) LIMIT 1),
        ${account}::uuid, ${categoryId}::uuid, 10 + (g % 997), current_date - 400 + (g % 730) - 30, current_date - 365 + (g % 730), '{"bench":"reports"}'
      FROM generate_series(1, ${count}) g`
    yield* settlements("receivables", "customer_id", "customers", documents, income.id)
    yield* settlements("payables", "supplier_id", "suppliers", Math.floor(documents / 2), expense.id)
    yield* sql`INSERT INTO financial_transactions (tenant_id, account_id, trn_type, posted_at, amount, metadata)
      SELECT ${tenant}::uuid, ${account}::uuid, CASE WHEN g % 2 = 0 THEN 'CREDIT' ELSE 'DEBIT' END, current_date - 730 + (g % 760),
        CASE WHEN g % 2 = 0 THEN 10 + (g % 997) ELSE -(10 + (g % 991)) END, '{"bench":"reports"}'
      FROM generate_series(1, ${documents}) g`
    // A third of the receivables settled by a credit of their amount, posted on their due date.
    yield* sql`WITH chosen AS (
        SELECT r.id, r.amount, r.due_date, row_number() OVER (ORDER BY r.id) AS n FROM receivables r
        WHERE r.tenant_id = ${tenant}::uuid AND r.metadata ->> 'bench' = 'reports' AND r.record_number % 3 = 0
      ), money AS (
        INSERT INTO financial_transactions (tenant_id, account_id, trn_type, posted_at, amount, metadata)
        SELECT ${tenant}::uuid, ${account}::uuid, 'CREDIT', due_date, amount, jsonb_build_object('bench', 'reports', 'n', n) FROM chosen
        RETURNING id, (metadata ->> 'n')::bigint AS n
      )
      INSERT INTO receivable_allocations (tenant_id, receivable_id, financial_transaction_id, allocated_amount)
      SELECT ${tenant}::uuid, chosen.id, money.id, chosen.amount FROM chosen JOIN money ON money.n = chosen.n`
    yield* sql`UPDATE receivables SET status = 'paid', paid_at = due_date
      WHERE tenant_id = ${tenant}::uuid AND metadata ->> 'bench' = 'reports' AND record_number % 3 = 0`
    console.log(`added ${documents} receivables, ${Math.floor(documents / 2)} payables, ${documents + Math.floor(documents / 3)} transactions in ${((Date.now() - started) / 1000).toFixed(0)} s`)
  }))
  yield* sql`ANALYZE receivables, payables, financial_transactions, receivable_allocations, payable_allocations`.pipe(Effect.ignore)
  const counts = yield* sql`SELECT
      (SELECT count(*) FROM sales_orders WHERE tenant_id = ${tenant}::uuid)::int AS sales_orders,
      (SELECT count(*) FROM sales_order_items WHERE tenant_id = ${tenant}::uuid)::int AS items,
      (SELECT count(*) FROM receivables WHERE tenant_id = ${tenant}::uuid)::int AS receivables,
      (SELECT count(*) FROM payables WHERE tenant_id = ${tenant}::uuid)::int AS payables,
      (SELECT count(*) FROM financial_transactions WHERE tenant_id = ${tenant}::uuid)::int AS transactions`
  const tenancy = yield* Tenancy
  const { token } = yield* tenancy.createApiKey({ tenantId: tenant, name: "bench reports", permissions: ALL_PERMISSIONS })
  const principal = yield* Effect.flatMap(Authenticator, (authenticator) => authenticator.authenticate(token))
  return { principal, counts: counts[0] }
})

const { principal, counts } = await run(setup)
console.log(`tenant: ${Object.entries(counts).map(([name, count]) => `${count.toLocaleString("en-US")} ${name.replace("_", " ")}`).join(", ")}`)

const today = new Date().toISOString().slice(0, 10)
const yearsAgo = (years) => `${Number(today.slice(0, 4)) - years}${today.slice(4)}`
const cases = [
  ["receivables-aging", []],
  ["payables-aging", []],
  ["cash-flow", [["from", yearsAgo(2)], ["to", today], ["interval", "month"]]],
  ["cash-flow", [["from", today], ["to", yearsAgo(-1)], ["interval", "day"]]],
  ["income-statement", [["from", yearsAgo(2)], ["to", today]]],
  ["income-statement", [["from", yearsAgo(2)], ["to", today], ["basis", "cash"]]],
  ["sales", [["from", yearsAgo(5)], ["to", today], ["group_by", "customer"]]],
  ["sales", [["from", yearsAgo(5)], ["to", today], ["group_by", "product"]]],
  ["sales", [["from", yearsAgo(5)], ["to", today], ["group_by", "month"]]],
  ["sales", [["from", yearsAgo(5)], ["to", today], ["group_by", "salesperson_name"]]]
]

console.log(`| Report | Parameters | median ms | slowest ms | within 2 s |`)
console.log(`|---|---|---|---|---|`)
for (const [name, params] of cases) {
  const report = allReports.find((candidate) => candidate.name === name)
  const once = Effect.flatMap(Reports, (reports) => reports.run(report, principal, params))
  await run(once)
  const times = []
  for (let index = 0; index < runs; index++) {
    const start = process.hrtime.bigint()
    await run(once)
    times.push(Number(process.hrtime.bigint() - start) / 1e6)
  }
  times.sort((a, b) => a - b)
  const median = times[Math.floor(times.length / 2)]
  const slowest = times[times.length - 1]
  console.log(`| ${name} | ${params.map(([key, value]) => `${key}=${value}`).join(" ") || "defaults"} | ${median.toFixed(0)} | ${slowest.toFixed(0)} | ${slowest <= 2000 ? "yes" : "no"} |`)
}
await runtime.dispose()
