import * as Reactivity from "@effect/experimental/Reactivity"
import { PGlite, type Results } from "@electric-sql/pglite"
import { unaccent } from "@electric-sql/pglite/contrib/unaccent"
import * as SqlClient from "@effect/sql/SqlClient"
import type { Connection } from "@effect/sql/SqlConnection"
import { SqlError } from "@effect/sql/SqlError"
import { Context, Effect, Layer, Stream } from "effect"
import * as path from "node:path"
import * as PgClient from "@effect/sql-pg/PgClient"
import { embeddedSocketAnswers, serveEmbeddedSocket, SOCKET_PORT, socketFolder } from "./embedded-socket.js"
import { acquireDataDirLock, DataDirLocked } from "./lock.js"
import { StatementRunner } from "./direct-statements.js"
import { copyStoreTemplate } from "./template.js"
import { layerPgPool } from "./postgres.js"
import { textParsers } from "./types.js"

export interface PgliteOptions {
  /** Folder of the persistent store; omitted means in memory. */
  readonly dataDir?: string
  /** A dump (from `dumpDataDir`) to start from: how tests clone a migrated template. */
  readonly loadDataDir?: Blob
  /** Serve the store on the folder's socket while open (default true with a `dataDir`). */
  readonly serveSocket?: boolean
  /** The store template a new `dataDir` starts as a copy of (default: the one `npm run build` makes, when present); false for none. */
  readonly template?: string | false
  /** PostgreSQL's buffer pool, e.g. `64MB` (default `ERP_EMBEDDED_SHARED_BUFFERS`, else 32MB). */
  readonly sharedBuffers?: string
}

/**
 * PostgreSQL's own default is 128MB. PGlite zeroes the whole of PostgreSQL's shared memory each
 * time it opens a store, and the process keeps it: at 128MB that was a fifth of a host's start
 * (0.3 s here) and 100 MB of its memory. A store that outgrows 32MB of hot pages still reads the
 * rest from the operating system's file cache.
 */
const DEFAULT_SHARED_BUFFERS = "32MB"

const sharedBuffersOf = (options: PgliteOptions): string => {
  const text = (options.sharedBuffers ?? process.env.ERP_EMBEDDED_SHARED_BUFFERS ?? "").trim()
  if (text === "") return DEFAULT_SHARED_BUFFERS
  if (!/^[1-9]\d*(kB|MB|GB)$/.test(text)) throw new Error(`The embedded store's buffer pool (sharedBuffers, or ERP_EMBEDDED_SHARED_BUFFERS) must be a size such as 32MB (kB, MB or GB), got "${text}"`)
  return text
}

export const openPglite = (options: PgliteOptions) => {
  // Checked before anything opens: a size PostgreSQL would not take is the caller's mistake, told in one line.
  const sharedBuffers = sharedBuffersOf(options)
  return Effect.acquireRelease(
    Effect.tryPromise({
      try: async () => {
        if (options.dataDir && !options.loadDataDir && options.template !== false) {
          await copyStoreTemplate(path.join(options.dataDir, "pgdata"), options.template)
        }
        return PGlite.create({
          ...(options.dataDir ? { dataDir: path.join(options.dataDir, "pgdata") } : {}),
          ...(options.loadDataDir ? { loadDataDir: options.loadDataDir } : {}),
          extensions: { unaccent },
          parsers: textParsers,
          startParams: [...PGlite.defaultStartParams, "-c", `shared_buffers=${sharedBuffers}`]
        })
      },
      catch: (cause) => new SqlError({ cause, message: `Could not open the embedded store: ${String(cause)}` })
    }),
    (db) => Effect.promise(() => db.close()).pipe(Effect.ignore)
  )
}

type Rows = ReadonlyArray<Record<string, unknown>>

/**
 * PGlite is a single session: a statement outside a transaction must never run
 * inside another fiber's transaction. One permit guards the session; a
 * transaction holds it from BEGIN to COMMIT, a lone statement for its own run.
 */
export const makePgliteClient = (db: PGlite, session: Effect.Semaphore) =>
  Effect.gen(function* () {
    const compiler = PgClient.makeCompiler()

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

    const runner: Context.Tag.Service<StatementRunner> = { run: (sqlText, params) => session.withPermits(1)(run(sqlText, params, "object")) as Effect.Effect<Rows, SqlError> }
    const client = yield* SqlClient.make({
      acquirer: Effect.succeed(free),
      transactionAcquirer: Effect.as(Effect.acquireRelease(session.take(1), () => session.release(1)), held),
      compiler,
      spanAttributes: [["db.system.name", "postgresql"], ["db.namespace", "pglite"]]
    })
    return { client, runner }
  })

/**
 * The embedded store as a `SqlClient`. The first process to open a data folder holds its
 * lock and serves the store on the folder's socket; a later one (the CLI beside a running
 * host) connects through that socket, and only when nobody answers there is it refused.
 */
export const layerPglite = (options: PgliteOptions): Layer.Layer<SqlClient.SqlClient | StatementRunner, unknown> =>
  Layer.scopedContext(
    Effect.gen(function* () {
      const dataDir = options.dataDir
      if (dataDir) {
        const held = yield* acquireDataDirLock(dataDir).pipe(
          Effect.as(false),
          Effect.catchIf((error) => error instanceof DataDirLocked, (error) =>
            Effect.flatMap(Effect.promise(() => embeddedSocketAnswers(dataDir)), (answers) => (answers ? Effect.succeed(true) : Effect.fail(error)))
          )
        )
        if (held) return yield* Layer.build(layerThroughHolder(dataDir))
      }
      const db = yield* openPglite(options)
      const session = yield* Effect.makeSemaphore(1)
      const { client, runner } = yield* makePgliteClient(db, session)
      if (dataDir && options.serveSocket !== false) {
        yield* serveEmbeddedSocket(db, dataDir, {
          take: () => Effect.runPromise(session.take(1)).then(() => undefined),
          release: () => Effect.runSync(session.release(1))
        })
      }
      return Context.make(SqlClient.SqlClient, client).pipe(Context.add(StatementRunner, runner))
    })
  ).pipe(Layer.provide(Reactivity.layer))

/**
 * The store of a folder another process holds, through its socket. One connection: the
 * holder runs one statement at a time anyway, and the session settings a pool would send
 * (statement timeout) must not change the holder's own session.
 */
const layerThroughHolder = (dataDir: string): Layer.Layer<SqlClient.SqlClient | StatementRunner, unknown> =>
  layerPgPool(
    { host: socketFolder(dataDir), port: SOCKET_PORT, user: "postgres", database: "postgres", max: 1, application_name: "erp-cli" },
    `Could not reach the embedded store through ${socketFolder(dataDir)}`
  )
