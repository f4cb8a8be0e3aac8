import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import type * as Statement from "@effect/sql/Statement"
import { Context, Effect, FiberRef, Option } from "effect"
import type pg from "pg"

type Rows = ReadonlyArray<Record<string, unknown>>

/**
 * Runs a statement's text on the driver itself. A statement through `@effect/sql` opens a
 * span, a scope and a connection lease of its own, about 100 µs of CPU beside the driver's
 * own 50–100 (bench/README.md): as much as the rest of a small request. The store provides
 * this where it owns the driver; without it statements go the usual way.
 */
export class StatementRunner extends Context.Tag("erp/core/StatementRunner")<StatementRunner, {
  readonly run: (text: string, params: ReadonlyArray<unknown>) => Effect.Effect<Rows, SqlError>
}>() {}

/**
 * A node-postgres pool's runner: the connection is taken and given back around the one
 * statement, as `@effect/sql-pg` does, and a statement whose fiber is interrupted (its
 * client went away) is cancelled on the server, as there.
 */
export const poolRunner = (pool: pg.Pool): Context.Tag.Service<StatementRunner> => ({
  run: (text, params) =>
    Effect.async<Rows, SqlError>((resume) => {
      let client: pg.PoolClient | undefined
      let done = false
      pool.connect((cause, connected, release) => {
        if (cause || !connected) {
          done = true
          return resume(Effect.fail(new SqlError({ cause: cause ?? new Error("No client returned"), message: "Failed to acquire connection" })))
        }
        if (done) return release()
        client = connected
        connected.query(text, params as Array<unknown>, (error: Error | null, result: pg.QueryResult) => {
          done = true
          release(error && isBroken(error) ? error : undefined)
          resume(error ? Effect.fail(new SqlError({ cause: error, message: "Failed to execute statement" })) : Effect.succeed(result.rows))
        })
      })
      return Effect.sync(() => {
        if (done) return
        done = true
        // Cancelled on another connection: the statement's own is busy running it.
        if (client) pool.query("SELECT pg_cancel_backend($1)", [(client as pg.PoolClient & { processID: number }).processID]).catch(() => undefined)
      })
    })
})

/** A connection that failed below the statement (not a SQL error) is dropped, not pooled again. */
const isBroken = (error: Error): boolean => !("code" in error) || typeof (error as { code?: unknown }).code !== "string" || !/^[0-9A-Z]{5}$/.test((error as { code: string }).code)

/**
 * Runs `statement` on the store's runner unless the fiber holds a transaction (whose
 * statements go on its connection): the statement itself then, and without a runner. A
 * fiber that traces gets the `sql.execute` span `@effect/sql` would have made, with the text.
 */
export const makeDirect = Effect.map(Effect.serviceOption(StatementRunner), (runner) =>
  <A extends object>(statement: Statement.Statement<A>): Effect.Effect<ReadonlyArray<A>, SqlError> => {
    if (Option.isNone(runner)) return statement
    const run = runner.value.run
    return Effect.withFiberRuntime((fiber) => {
      if (Context.getOption(fiber.currentContext, SqlClient.TransactionConnection)._tag === "Some") return statement
      const [text, params] = statement.compile()
      const rows = run(text, params) as Effect.Effect<ReadonlyArray<A>, SqlError>
      return fiber.getFiberRef(FiberRef.currentTracerEnabled)
        ? Effect.withSpan(rows, "sql.execute", { kind: "client", captureStackTrace: false, attributes: { "db.operation.name": "execute", "db.query.text": text } })
        : rows
    })
  })
