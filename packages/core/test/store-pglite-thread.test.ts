import * as Reactivity from "effect/reactivity/Reactivity"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import { layerPglite, makePgliteClient, openPglite } from "@erp/core"
import { Duration, Effect, Fiber, ManagedRuntime } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeSessionTurns, SessionOwner } from "../src/store/session-turns.js"
import { testStore } from "../../../test/support/stores.js"

/**
 * The embedded store runs PGlite in a worker thread: values, errors, transactions and the
 * session's turns as the host sees them.
 */
describe("the embedded store in its own thread", () => {
  let runtime: ManagedRuntime.ManagedRuntime<SqlClient.SqlClient, unknown>
  const run = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>) => runtime.runPromise(effect)

  beforeAll(async () => {
    const store = testStore("pglite")
    if (store.kind !== "pglite") throw new Error("expected the embedded store")
    runtime = ManagedRuntime.make(layerPglite(store))
    await runtime.context()
  })
  afterAll(() => runtime?.dispose())

  it("answers values as the host's text parsers make them", async () => {
    const [row] = await run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql<Record<string, unknown>>`SELECT
      '2024-05-01 13:45:07.123456+00'::timestamptz AS at,
      ARRAY['2024-05-01 13:45:07+00'::timestamptz, NULL] AS ats,
      '2024-05-01 13:45:07'::timestamp AS local_at,
      '2024-05-01'::date AS day,
      ARRAY['2024-05-01'::date] AS days,
      12345678901::int8 AS big,
      ARRAY[1::int8, 2::int8] AS bigs,
      '1.500000'::numeric(18,6) AS amount,
      ARRAY['2.5'::numeric] AS amounts,
      '\\x0102ff'::bytea AS bytes,
      '{"a":[1,"x"]}'::jsonb AS document,
      ARRAY['x', 'y'] AS texts,
      true AS yes,
      NULL::timestamptz AS nothing,
      ${"unaccented Ação"} AS param`))
    expect(row).toEqual({
      at: "2024-05-01T13:45:07.123Z",
      ats: ["2024-05-01T13:45:07.000Z", null],
      local_at: "2024-05-01T13:45:07.000Z",
      day: "2024-05-01",
      days: ["2024-05-01"],
      big: 12345678901,
      bigs: [1, 2],
      amount: "1.500000",
      amounts: ["2.5"],
      bytes: Uint8Array.of(1, 2, 255),
      document: { a: [1, "x"] },
      texts: ["x", "y"],
      yes: true,
      nothing: null,
      param: "unaccented Ação"
    })
    const values = await run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT now() AS at, 7::int8 AS n`.values))
    expect(values[0][0]).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
    expect(values[0][1]).toBe(7)
    const [accent] = await run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ plain: string }>`SELECT unaccent('Ação') AS plain`))
    expect(accent.plain).toBe("Acao")
  })

  it("fails a statement with PostgreSQL's fields, and runs several at once in the simple protocol", async () => {
    const failure = await run(Effect.flip(Effect.flatMap(SqlClient.SqlClient, (sql) => sql`INSERT INTO erp_settings (key, value) VALUES (NULL, 'x')`)))
    const cause = (failure as SqlError).reason.cause as { code?: string; column?: string; table?: string }
    expect(cause).toMatchObject({ code: "23502", column: "key", table: "erp_settings" })
    expect(cause).toBeInstanceOf(Error)
    const results = await run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe("SELECT 1 AS one; SELECT 2 AS two")))
    expect(results).toEqual([[{ one: 1 }], [{ two: 2 }]])
  })

  it("dumps a store that opens again from the dump, and is closed with its thread", async () => {
    const dumped = await Effect.runPromise(Effect.scoped(Effect.gen(function* () {
      const thread = yield* openPglite({})
      yield* Effect.promise(() => thread.exec("CREATE TABLE kept (note text); INSERT INTO kept VALUES ('from the dump')"))
      return yield* Effect.promise(() => thread.dumpDataDir("none"))
    })))
    const notes = await Effect.runPromise(Effect.scoped(Effect.gen(function* () {
      const thread = yield* openPglite({ loadDataDir: dumped })
      return yield* Effect.promise(() => thread.query("SELECT note FROM kept", [], "object"))
    })))
    expect(notes).toEqual([{ note: "from the dump" }])
  })

  it("answers the health probe at once while a statement holds the session, and fails it once the thread stopped", async () => {
    const outcome = await Effect.runPromise(Effect.scoped(Effect.gen(function* () {
      const thread = yield* openPglite({})
      const { client, probe } = yield* makePgliteClient(thread, makeSessionTurns())
      yield* probe.check
      const slow = yield* Effect.forkChild(client`SELECT pg_sleep(1)`)
      yield* Effect.sleep("100 millis")
      const [busy] = yield* Effect.timed(probe.check)
      yield* Fiber.join(slow)
      yield* Effect.promise(() => thread.close())
      const failure = yield* Effect.flip(probe.check)
      return { busyMs: Duration.toMillis(busy), failure: failure.message }
    })).pipe(Effect.provide(Reactivity.layer)))
    expect(outcome.busyMs).toBeLessThan(500)
    expect(outcome.failure).toBe("The embedded store is closed")
  })

  it("gives another owner's statement the next turn, not the turn after everything queued before it", async () => {
    const finished = await run(Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const order: Array<string> = []
      const statement = (owner: string, name: string, seconds = 0.01) =>
        Effect.provideService(Effect.tap(sql`SELECT pg_sleep(${seconds})`, () => Effect.sync(() => order.push(name))), SessionOwner, owner)
      // a1 holds the session long enough for the rest to queue behind it, a's three before b's one.
      const a = yield* Effect.forkChild(Effect.all([statement("a", "a1", 0.5), ...["a2", "a3", "a4"].map((name) => statement("a", name))], { concurrency: "unbounded" }))
      yield* Effect.sleep("100 millis")
      yield* statement("b", "b1")
      yield* Fiber.join(a)
      return order
    }))
    expect(finished.slice(0, 2)).toEqual(["a1", "b1"])
    expect(finished).toHaveLength(5)
  })

  it("keeps a transaction's session from BEGIN to COMMIT: another owner's statement runs after it", async () => {
    const seen = await run(Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const inside = yield* Effect.forkChild(Effect.provideService(sql.withTransaction(Effect.gen(function* () {
        yield* sql`INSERT INTO erp_settings (key, value) VALUES ('thread-probe', 'uncommitted')`
        yield* Effect.sleep("100 millis")
        yield* sql`DELETE FROM erp_settings WHERE key = 'thread-probe'`
      })), SessionOwner, "a"))
      yield* Effect.sleep("30 millis")
      const rows = yield* Effect.provideService(sql<{ n: number }>`SELECT count(*)::int AS n FROM erp_settings WHERE key = 'thread-probe'`, SessionOwner, "b")
      yield* Fiber.join(inside)
      return rows[0].n
    }))
    expect(seen).toBe(0)
  })
})
