import * as SqlClient from "effect/sql/SqlClient"
import { Effect, ManagedRuntime } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { storeKinds, testStore } from "../../../test/support/stores.js"
import { layerStore } from "../src/index.js"
import { statementShape } from "../src/store/statement-shapes.js"

/**
 * A statement of a fixed shape is compiled once and replayed with each run's values: the replay
 * must run exactly what building the statement anew would, and a build that changes its values
 * must never be replayed from positions.
 */
describe.each(storeKinds)("statements compiled once per shape on %s", (kind) => {
  const runtime = ManagedRuntime.make(layerStore(testStore(kind)))
  afterAll(() => runtime.dispose())
  const run = <A>(use: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) => runtime.runPromise(Effect.flatMap(SqlClient.SqlClient, use))

  it("places each run's values where the build put them, constants kept, the text one string", async () => {
    await run((sql) => Effect.gen(function* () {
      let builds = 0
      const shape = statementShape(sql, (a, b) => {
        builds++
        return sql<{ a: string; b: string; n: number }>`SELECT ${b}::text AS b, ${a}::text AS a, ${7}::int AS n, ${a}::text = ${b}::text AS same`
      })
      const first = shape("x", "y")
      const second = shape("p", "q")
      expect(builds).toBe(2)
      expect(first.compile()[0]).toBe(second.compile()[0])
      expect(second.compile()[1]).toEqual(["q", "p", 7, "p", "q"])
      expect(yield* second).toEqual([{ b: "q", a: "p", n: 7, same: false }])
      expect(yield* shape("same", "same")).toEqual([{ b: "same", a: "same", n: 7, same: true }])
    }))
  })

  it("builds anew each run when the build changes a value or writes it into the text", async () => {
    await run((sql) => Effect.gen(function* () {
      let builds = 0
      const changed = statementShape(sql, (value) => {
        builds++
        return sql<{ v: string }>`SELECT ${value.toUpperCase()}::text AS v`
      })
      expect(yield* changed("abc")).toEqual([{ v: "ABC" }])
      expect(yield* changed("def")).toEqual([{ v: "DEF" }])
      const inlined = statementShape(sql, (value) => {
        builds++
        return sql<{ v: string }>`SELECT ${sql.literal(`'${value.length}'`)}::text AS v`
      })
      expect(yield* inlined("ab")).toEqual([{ v: "2" }])
      expect(yield* inlined("abcd")).toEqual([{ v: "4" }])
      expect(builds).toBe(8)
    }))
  })
})
