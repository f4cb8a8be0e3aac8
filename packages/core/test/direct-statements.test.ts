import * as SqlClient from "effect/sql/SqlClient"
import { Effect, Fiber, ManagedRuntime } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { storeKinds, testStore } from "../../../test/support/stores.js"
import { layerStore, makeDirect } from "../src/index.js"
import { poolRunner, statementNames } from "../src/store/direct-statements.js"
import pg from "pg"

/**
 * Statements outside a transaction run on the driver itself (`makeDirect`): they must behave as
 * the `effect/sql` path does — a transaction's statements stay on its connection, a failing
 * statement fails with the driver's error, and an interrupted one stops running on the server.
 */
describe.each(storeKinds)("statements run on the driver on %s", (kind) => {
  const runtime = ManagedRuntime.make(layerStore(testStore(kind)))
  afterAll(() => runtime.dispose())

  const run = <A>(use: (sql: SqlClient.SqlClient, direct: Effect.Success<typeof makeDirect>) => Effect.Effect<A, unknown>) =>
    runtime.runPromise(Effect.flatMap(Effect.zip(SqlClient.SqlClient, makeDirect), ([sql, direct]) => use(sql, direct)))

  it("runs inside a transaction on the transaction's connection: it sees the transaction's own setting and rows", async () => {
    const seen = await run((sql, direct) =>
      sql.withTransaction(Effect.gen(function* () {
        yield* sql`SET LOCAL erp.direct_check = 'inside'`
        return yield* direct(sql<{ value: string | null }>`SELECT current_setting('erp.direct_check', true) AS value`)
      })))
    expect(seen).toEqual([{ value: "inside" }])
    const outside = await run((sql, direct) => direct(sql<{ value: string | null }>`SELECT current_setting('erp.direct_check', true) AS value`))
    expect(outside[0].value ?? "").toBe("")
  })

  it("answers rows with the store's value parsing and fails with the driver's error", async () => {
    const rows = await run((sql, direct) => direct(sql<{ n: number; amount: string }>`SELECT ${41}::int + 1 AS n, 1.50::numeric AS amount`))
    expect(rows).toEqual([{ n: 42, amount: "1.50" }])
    const failure = await runtime.runPromise(Effect.flip(Effect.flatMap(Effect.zip(SqlClient.SqlClient, makeDirect), ([sql, direct]) => direct(sql`SELECT 1 / 0`))))
    expect(failure._tag).toBe("SqlError")
    expect(JSON.stringify(failure.reason.cause)).toMatch(/22012|division by zero/)
  })

  it.runIf(kind === "postgres")("cancels a statement on the server when its fiber is interrupted", async () => {
    const marker = `direct-cancel-${Date.now()}`
    const running = () =>
      run((sql) => sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity WHERE state = 'active' AND query LIKE ${`%${marker}%`} AND pid <> pg_backend_pid()`)
        .then((rows) => rows[0].n)
    const fiber = runtime.runFork(Effect.flatMap(Effect.zip(SqlClient.SqlClient, makeDirect), ([sql, direct]) =>
      direct(sql`SELECT pg_sleep(30) AS ${sql.literal(`"${marker}"`)}`)))
    await expect.poll(running, { timeout: 2_000 }).toBe(1)
    await runtime.runPromise(Fiber.interrupt(fiber))
    // Well within the store's statement timeout (5 s), which would end it anyway.
    await expect.poll(running, { timeout: 1_500 }).toBe(0)
  })
})

describe("a cancelled statement on PostgreSQL", () => {
  const postgres = process.env.TEST_DATABASE_URL
  it.runIf(postgres)("stops no other statement: the connection it ran on is not handed to the next one", async () => {
    // Two connections, both busy when the caller of A goes away: the cancel waits for a free
    // connection behind B, and A's connection, free once A ends, would be B's.
    const pool = new pg.Pool({ connectionString: postgres, max: 2 })
    const { run: runStatement } = poolRunner(pool)
    const outcome = (text: string) => {
      const fiber = Effect.runFork(runStatement(text, []).pipe(
        Effect.match({ onFailure: (error) => String((error.reason.cause as Error)?.message ?? error.message), onSuccess: () => "ok" })
      ))
      // An interrupted fiber's join rejects: A's outcome is read as "interrupted", never left unhandled.
      return { done: Effect.runPromise(Fiber.join(fiber)).catch(() => "interrupted"), cancel: () => void Effect.runFork(Fiber.interrupt(fiber)) }
    }
    const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
    try {
      const a = outcome("SELECT pg_sleep(0.6)")
      const c = outcome("SELECT pg_sleep(1.2)")
      await pause(300)
      const b = outcome("SELECT pg_sleep(1.2)")
      await pause(100)
      a.cancel()
      // The cancel reaches the server once C ends (1.2 s), while B runs (0.6 s to 1.8 s).
      expect(await c.done).toBe("ok")
      expect(await b.done).toBe("ok")
    } finally {
      await pool.end()
    }
  })
})

describe("statement texts kept prepared", () => {
  it("names a text from its second run on, the same name each time, and no more texts than the bound", () => {
    const nameOf = statementNames({ most: 2, after: 2 })
    expect(nameOf("SELECT 1 AS a")).toBeUndefined()
    const a = nameOf("SELECT 1 AS a")
    expect(a).toMatch(/^erp_[A-Za-z0-9_-]{24}$/)
    expect(nameOf("SELECT 1 AS a")).toBe(a)
    nameOf("SELECT 1 AS b")
    const b = nameOf("SELECT 1 AS b")
    expect(b).toBeDefined()
    expect(b).not.toBe(a)
    // The bound is reached: a third text is never named, however often it runs.
    for (let run = 0; run < 5; run++) expect(nameOf("SELECT 1 AS c")).toBeUndefined()
    expect(nameOf("SELECT 1 AS a")).toBe(a)
  })

  const postgres = process.env.TEST_DATABASE_URL
  it.runIf(postgres)("keeps a fixed-shape statement prepared on the connection from its second run on, and never one of a caller's shape", async () => {
    // One connection, so the statements the runner prepared are the ones this session sees.
    const runtime = ManagedRuntime.make(layerStore({ kind: "postgres", url: postgres!, limits: { poolSize: 1, preparedStatements: 1 } }))
    try {
      const marker = `prepared_${Date.now()}`
      const prepared = (suffix: string) =>
        runtime.runPromise(Effect.flatMap(Effect.zip(SqlClient.SqlClient, makeDirect), ([sql, direct]) =>
          direct(sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_prepared_statements WHERE statement LIKE ${`%${marker}_${suffix}%`} AND statement NOT LIKE '%pg_prepared_statements%'`)))
          .then((rows) => rows[0].n)
      const runTimes = (suffix: string, keep: boolean, times: number) =>
        runtime.runPromise(Effect.flatMap(Effect.zip(SqlClient.SqlClient, makeDirect), ([sql, direct]) =>
          Effect.repeat(direct(sql<{ n: number }>`SELECT ${7}::int AS ${sql.literal(`${marker}_${suffix}`)}`, keep), { times: times - 1 })))
      await runTimes("fixed", true, 1)
      expect(await prepared("fixed")).toBe(0)
      await runTimes("fixed", true, 2)
      expect(await prepared("fixed")).toBe(1)
      await runTimes("filtered", false, 3)
      expect(await prepared("filtered")).toBe(0)
      // The bound (1 text here) holds: a new text stays unnamed.
      await runTimes("late", true, 3)
      expect(await prepared("late")).toBe(0)
    } finally {
      await runtime.dispose()
    }
  })
})
