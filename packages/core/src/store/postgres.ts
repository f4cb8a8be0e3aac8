import * as PgClient from "@effect/sql-pg/PgClient"
import { Config, Context, Effect, Layer, Scope, Stream } from "effect"
import * as Reactivity from "effect/reactivity/Reactivity"
import * as SqlClient from "effect/sql/SqlClient"
import type { Connection } from "effect/sql/SqlConnection"
import type { SqlError } from "effect/sql/SqlError"
import pg from "pg"
import { loadConfig } from "../config/load.js"
import { storeSettings } from "../config/variables.js"
import { cancelBackend, isResults, onPoolConnection, poolRunner, type PoolQuery, type PreparedStatements, StatementRunner } from "./direct-statements.js"
import { connectionFailure, sqlFailure } from "./sql-failure.js"
import { pgTypeParser as getTypeParser } from "./types.js"

/** How much of PostgreSQL one host may take, and for how long one statement may run. */
export interface StoreLimits {
  /** Connections in the pool (`ERP_DB_POOL_SIZE`). */
  readonly poolSize: number
  /** Longest wait for a free connection before 503 `STORE_BUSY` (`ERP_DB_POOL_WAIT_MS`). */
  readonly poolWaitMs: number
  /** Longest a statement may run before PostgreSQL cancels it: 503 `STATEMENT_TIMEOUT` (`ERP_STATEMENT_TIMEOUT_MS`). */
  readonly statementTimeoutMs: number
  /**
   * Statement texts of fixed shape (a record read or written by id) kept prepared on each
   * connection once run twice (`ERP_PREPARED_STATEMENTS`; 0 turns it off, for a
   * pooler in transaction mode that does not carry prepared statements).
   */
  readonly preparedStatements: number
  /**
   * What connects erp to PostgreSQL (`ERP_DB_POOLER`): its own sessions (`session`), or a pooler in
   * transaction mode (`transaction`), which gives each transaction whichever server session is free.
   */
  readonly pooler: "session" | "transaction"
}

/** The limits from the configuration, each with its default. */
export const storeLimitsConfig: Config.Config<StoreLimits> = Config.all({
  poolSize: storeSettings.poolSize.config,
  poolWaitMs: storeSettings.poolWaitMs.config,
  statementTimeoutMs: storeSettings.statementTimeoutMs.config,
  preparedStatements: storeSettings.preparedStatements.config,
  pooler: storeSettings.pooler.config
})

/** The settings every session erp uses must have: a bounded statement, a bounded idle transaction, no JIT. */
export interface SessionSettings {
  readonly statement_timeout: number
  readonly idle_in_transaction_session_timeout: number
  /**
   * A statement that builds a thousand records in JSON (an export's range) is estimated costly
   * enough to be compiled first, which takes far longer than running it; the API's statements
   * never gain from it.
   */
  readonly jit: "off"
}

/**
 * PostgreSQL as a `SqlClient`, with the same value parsing as the embedded store. Every session
 * carries the statement timeout, and a transaction left idle is ended after twice that, so no
 * request holds a connection while it waits on anything else.
 *
 * On its own sessions erp sets them when each connects. Behind a pooler in transaction mode a
 * session outlives the transaction that used it and belongs to nobody, so nothing is set on it:
 * each transaction sets them with `SET LOCAL` as it begins, a statement outside one is cancelled
 * by erp when it outlasts the timeout (the protocol's cancel request, which the pooler passes on),
 * and no statement is kept prepared.
 */
export const layerPostgres = (url: string, limits: Partial<StoreLimits> = {}, applicationName = "erp"): Layer.Layer<SqlClient.SqlClient | StatementRunner, unknown> =>
  Layer.unwrap(Effect.map(loadConfig(storeLimitsConfig), (configured) => {
    const plan = poolPlan(url, { ...configured, ...limits }, applicationName)
    return layerPgPool(plan.config, "PgClient: Failed to connect", plan.prepared, plan.pooled)
  }))

