import { StatementRunner } from "@erp/core"
import { Effect, Exit } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestHost, type TestHost, type TestTenant } from "../../../test/support/host.js"

/**
 * Behind a pooler in transaction mode (PgBouncer's `pool_mode = transaction`, which refuses startup
 * parameters and gives each transaction whichever server session is free), with
 * `ERP_DB_POOLER=transaction`: writes race without a prepared statement colliding, and a slow
 * statement is still cancelled at the statement timeout, in a transaction and outside one.
 *
 * `ERP_TEST_POOLER_URL` names such a PgBouncer in front of the test PostgreSQL (`.ci/run` starts
 * one); without it the tests are skipped with the reason, unless `ERP_REQUIRE_POOLER=1`.
 */
const POOLER_URL = process.env.ERP_TEST_POOLER_URL
const MISSING = "needs ERP_TEST_POOLER_URL: a PgBouncer in transaction mode in front of the test PostgreSQL (.ci/run starts one)"
const TIMEOUT_MS = 1_000

describe("the store behind PgBouncer in transaction mode", () => {
  let host: TestHost
  let tenant: TestTenant

  beforeAll(async () => {
    if (!POOLER_URL) {
      if (process.env.ERP_REQUIRE_POOLER === "1") throw new Error(`ERP_REQUIRE_POOLER=1, but the test ${MISSING}`)
      return
    }
    host = await startTestHost({ kind: "postgres", url: POOLER_URL, limits: { pooler: "transaction", statementTimeoutMs: TIMEOUT_MS, poolSize: 20 } })
    tenant = await host.createTenant()
  })
  afterAll(() => host?.close())

  it("answers 40 concurrent creates, a sales order with items, its update and the lists, all without an error", async (context) => {
    if (!POOLER_URL) return context.skip(MISSING)
    const creates = await Promise.all(Array.from({ length: 40 }, (_, index) =>
      host.request("POST", "/customers", { token: tenant.token, body: { legal_name: `Pooled ${index}` } })))
    expect(creates.map((answer) => answer.status)).toStrictEqual(Array.from({ length: 40 }, () => 201))
    // The same statement texts again and again: where a named statement outlived its transaction, these collide.
    const reads = await Promise.all(creates.map((answer) => host.request("GET", `/customers/${String(answer.body.id)}`, { token: tenant.token })))
    expect(reads.map((answer) => answer.status)).toStrictEqual(creates.map(() => 200))

    const product = await host.request("POST", "/products", { token: tenant.token, body: { name: "Pooled", sale_price: "10" } })
    const order = await host.request("POST", "/sales-orders", {
      token: tenant.token,
      body: { customer_id: creates[0].body.id, items: [{ product_id: product.body.id, quantity: "2", unit_price: "10" }, { item_description: "Service", quantity: "1", unit_price: "5" }] }
    })
    expect(order.status).toBe(201)
    expect(order.body.total).toBe("25.000000")
    const changed = await host.request("PATCH", `/sales-orders/${String(order.body.id)}`, {
      token: tenant.token,
      body: { items: [{ item_description: "Only this", quantity: "3", unit_price: "1" }] }
    })
    expect(changed.status).toBe(200)
    expect(changed.body.total).toBe("3.000000")
    const list = await host.request("GET", "/customers?limit=100&sort=legal_name:asc", { token: tenant.token })
    expect(list.status).toBe(200)
    expect(list.body.data).toHaveLength(40)
  })

  it("cancels a statement that outlasts the timeout, outside a transaction and in one, and serves the next", async (context) => {
    if (!POOLER_URL) return context.skip(MISSING)
    const timed = async <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient | StatementRunner>) => {
      const started = performance.now()
      const exit = await host.run(Effect.exit(effect))
      return { exit, ms: performance.now() - started }
    }
    const sleep = Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT pg_sleep(5)`)
    const cases = {
      alone: sleep,
      "on the runner": Effect.flatMap(StatementRunner, (runner) => runner.run("SELECT pg_sleep(5)", [])),
      "in a transaction": Effect.flatMap(SqlClient.SqlClient, (sql) => sql.withTransaction(Effect.andThen(sql`SELECT 1`, sleep)))
    }
    for (const [label, effect] of Object.entries(cases)) {
      const { exit, ms } = await timed(effect)
      expect(Exit.isFailure(exit), label).toBe(true)
      expect(String(Exit.isFailure(exit) ? exit.cause : ""), label).toMatch(/canceling statement/)
      expect(ms, label).toBeGreaterThanOrEqual(TIMEOUT_MS * 0.9)
      expect(ms, label).toBeLessThan(4_000)
    }
    // A statement whose fiber is interrupted (its client went away) is cancelled on the server at once.
    const marker = `SELECT pg_sleep(5) AS interrupted_${Date.now()}`
    const interrupted = await timed(Effect.timeoutOption(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(marker)), 200))
    expect(interrupted.ms).toBeLessThan(2_000)
    const running = () => host.run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity WHERE query = ${marker} AND state = 'active'`))
    let still = 1
    for (let tries = 0; tries < 50 && still > 0; tries++) {
      still = (await running())[0].n
      if (still > 0) await new Promise((resolve) => setTimeout(resolve, 20))
    }
    expect(still).toBe(0)
    // A transaction's settings are its own: set with SET LOCAL as it begins, gone after it.
    const inside = await host.run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.withTransaction(sql<{ statement_timeout: string }>`SHOW statement_timeout`)))
    expect(inside[0].statement_timeout).toBe("1s")
    const after = await host.request("GET", "/customers?limit=1", { token: tenant.token })
    expect(after.status).toBe(200)
  })
})
