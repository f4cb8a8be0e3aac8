import { Context, Duration, Effect, Layer, Option, Schedule } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import { ReadPlacement, type ReadPlacementShape } from "../engine/read-placement.js"
import { poolRunner, StatementRunner } from "./direct-statements.js"
import { acquirePgPool, poolPlan, type StoreLimits } from "./postgres.js"
import { ReplicaReader, ReplicaRouter, type ReplicaRouterShape } from "./replica-routing.js"
import { driverErrorOf } from "./sql-failure.js"

type Rows = ReadonlyArray<Record<string, unknown>>

/** A position in the write-ahead log (`pg_lsn`, written `X/Y` in hex) as a number that compares. */
export const lsnValue = (text: string): bigint => {
  const [high, low] = text.split("/")
  return (BigInt(`0x${high}`) << 32n) | BigInt(`0x${low}`)
}

/** How read replicas are used: their URLs, and how long a reader's read waits for one to hold its last write. */
export interface ReplicaSettings {
  readonly urls: ReadonlyArray<string>
  readonly waitMs: number
}

/** How often each replica is asked how far it has replayed, and whether it is one. */
const POLL = Duration.millis(200)
/** A replica that failed is left alone this long before it is asked again. */
const RESTING_MS = 2_000
/** The readers whose last write is remembered; past that, the least recent are forgotten. */
const MOST_READERS = 100_000

interface Replica {
  readonly label: string
  readonly run: (text: string, params: ReadonlyArray<unknown>, prepared?: boolean) => Effect.Effect<Rows, SqlError>
  /** `ready` once it answered as a standby of the primary's own cluster and database. */
  state: "unknown" | "ready" | "refused" | "resting"
  replayed: bigint
  restingUntil: number
}

/** `host:port/database` of a URL, without its credentials: what the logs name a replica by. */
const labelOf = (url: string): string => {
  try {
    const parsed = new URL(url)
    return `${parsed.host}${parsed.pathname}`
  } catch {
    return "(unparsable url)"
  }
}

/** What a replica answers when asked who it is and how far it has replayed. */
const IDENTITY = "SELECT system_identifier::text AS system, current_database() AS database, pg_is_in_recovery() AS standby, pg_last_wal_replay_lsn()::text AS replayed FROM pg_control_system()"

/** A failure a replica has and the primary would not: the replica is set aside and the read runs on the primary. */
const isReplicaTrouble = (error: SqlError): boolean => {
  const reason = error.reason._tag
  // A statement the timeout cancelled is the read's own answer on any server; so is a bad statement.
  if (reason === "StatementTimeoutError" || reason === "SqlSyntaxError") return false
  const driver = driverErrorOf(error)
  const code = typeof driver === "object" && driver !== null ? Reflect.get(driver, "code") : undefined
  // 40001: cancelled by a conflict with recovery (the standby replayed a change the read needed).
  return reason === "ConnectionError" || reason === "UnknownError" || code === "40001" || reason === "SerializationError"
}

/**
 * Read replicas of a PostgreSQL primary (`ERP_DATABASE_READ_URL`): lists, gets and exports run
 * on one; writes, transactions and every other statement stay on the primary.
 *
 * A reader (a credential) reads its own writes: after its write commits, the primary's
 * write-ahead log position is kept for it, and its reads go to a replica only once that replica
 * has replayed past it, waited for up to `waitMs`, else to the primary. Other readers read
 * what the replica has replayed. A replica is used once it answers as a standby of the
 * primary's own cluster (its system identifier) and database; one that fails is set aside
 * and its read runs on the primary.
 */