/** How erp opens a pool on `url` under `settings`: the sessions' settings, prepared statements, or a pooler's sessions. */
export const poolPlan = (url: string, settings: StoreLimits, applicationName: string) => {
  const session: SessionSettings = {
    statement_timeout: settings.statementTimeoutMs,
    idle_in_transaction_session_timeout: settings.statementTimeoutMs * 2,
    jit: "off"
  }
  const pooled = settings.pooler === "transaction"
  return {
    config: {
      connectionString: url,
      max: settings.poolSize,
      connectionTimeoutMillis: settings.poolWaitMs,
      application_name: applicationName,
      ...(pooled
        ? {}
        : { statement_timeout: session.statement_timeout, idle_in_transaction_session_timeout: session.idle_in_transaction_session_timeout, options: `-c jit=${session.jit}` })
    },
    prepared: !pooled && settings.preparedStatements > 0 ? { most: settings.preparedStatements, after: 2 } : undefined,
    pooled: pooled ? session : undefined
  }
}

const settingsText = (session: SessionSettings, set: string): string =>
  Object.entries(session).map(([name, value]) => `${set} ${name} = ${typeof value === "number" ? value : `'${value}'`}`).join("; ")

type Results = pg.ResultBuilder | ReadonlyArray<pg.ResultBuilder>

/** The rows of a statement's results: of each statement, for a text of several. */
const rowsOf = (result: Results): ReadonlyArray<unknown> => (isResults(result) ? result.map((each) => each.rows ?? []) : result.rows ?? [])

const asObjects = (text: string, params: ReadonlyArray<unknown>): PoolQuery => (client, callback) =>
  void client.query(new pg.Query(text, params as Array<unknown>, callback))
const asArrays = (text: string, params: ReadonlyArray<unknown>): PoolQuery => (client, callback) => {
  const config: pg.QueryArrayConfig = { text, values: params as Array<unknown>, rowMode: "array" }
  client.query(new pg.Query(config, callback))
}

/** A connection the pool lent for a while (a transaction's), and what it is given back with. */
interface Lent {
  readonly client: pg.PoolClient
  readonly release: (error?: Error) => void
}

/**
 * The `SqlClient` over a node-postgres pool: a statement outside a transaction takes a
 * connection for itself and gives it back; a transaction holds one until it ends. A statement
 * whose fiber is interrupted is cancelled on the server.
 */
const makePoolClient = (pool: pg.Pool, database: string | undefined, pooled: SessionSettings | undefined) =>
  Effect.gen(function* () {
    const send = <A>(client: pg.PoolClient | undefined, query: PoolQuery, outcome: (result: Results) => A): Effect.Effect<A, SqlError> =>
      Effect.callback<A, SqlError>((resume) => {
        const done = (error: SqlError | undefined, result: Results | undefined) =>
          resume(error || result === undefined ? Effect.fail(error ?? sqlFailure(new Error("No result"), "Failed to execute statement")) : Effect.sync(() => outcome(result)))
        if (client === undefined) return Effect.sync(onPoolConnection(pool, query, done, pooled?.statement_timeout))
        let finished = false
        query(client, (error, result) => {
          finished = true
          done(error ? sqlFailure(error, "Failed to execute statement") : undefined, result)
        })
        return Effect.sync(() => {
          if (!finished) cancelBackend(pool, client)
        })
      })

    const connectionOf = (client: pg.PoolClient | undefined): Connection => {
      const execute: Connection["execute"] = (text, params, transformRows) =>
        send(client, asObjects(text, params), (result) => {
          const rows = rowsOf(result) as ReadonlyArray<object>
          return transformRows ? transformRows(rows) : rows
        })
      const values: Connection["executeValues"] = (text, params) =>
        send(client, asArrays(text, params), (result) => rowsOf(result) as ReadonlyArray<ReadonlyArray<unknown>>)
      return {
        execute,
        executeRaw: (text, params) => send(client, asObjects(text, params), (result): unknown => result),
        executeStream: (text, params, transformRows) => Stream.fromIterableEffect(execute(text, params, transformRows)),
        executeValues: values,
        executeValuesUnprepared: values,
        executeUnprepared: execute
      }
    }

    const onPool = connectionOf(undefined)

    /** A connection held until the scope closes; one that failed meanwhile is dropped, not pooled again. */
    const reserve: Effect.Effect<Connection, SqlError, Scope.Scope> = Effect.uninterruptibleMask((restore) =>
      Effect.flatMap(
        restore(Effect.callback<Lent, SqlError>((resume) => {
          let abandoned = false
          pool.connect((cause, client, release) => {
            if (cause || !client) {
              return resume(Effect.fail(sqlFailure(cause ?? new Error("No client returned"), "Failed to acquire connection for transaction", "acquire")))
            }
            if (abandoned) return release()
            resume(Effect.succeed({ client, release }))
          })
          return Effect.sync(() => {
            abandoned = true
          })
        })),
        ({ client, release }) => {
          let failure: Error | undefined
          const onError = (error: Error) => {
            failure = error
          }
          client.on("error", onError)
          return Effect.as(
            Effect.addFinalizer(() =>
              Effect.sync(() => {
                client.off("error", onError)
                release(failure)
              })
            ),
            connectionOf(client)
          )
        }
      )
    )

    return yield* SqlClient.make({
      acquirer: Effect.succeed(onPool),
      borrower: (use) => use(onPool),
      transactionAcquirer: reserve,
      ...(pooled ? { beginTransaction: `BEGIN; ${settingsText(pooled, "SET LOCAL")}` } : {}),
      compiler: PgClient.makeCompiler(),
      driver: "pg",
      spanAttributes: [["db.system.name", "postgresql"], ...(database ? [["db.namespace", database] as const] : [])]
    })
  })

