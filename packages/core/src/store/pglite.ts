import * as PgClient from "@effect/sql-pg/PgClient"
import { Context, Effect, Layer, Result, Stream } from "effect"
import * as Reactivity from "effect/reactivity/Reactivity"
import * as SqlClient from "effect/sql/SqlClient"
import type { Connection } from "effect/sql/SqlConnection"
import type { SqlError } from "effect/sql/SqlError"
import * as path from "node:path"
import { InvalidSetting, loadConfig } from "../config/load.js"
import { memorySize } from "../config/setting.js"
import { storeSettings } from "../config/variables.js"
import { embeddedSocketAnswers, serveEmbeddedSocket, SOCKET_PORT, socketFolder } from "./embedded-socket.js"
import { acquireDataDirLock, DataDirLocked } from "./lock.js"
import { StatementRunner } from "./direct-statements.js"
import { copyStoreTemplate } from "./template.js"
import { layerPgPool } from "./postgres.js"
import { type PgliteThread, startPgliteThread } from "./pglite-thread.js"
import { makeSessionTurns, SessionOwner, type SessionTurns } from "./session-turns.js"
import { connectionFailure, sqlFailure } from "./sql-failure.js"
import { StoreProbe } from "./store-probe.js"

export interface PgliteOptions {
  /** Folder of the persistent store; omitted means in memory. */
  readonly dataDir?: string
  /** A dump (from `dumpDataDir`) to start from: how tests clone a migrated template. */
  readonly loadDataDir?: Blob
  /** Serve the store on the folder's socket while open (default true with a `dataDir`). */
  readonly serveSocket?: boolean
  /** The store template a new `dataDir` starts as a copy of (default: the one `npm run build` makes, when present); false for none. */
  readonly template?: string | false
  /** PostgreSQL's buffer pool, e.g. `64MB` (default `ERP_EMBEDDED_SHARED_BUFFERS`). */
  readonly sharedBuffers?: string
}

/** The buffer pool asked for: the option, checked as `ERP_EMBEDDED_SHARED_BUFFERS` is, else that setting. */
const sharedBuffersOf = (options: PgliteOptions): Effect.Effect<string, InvalidSetting> => {
  const given = options.sharedBuffers?.trim()
  if (!given) return loadConfig(storeSettings.embeddedSharedBuffers.config)
  return Result.match(memorySize.parse(given, "The embedded store's buffer pool (sharedBuffers)"), {
    onFailure: (message) => Effect.fail(new InvalidSetting(message)),
    onSuccess: Effect.succeed
  })
}

/**
 * Opens the store in a thread of its own (pglite-thread.ts): a statement runs there, never in
 * this thread, which stays free for HTTP, /health and timers while one runs.
 */
export const openPglite = (options: PgliteOptions) =>
  // Checked before anything opens: a size PostgreSQL would not take is the caller's mistake, told in one line.
  Effect.flatMap(sharedBuffersOf(options), (sharedBuffers) => Effect.acquireRelease(
    Effect.tryPromise({
      try: async () => {
        // Started first: the thread loads PGlite while this one copies the template.
        const thread = startPgliteThread()
        try {
          if (options.dataDir && !options.loadDataDir && options.template !== false) {
            await copyStoreTemplate(path.join(options.dataDir, "pgdata"), options.template)
          }
          await thread.open({
            ...(options.dataDir ? { dataDir: path.join(options.dataDir, "pgdata") } : {}),
            ...(options.loadDataDir ? { loadDataDir: options.loadDataDir } : {}),
            sharedBuffers
          })
          return thread
        } catch (error) {
          await thread.close()
          throw error
        }
      },
      catch: (cause) => connectionFailure(cause, `Could not open the embedded store: ${String(cause)}`)
    }),
    (thread) => Effect.promise(() => thread.close())
  ))

type Rows = ReadonlyArray<Record<string, unknown>>

/**
 * PGlite is a single session: a statement outside a transaction must never run inside another
 * fiber's transaction. The session goes to one owner at a time (`turns`, in rotation between the
 * tenants with statements waiting): a transaction holds it from BEGIN to COMMIT, a lone statement
 * until the worker answers (even when its fiber is gone by then: the worker runs it anyway).
 */
