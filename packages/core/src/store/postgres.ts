import * as PgClient from "@effect/sql-pg/PgClient"
import type * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import { Config, Effect, Layer } from "effect"
import pg from "pg"
import { loadConfig } from "../config/load.js"
import { storeSettings } from "../config/variables.js"
import { poolRunner, type PreparedStatements, StatementRunner } from "./direct-statements.js"
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
}

/** The limits from the configuration, each with its default. */
export const storeLimitsConfig: Config.Config<StoreLimits> = Config.all({
  poolSize: storeSettings.poolSize.config,
  poolWaitMs: storeSettings.poolWaitMs.config,
  statementTimeoutMs: storeSettings.statementTimeoutMs.config,
  preparedStatements: storeSettings.preparedStatements.config
})

/**
 * PostgreSQL as a `SqlClient`, with the same value parsing as the embedded store. Every
 * connection carries the statement timeout, and a transaction left idle is ended after
 * twice that, so no request holds a connection while it waits on anything else.
 */
export const layerPostgres = (url: string, limits: Partial<StoreLimits> = {}, applicationName = "erp"): Layer.Layer<SqlClient.SqlClient | StatementRunner, unknown> =>
  Layer.unwrapEffect(Effect.map(loadConfig(storeLimitsConfig), (configured) => {
    const settings = { ...configured, ...limits }
    return layerPgPool({
      connectionString: url,
      max: settings.poolSize,
      connectionTimeoutMillis: settings.poolWaitMs,
      statement_timeout: settings.statementTimeoutMs,
      idle_in_transaction_session_timeout: settings.statementTimeoutMs * 2,
      // No JIT: a statement that builds a thousand records in JSON (an export's range) is estimated
      // costly enough to be compiled first, which took 2.4 s; the API's statements never gain from it.
      options: "-c jit=off",
      application_name: applicationName
    }, "PgClient: Failed to connect", settings.preparedStatements > 0 ? { most: settings.preparedStatements, after: 2 } : undefined)
  }))

/**
 * A `SqlClient` over a node-postgres pool with our value parsing, and the pool's
 * `StatementRunner`: the pool answers one `SELECT 1` before the layer is built (a store
 * that cannot be reached fails start-up, with `failure` as its message), and is ended with the layer.
 */
export const layerPgPool = (config: pg.PoolConfig & { readonly application_name: string }, failure: string, prepared?: PreparedStatements): Layer.Layer<SqlClient.SqlClient | StatementRunner, unknown> =>
  Layer.unwrapScoped(
    Effect.map(
      Effect.acquireRelease(
        Effect.tryPromise({
          try: async () => {
            const pool = new pg.Pool({ ...config, types: { getTypeParser } })
            // A connection that dies while idle is dropped by the pool; without a listener Node would throw.
            pool.on("error", () => undefined)
            await pool.query("SELECT 1").catch(async (error) => {
              await pool.end().catch(() => undefined)
              throw error
            })
            return pool
          },
          catch: (cause) => new SqlError({ cause, message: failure })
        }),
        (pool) => Effect.promise(() => pool.end()).pipe(Effect.timeoutOption(1_000))
      ),
      (pool) =>
        Layer.merge(
          PgClient.layerFromPool({ acquire: Effect.succeed(pool), applicationName: config.application_name, types: { getTypeParser } }),
          Layer.succeed(StatementRunner, poolRunner(pool, prepared))
        )
    )
  )