export const layerReadReplicas = (settings: ReplicaSettings, limits: StoreLimits, applicationName: string): Layer.Layer<never, unknown, SqlClient.SqlClient | StatementRunner> =>
  Layer.effectContext(
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const primaryRunner = yield* StatementRunner
      const [primary] = yield* sql<{ system: string; database: string }>`SELECT system_identifier::text AS system, current_database() AS database FROM pg_control_system()`
      const replicas: Array<Replica> = []
      for (const url of settings.urls) {
        const plan = poolPlan(url, limits, applicationName)
        // Not probed: a replica that cannot be reached leaves the host serving from the primary.
        const pool = yield* acquirePgPool(plan.config, "Failed to connect to a read replica", false)
        replicas.push({ label: labelOf(url), run: poolRunner(pool, plan.prepared, plan.pooled?.statement_timeout).run, state: "unknown", replayed: 0n, restingUntil: 0 })
      }

      const setAside = (replica: Replica, why: string) =>
        Effect.suspend(() => {
          const was = replica.state
          replica.state = "resting"
          replica.restingUntil = Date.now() + RESTING_MS
          return was === "resting" ? Effect.void : Effect.logWarning(`Read replica ${replica.label} set aside, reads go to the primary: ${why}`)
        })

      const ask = (replica: Replica) =>
        replica.run(IDENTITY, []).pipe(
          Effect.flatMap((rows) =>
            Effect.suspend(() => {
              const row = rows[0] ?? {}
              const same = row.system === primary.system && row.database === primary.database
              const replayed = typeof row.replayed === "string" ? row.replayed : undefined
              if (!same || row.standby !== true || replayed === undefined) {
                const was = replica.state
                replica.state = "refused"
                return was === "refused" ? Effect.void : Effect.logWarning(
                  `Read replica ${replica.label} is not used: ${!same ? "it is not a standby of the primary's cluster and database" : "it is not in recovery (a primary, not a standby)"}`
                )
              }
              replica.replayed = lsnValue(replayed)
              const was = replica.state
              replica.state = "ready"
              return was === "ready" ? Effect.void : Effect.logInfo(`Read replica ${replica.label} in use`)
            })
          ),
          Effect.catch((error: SqlError) => setAside(replica, error.message))
        )

      const poll = Effect.forEach(replicas, (replica) => replica.state === "resting" && Date.now() < replica.restingUntil ? Effect.void : ask(replica), { discard: true, concurrency: "unbounded" })
      // Asked once before the host serves, so reads use a replica from the first request.
      yield* poll.pipe(Effect.timeoutOption(Duration.seconds(2)))
      yield* Effect.forkScoped(Effect.repeat(poll, Schedule.spaced(POLL)))

      /** The last write of each reader this host saw commit, by log position; least recent first. */
      const lastWrites = new Map<string, bigint>()
      const remember = (reader: string, position: bigint) => {
        lastWrites.delete(reader)
        lastWrites.set(reader, position)
        if (lastWrites.size > MOST_READERS) lastWrites.delete(lastWrites.keys().next().value!)
      }

      let next = 0
      /** A ready replica that has replayed up to `position`, taking turns among them. */
      const holding = (position: bigint): Replica | undefined => {
        for (let turn = 0; turn < replicas.length; turn++) {
          const replica = replicas[(next + turn) % replicas.length]
          if (replica.state === "ready" && replica.replayed >= position) {
            next = (next + turn + 1) % replicas.length
            return replica
          }
        }
        return undefined
      }

      const onReplica = (replica: Replica, text: string, params: ReadonlyArray<unknown>, prepared: boolean, primaryRead: Effect.Effect<Rows, SqlError>) =>
        replica.run(text, params, prepared).pipe(
          Effect.catch((error: SqlError) => isReplicaTrouble(error) ? Effect.andThen(setAside(replica, error.message), primaryRead) : Effect.fail(error))
        )

      /** A read waiting for a replica to replay its reader's last write. */
      interface Waiter {
        readonly position: bigint
        readonly done: (replica: Replica | undefined) => void
      }
      const waiters = new Set<Waiter>()
      let wake: (() => void) | undefined

      const askReplayed = Effect.forEach(replicas.filter((replica) => replica.state === "ready"), (replica) =>
        replica.run("SELECT pg_last_wal_replay_lsn()::text AS replayed", []).pipe(
          Effect.map((rows) => {
            const replayed = rows[0]?.replayed
            if (typeof replayed === "string") replica.replayed = lsnValue(replayed)
          }),
          Effect.catch((error: SqlError) => setAside(replica, error.message))
        ), { discard: true, concurrency: "unbounded" })

      /**
       * One watcher for every waiting read: while any waits, it asks the replicas how far they have
       * replayed every few milliseconds (a statement per replica, however many reads wait) and
       * lets each read go once a replica holds its reader's write.
       */
      const watch = Effect.gen(function* () {
        while (true) {
          if (waiters.size === 0) {
            yield* Effect.callback<void>((resume) => {
              wake = () => resume(Effect.void)
              return Effect.sync(() => {
                wake = undefined
              })
            })
          }
          wake = undefined
          yield* askReplayed
          for (const waiter of waiters) {
            const replica = holding(waiter.position)
            if (replica && waiters.delete(waiter)) waiter.done(replica)
          }
          if (waiters.size > 0) yield* Effect.sleep(Duration.millis(2))
        }
      })
      yield* Effect.forkScoped(watch)

      /** A replica that holds `position` once the watcher finds one, or none after `waitMs`. */
      const waitFor = (position: bigint) =>
        Effect.callback<Option.Option<Replica>>((resume) => {
          const timer = setTimeout(() => {
            if (waiters.delete(waiter)) waiter.done(undefined)
          }, settings.waitMs)
          const waiter: Waiter = {
            position,
            done: (replica) => {
              clearTimeout(timer)
              resume(Effect.succeed(Option.fromNullishOr(replica)))
            }
          }
          waiters.add(waiter)
          wake?.()
          return Effect.sync(() => {
            clearTimeout(timer)
            waiters.delete(waiter)
          })
        })

      const router: ReplicaRouterShape = {
        run: (reader, text, params, prepared, primaryRead) => {
          const position = lastWrites.get(reader)
          const ready = holding(position ?? 0n)
          if (ready) {
            if (position !== undefined && replicas.every((replica) => replica.state !== "ready" || replica.replayed >= position)) lastWrites.delete(reader)
            return onReplica(ready, text, params, prepared, primaryRead)
          }
          if (position === undefined || settings.waitMs === 0 || !replicas.some((replica) => replica.state === "ready")) return primaryRead
          return Effect.flatMap(waitFor(position), Option.match({
            onNone: () => primaryRead,
            onSome: (replica) => onReplica(replica, text, params, prepared, primaryRead)
          }))
        }
      }

      const positionNow = primaryRunner.run("SELECT pg_current_wal_insert_lsn()::text AS lsn", [], true).pipe(
        Effect.map((rows) => rows[0]?.lsn),
        Effect.option
      )
      const placement: ReadPlacementShape = {
        read: (reader, read) => Effect.provideService(read, ReplicaReader, reader),
        // The insert position after the commit is past the commit's own record: a replica replayed that far shows the write.
        write: (reader, write) =>
          Effect.tap(write, () =>
            Effect.map(positionNow, (lsn) => {
              if (Option.isSome(lsn) && typeof lsn.value === "string") remember(reader, lsnValue(lsn.value))
            }))
      }
      return Context.make(ReadPlacement, placement).pipe(Context.add(ReplicaRouter, router))
    })
  )
