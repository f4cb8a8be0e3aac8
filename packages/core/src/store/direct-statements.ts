import { Context, Effect, Option, References } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import type * as Statement from "effect/sql/Statement"
import * as net from "node:net"
import pg from "pg"
import { sha256 } from "../sha256.js"
import { ReplicaReader, ReplicaRouter } from "./replica-routing.js"
import { sqlFailure } from "./sql-failure.js"

type Rows = ReadonlyArray<Record<string, unknown>>

/** A statement's outcome, as node-postgres hands it over. */
type RowsCallback = (error: SqlError | undefined, rows: Rows) => void

/**
 * Runs a statement's text on the driver itself. A statement through `effect/sql` opens a
 * span, a scope and a connection lease of its own, which cost more CPU than the driver's own
 * work (bench/README.md). The store provides this where it owns the driver; without it
 * statements go the usual way.
 */
export class StatementRunner extends Context.Service<StatementRunner, {
  /** `prepared`: the statement's shape is fixed by the code (no caller's filter in it), so its plan may be kept. */
  readonly run: (text: string, params: ReadonlyArray<unknown>, prepared?: boolean) => Effect.Effect<Rows, SqlError>
}>()("erp/core/StatementRunner") {}

/** How many statement texts a process keeps prepared, and after how many runs of one it does. */
export interface PreparedStatements {
  readonly most: number
  readonly after: number
}

/**
 * Names for the statement texts run often (`after` runs), up to `most` of them; others run
 * unnamed. A named statement is parsed and planned once per connection: the record-building
 * statements of a read or write by id cost PostgreSQL several times more to plan than to run
 * from the kept plan (bench/README.md). Each kept plan takes the server's memory on every
 * connection, hence the bound; texts past it are never named, so nothing is evicted that a
 * connection still holds.
 */
export const statementNames = ({ most, after }: PreparedStatements) => {
  const names = new Map<string, string>()
  const runs = new Map<string, number>()
  return (text: string): string | undefined => {
    const known = names.get(text)
    if (known !== undefined || names.size >= most) return known
    const count = (runs.get(text) ?? 0) + 1
    if (count < after) {
      if (runs.size >= most * 8) runs.clear()
      runs.set(text, count)
      return undefined
    }
    runs.delete(text)
    const name = `erp_${sha256(text, "base64url").slice(0, 24)}`
    names.set(text, name)
    return name
  }
}

/** How a statement is sent on a connection the pool lent: its outcome goes to `callback`. */
export type PoolQuery = (client: pg.PoolClient, callback: (error: Error | undefined, result: pg.ResultBuilder | ReadonlyArray<pg.ResultBuilder>) => void) => void

/**
 * One statement on a connection of `pool`: the connection is taken and given back around it,
 * and `cancel` (the answer) cancels the statement on the server when it is under way. Its
 * outcome goes to `done`, unless it was cancelled first. With `timeoutMs` (sessions a pooler
 * lends, which carry no statement timeout of erp's), a statement still running after that long is
 * cancelled on the server, which answers it as PostgreSQL's own timeout does.
 */
export const onPoolConnection = (
  pool: pg.Pool,
  query: PoolQuery,
  done: (error: SqlError | undefined, result: pg.ResultBuilder | ReadonlyArray<pg.ResultBuilder> | undefined) => void,
  timeoutMs?: number
): (() => void) => {
  let client: pg.PoolClient | undefined
  let finished = false
  let timer: ReturnType<typeof setTimeout> | undefined
  let timedOut = false
  pool.connect((cause, connected, release) => {
    if (cause || !connected) {
      finished = true
      return done(sqlFailure(cause ?? new Error("No client returned"), "Failed to acquire connection", "acquire"), undefined)
    }
    if (finished) return release()
    client = connected
    listening(connected)
    if (timeoutMs !== undefined) {
      timer = setTimeout(() => {
        timedOut = true
        cancelBackend(pool, connected)
      }, timeoutMs)
    }
    query(connected, (error, result) => {
      clearTimeout(timer)
      const cancelled = finished
      finished = true
      // A cancelled statement's connection is closed, not pooled again: the cancel goes on another
      // connection, and landing after the statement ended it would stop the next one run here (a 503
      // to another request; PostgreSQL ignores a cancel only while the session is idle).
      release(cancelled || timedOut ? new Error("statement cancelled") : error && isBroken(error) ? error : undefined)
      if (!cancelled) done(error ? sqlFailure(error, "Failed to execute statement") : undefined, error ? undefined : result)
    })
  })
  return () => {
    if (finished) return
    finished = true
    clearTimeout(timer)
    // Cancelled on another connection: the statement's own is busy running it.
    if (client) cancelBackend(pool, client)
  }
}

const heard = new WeakSet<pg.PoolClient>()

/**
 * A connection that ends under a statement fails the statement and is also emitted as the
 * client's `error` event, which the pool listens for only while the client is idle: one
 * listener for the client's life keeps that from reaching the process as an uncaught error.
 */
const listening = (client: pg.PoolClient): void => {
  if (heard.has(client)) return
  heard.add(client)
  client.on("error", () => undefined)
}

