import * as Reactivity from "@effect/experimental/Reactivity"
import { PGlite, type Results } from "@electric-sql/pglite"
import { unaccent } from "@electric-sql/pglite/contrib/unaccent"
import * as SqlClient from "@effect/sql/SqlClient"
import type { Connection } from "@effect/sql/SqlConnection"
import { SqlError } from "@effect/sql/SqlError"
import { makeCompiler } from "@effect/sql-pg/PgClient"
import { Context, Effect, Layer, Stream } from "effect"
import * as path from "node:path"
import { acquireDataDirLock } from "./lock.js"
import { textParsers } from "./types.js"

export interface PgliteOptions {
  /** Folder of the persistent store; omitted means in memory. */
  readonly dataDir?: string
  /** A dump (from `dumpDataDir`) to start from: how tests clone a migrated template. */
  readonly loadDataDir?: Blob
}

export const openPglite = (options: PgliteOptions) =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: () =>
        PGlite.create({
          ...(options.dataDir ? { dataDir: path.join(options.dataDir, "pgdata") } : {}),
          ...(options.loadDataDir ? { loadDataDir: options.loadDataDir } : {}),
          extensions: { unaccent },
          parsers: textParsers
        }),
      catch: (cause) => new SqlError({ cause, message: `Could not open the embedded store: ${String(cause)}` })
    }),
    (db) => Effect.promise(() => db.close()).pipe(Effect.ignore)
  )

type Rows = ReadonlyArray<Record<string, unknown>>

/**
 * PGlite is a single session: a statement outside a transaction must never run
 * inside another fiber's transaction. One permit guards the session; a
 * transaction holds it from BEGIN to COMMIT, a lone statement for its own run.
 */
export const makePgliteClient = (db: PGlite) =>
  Effect.gen(function* () {
    const session = yield* Effect.makeSemaphore(1)
    const compiler = makeCompiler()

    const run = (sqlText: string, params: ReadonlyArray<unknown>, rowMode: "object" | "array") =>
      Effect.tryPromise({
        try: async (): Promise<ReadonlyArray<unknown>> => {
          // PGlite runs in this thread and blocks it while a statement runs. A turn of the event
          // loop first lets requests that arrived meanwhile be read and queue for the session,
          // so one tenant's statements cannot follow each other without a gap.
          await new Promise((resolve) => setImmediate(resolve))
          if (params.length === 0 && rowMode === "object") {
            // The simple protocol takes several statements at once (migrations).
            const results: Array<Results> = await db.exec(sqlText)
            return results.length === 1 ? results[0].rows : results.map((result) => result.rows)
          }
          const result = await db.query(sqlText, params as Array<unknown>, { rowMode })
          return result.rows
        },
        catch: (cause) => new SqlError({ cause, message: `Failed to execute statement: ${(cause as Error).message}` })
      })

    const makeConnection = (guard: <A, E>(effect: Effect.Effect<A, E>) => Effect.Effect<A, E>): Connection => {
      const execute = (
        sqlText: string,
        params: ReadonlyArray<unknown>,
        transformRows: (<A extends object>(rows: ReadonlyArray<A>) => ReadonlyArray<A>) | undefined
      ) =>
        guard(run(sqlText, params, "object")).pipe(
          Effect.map((rows) => (transformRows ? transformRows(rows as Rows) : rows))
        )
      return {
        execute,
        executeRaw: (sqlText, params) => guard(run(sqlText, params, "object")),
        executeValues: (sqlText, params) =>
          guard(run(sqlText, params, "array")) as Effect.Effect<ReadonlyArray<ReadonlyArray<unknown>>, SqlError>,
        executeUnprepared: execute,
        executeStream: (sqlText, params, transformRows) =>
          Stream.fromIterableEffect(execute(sqlText, params, transformRows))
      }
    }

    const free = makeConnection(session.withPermits(1))
    const held = makeConnection((effect) => effect)

    return yield* SqlClient.make({
      acquirer: Effect.succeed(free),
      transactionAcquirer: Effect.as(Effect.acquireRelease(session.take(1), () => session.release(1)), held),
      compiler,
      spanAttributes: [["db.system.name", "postgresql"], ["db.namespace", "pglite"]]
    })
  })

/** The embedded store as a `SqlClient`, holding the data folder's lock while open. */
export const layerPglite = (options: PgliteOptions): Layer.Layer<SqlClient.SqlClient, unknown> =>
  Layer.scopedContext(
    Effect.gen(function* () {
      if (options.dataDir) yield* acquireDataDirLock(options.dataDir)
      const db = yield* openPglite(options)
      const client = yield* makePgliteClient(db)
      return Context.make(SqlClient.SqlClient, client)
    })
  ).pipe(Layer.provide(Reactivity.layer))