export const makePgliteClient = (db: PgliteThread, turns: SessionTurns) =>
  Effect.gen(function* () {
    const compiler = PgClient.makeCompiler()

    const run = (sqlText: string, params: ReadonlyArray<unknown>, rowMode: "object" | "array"): Promise<ReadonlyArray<unknown>> => {
      if (params.length === 0 && rowMode === "object") {
        // The simple protocol takes several statements at once (migrations).
        return db.exec(sqlText).then((results) => (results.length === 1 ? results[0] : results))
      }
      return db.query(sqlText, params, rowMode)
    }
    const failed = (cause: unknown) => sqlFailure(cause, `Failed to execute statement: ${cause instanceof Error ? cause.message : String(cause)}`)

    /** A statement with the session held already (inside a transaction). */
    const runHeld = (sqlText: string, params: ReadonlyArray<unknown>, rowMode: "object" | "array") =>
      Effect.tryPromise({ try: () => run(sqlText, params, rowMode), catch: failed })

    /** A lone statement in its owner's turn (the fiber's `SessionOwner`). */
    const runInTurn = (sqlText: string, params: ReadonlyArray<unknown>, rowMode: "object" | "array") =>
      Effect.withFiber<ReadonlyArray<unknown>, SqlError>((fiber) => {
        const owner = fiber.getRef(SessionOwner)
        return Effect.callback<ReadonlyArray<unknown>, SqlError>((resume) => {
          const leave = turns.enter(owner, (release) => {
            run(sqlText, params, rowMode).then(
              (rows) => {
                release()
                resume(Effect.succeed(rows))
              },
              (cause) => {
                release()
                resume(Effect.fail(failed(cause)))
              }
            )
          })
          return Effect.sync(leave)
        })
      })

    const makeConnection = (statement: typeof runHeld): Connection => {
      const execute = (
        sqlText: string,
        params: ReadonlyArray<unknown>,
        transformRows: (<A extends object>(rows: ReadonlyArray<A>) => ReadonlyArray<A>) | undefined
      ) =>
        statement(sqlText, params, "object").pipe(
          Effect.map((rows) => (transformRows ? transformRows(rows as Rows) : rows))
        )
      return {
        execute,
        executeRaw: (sqlText, params) => statement(sqlText, params, "object"),
        executeValues: (sqlText, params) =>
          statement(sqlText, params, "array") as Effect.Effect<ReadonlyArray<ReadonlyArray<unknown>>, SqlError>,
        executeValuesUnprepared: (sqlText, params) =>
          statement(sqlText, params, "array") as Effect.Effect<ReadonlyArray<ReadonlyArray<unknown>>, SqlError>,
        executeUnprepared: execute,
        executeStream: (sqlText, params, transformRows) =>
          Stream.fromIterableEffect(execute(sqlText, params, transformRows))
      }
    }

    const free = makeConnection(runInTurn)
    const held = makeConnection(runHeld)

    /** The session held by the transaction's owner until the transaction ends. */
    const holdSession = Effect.acquireRelease(
      Effect.flatMap(SessionOwner, (owner) =>
        Effect.callback<() => void>((resume) => {
          const leave = turns.enter(owner, (release) => resume(Effect.succeed(release)))
          return Effect.sync(leave)
        })),
      (release) => Effect.sync(release)
    )

    const runner: Context.Service.Shape<typeof StatementRunner> = { run: (sqlText, params) => runInTurn(sqlText, params, "object") as Effect.Effect<Rows, SqlError> }
    /**
     * The store answers when its thread runs with the store open: a `SELECT 1` while the session is
     * free, nothing more while it is busy (the statement under way is the store answering, and a
     * probe would wait behind a tenant's costliest statement).
     */
    const probe: Context.Service.Shape<typeof StoreProbe> = {
      check: Effect.suspend(() => {
        const stopped = db.stopped()
        if (stopped) return Effect.fail(connectionFailure(stopped, stopped.message))
        return turns.idle() ? Effect.asVoid(runInTurn("SELECT 1", [], "object")) : Effect.void
      })
    }
    const client = yield* SqlClient.make({
      acquirer: Effect.succeed(free),
      transactionAcquirer: Effect.as(holdSession, held),
      compiler,
      driver: "pglite",
      spanAttributes: [["db.system.name", "postgresql"], ["db.namespace", "pglite"]]
    })
    return { client, runner, probe }
  })

/**
 * The embedded store as a `SqlClient`. The first process to open a data folder holds its
 * lock and serves the store on the folder's socket; a later one (the CLI beside a running
 * host) connects through that socket, and only when nobody answers there is it refused. The
 * holder also provides its `StoreProbe` (found with `Effect.serviceOption`, as `storeAnswers` does).
 */
export const layerPglite = (options: PgliteOptions): Layer.Layer<SqlClient.SqlClient | StatementRunner, unknown> =>
  Layer.effectContext(
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
      const turns = makeSessionTurns()
      const { client, runner, probe } = yield* makePgliteClient(db, turns)
      if (dataDir && options.serveSocket !== false) yield* serveEmbeddedSocket(db, dataDir, turns)
      return Context.make(SqlClient.SqlClient, client).pipe(Context.add(StatementRunner, runner), Context.add(StoreProbe, probe))
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