/** The cancel key node-postgres keeps for a session it opened (not in its type declarations). */
const cancelKeyOf = (client: pg.PoolClient): { readonly processID: number; readonly secretKey: number } | undefined => {
  const processID: unknown = Reflect.get(client, "processID")
  const secretKey: unknown = Reflect.get(client, "secretKey")
  return typeof processID === "number" && typeof secretKey === "number" ? { processID, secretKey } : undefined
}

/** The protocol's CancelRequest: its length, the request code 80877102, and the session's key. */
const cancelRequest = (processID: number, secretKey: number): Buffer => {
  const message = Buffer.alloc(16)
  message.writeInt32BE(16, 0)
  message.writeInt32BE(80877102, 4)
  message.writeInt32BE(processID, 8)
  message.writeInt32BE(secretKey, 12)
  return message
}

/**
 * Asks the server to cancel what `client`'s session runs (best effort: a failure is ignored), by
 * the protocol's own cancel request on a connection of its own, as psql does: it needs no
 * connection of the pool (which may all be busy), and a pooler in transaction mode passes it to
 * the server session the client is linked to, where `pg_cancel_backend` would name the pooler's
 * own process id.
 */
export const cancelBackend = (pool: pg.Pool, client: pg.PoolClient): void => {
  const key = cancelKeyOf(client)
  if (key === undefined || pool.ending) return
  const { host, port } = new pg.Client(pool.options)
  const socket = host.startsWith("/") ? net.connect(`${host}/.s.PGSQL.${port}`) : net.connect(port, host)
  socket.on("error", () => socket.destroy())
  socket.setTimeout(5_000, () => socket.destroy())
  // Sent, then left for the server to close: a pooler that sees the client close first drops the request.
  socket.on("connect", () => socket.write(cancelRequest(key.processID, key.secretKey)))
  socket.on("end", () => socket.destroy())
}

/**
 * A node-postgres pool's runner: the connection is taken and given back around the one
 * statement, as the store's `SqlClient` does, and a statement whose fiber is interrupted (its
 * client went away) is cancelled on the server, as there.
 */
export const poolRunner = (pool: pg.Pool, prepared?: PreparedStatements, timeoutMs?: number): Context.Service.Shape<typeof StatementRunner> => {
  const nameOf = prepared ? statementNames(prepared) : () => undefined
  const start = (text: string, params: ReadonlyArray<unknown>, keep: boolean, done: RowsCallback) => {
    const name = keep ? nameOf(text) : undefined
    return onPoolConnection(pool, (connected, callback) => {
      // A query made from its text, named after: from a config object the driver makes a copy of
      // every property descriptor first, work a small statement would pay on every run.
      const query = new pg.Query(text, params as Array<unknown>, callback) as pg.Query & { name?: string }
      if (name) query.name = name
      connected.query(query)
    }, (error, result) => done(error, result === undefined || isResults(result) ? [] : result.rows), timeoutMs)
  }
  return {
    run: (text, params, keep = false) =>
      Effect.callback<Rows, SqlError>((resume) => {
        const cancel = start(text, params, keep, (error, rows) => resume(error ? Effect.fail(error) : Effect.succeed(rows)))
        return Effect.sync(cancel)
      })
  }
}

/** Several statements' results (a text of several statements, sent without parameters). */
export const isResults = (result: pg.ResultBuilder | ReadonlyArray<pg.ResultBuilder>): result is ReadonlyArray<pg.ResultBuilder> => Array.isArray(result)

/** A connection that failed below the statement (not a SQL error) is dropped, not pooled again. */
const isBroken = (error: Error): boolean => !("code" in error) || typeof (error as { code?: unknown }).code !== "string" || !/^[0-9A-Z]{5}$/.test((error as { code: string }).code)

/**
 * Runs `statement` on the store's runner unless the fiber holds a transaction (whose
 * statements go on its connection): the statement itself then, and without a runner. A read
 * placed on a replica (`ReplicaReader` set, and the store has replicas) goes where the
 * `ReplicaRouter` sends it. A fiber that traces gets the `sql.execute` span `effect/sql` would
 * make, with the text.
 */
export const makeDirect = Effect.map(
  Effect.all([Effect.serviceOption(StatementRunner), Effect.serviceOption(SqlClient.SqlClient), ReplicaRouter]),
  ([runner, client, router]) =>
    <A extends object>(statement: Statement.Statement<A>, prepared = false): Effect.Effect<ReadonlyArray<A>, SqlError> => {
      if (Option.isNone(runner) || Option.isNone(client)) return statement
      const run = runner.value.run
      const transaction = client.value.transactionService
      return Effect.withFiber((fiber) => {
        if (Option.isSome(Context.getOption(fiber.context, transaction))) return statement
        const [text, params] = statement.compile()
        const reader = router === undefined ? undefined : fiber.getRef(ReplicaReader)
        const onPrimary = run(text, params, prepared)
        const rows = (router === undefined || reader === undefined ? onPrimary : router.run(reader, text, params, prepared, onPrimary)) as Effect.Effect<ReadonlyArray<A>, SqlError>
        return fiber.getRef(References.TracerEnabled)
          ? Effect.withSpan(rows, "sql.execute", { kind: "client", captureStackTrace: false, attributes: { "db.operation.name": "execute", "db.query.text": text } })
          : rows
      })
    }
)