/** The database a pool's sessions open, for the spans' `db.namespace`. */
const databaseOf = (config: pg.PoolConfig): string | undefined => {
  if (config.database) return config.database
  try {
    return config.connectionString ? decodeURIComponent(new URL(config.connectionString).pathname.replace(/^\//, "")) || undefined : undefined
  } catch {
    return undefined
  }
}

/**
 * A `SqlClient` over a node-postgres pool with our value parsing, and the pool's
 * `StatementRunner`: the pool answers one `SELECT 1` before the layer is built (a store
 * that cannot be reached fails start-up, with `failure` as its message), and is ended with the layer.
 * With `pooled`, the sessions are a transaction-mode pooler's (`layerPostgres`).
 */
export const layerPgPool = (
  config: pg.PoolConfig & { readonly application_name: string },
  failure: string,
  prepared?: PreparedStatements,
  pooled?: SessionSettings
): Layer.Layer<SqlClient.SqlClient | StatementRunner, unknown> =>
  Layer.effectContext(
    Effect.gen(function* () {
      const pool = yield* acquirePgPool(config, failure)
      const client = yield* makePoolClient(pool, databaseOf(config), pooled)
      return Context.make(SqlClient.SqlClient, client).pipe(Context.add(StatementRunner, poolRunner(pool, prepared, pooled?.statement_timeout)))
    })
  ).pipe(Layer.provide(Reactivity.layer))

/**
 * A node-postgres pool with our value parsing, ended with the scope. With `probe`, the pool answers
 * one `SELECT 1` first (a store that cannot be reached fails with `failure` as its message);
 * without it the pool connects at its first statement.
 */
export const acquirePgPool = (config: pg.PoolConfig, failure: string, probe = true): Effect.Effect<pg.Pool, SqlError, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: async () => {
        const pool = new pg.Pool({ ...config, types: { getTypeParser } })
        // A connection that dies while idle is dropped by the pool; without a listener Node would throw.
        pool.on("error", () => undefined)
        if (probe) {
          await pool.query("SELECT 1").catch(async (error) => {
            await pool.end().catch(() => undefined)
            throw error
          })
        }
        return pool
      },
      catch: (cause) => connectionFailure(cause, failure)
    }),
    (pool) => Effect.promise(() => pool.end()).pipe(Effect.interruptible, Effect.timeoutOption(1_000))
  )
