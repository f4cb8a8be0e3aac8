import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Layer, Random } from "effect"
import { boundedKey } from "../ratelimit/memory.js"
import { type RateLimit, type RateLimitDecision, RateLimiter } from "../ratelimit/rate-limiter.js"

export interface SqlRateLimiterOptions {
  /** Share of hits that also delete expired counters (0 never, 1 always). */
  readonly cleanupProbability?: number
  /** Most expired counters one cleanup deletes, so no hit pays for a large backlog. */
  readonly cleanupBatch?: number
}

/**
 * Cleanup on 1 hit in 100, up to 500 rows: each hit adds at most one row (a
 * new key or window), so cleanup can remove five times what hits create.
 */
const DEFAULTS = { cleanupProbability: 0.01, cleanupBatch: 500 } as const

interface HitRow {
  /** Null when the window was already full: the hit is refused and not counted. */
  readonly count: number | null
  readonly reset_seconds: number
}

/**
 * Fixed windows in `rate_limit_counters`, shared by every host on the database.
 *
 * The window start comes from the database's `now()`, not the host's clock, so
 * hosts with skewed clocks still count into the same row. One statement per hit:
 * the upsert serialises concurrent hits on the row, so exactly `limit` pass.
 * The counter stops at `limit` (the `WHERE` of the update): refused hits write
 * nothing, so a flood neither churns the row nor overflows the integer.
 *
 * Call `hit` outside transactions: inside one, `now()` is the transaction's start
 * and the counter row stays locked, holding up that key's hits, until it ends.
 */
export const makeRateLimiterSql = (options: SqlRateLimiterOptions = {}) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const { cleanupProbability, cleanupBatch } = { ...DEFAULTS, ...options }

    const record = (key: string, rule: RateLimit) =>
      sql<HitRow>`WITH w AS (
          SELECT to_timestamp(floor(extract(epoch FROM now()) / ${rule.windowSeconds}::int) * ${rule.windowSeconds}::int) AS start
        ), hit AS (
          INSERT INTO rate_limit_counters AS c (key, window_start, count, expires_at)
          SELECT ${boundedKey(key)}, w.start, 1, w.start + make_interval(secs => ${rule.windowSeconds}::int) FROM w
          ON CONFLICT (key, window_start) DO UPDATE SET count = c.count + 1 WHERE c.count < ${rule.limit}::int
          RETURNING c.count
        )
        SELECT (SELECT count FROM hit) AS count,
          greatest(1, ceil(extract(epoch FROM w.start + make_interval(secs => ${rule.windowSeconds}::int) - now())))::int AS reset_seconds
        FROM w`.pipe(Effect.map((rows) => rows[0]))

    // SKIP LOCKED: hosts cleaning at the same moment take different rows instead of waiting on each other.
    const cleanup = sql`DELETE FROM rate_limit_counters WHERE (key, window_start) IN (
        SELECT key, window_start FROM rate_limit_counters WHERE expires_at < now()
        ORDER BY expires_at LIMIT ${cleanupBatch}::int FOR UPDATE SKIP LOCKED)`

    // A failed cleanup must not fail the request it rode on; the next one retries.
    const maybeCleanup = Effect.flatMap(Random.next, (draw) =>
      draw < cleanupProbability ? cleanup.pipe(Effect.asVoid, Effect.catchAllCause((cause) => Effect.logWarning("rate-limit cleanup failed", cause))) : Effect.void)

    return RateLimiter.of({
      hit: (key, rule) =>
        record(key, rule).pipe(
          Effect.map(({ count, reset_seconds }): RateLimitDecision =>
            count !== null && count <= rule.limit
              ? { allowed: true, limit: rule.limit, remaining: rule.limit - count, resetSeconds: reset_seconds }
              : { allowed: false, limit: rule.limit, remaining: 0, resetSeconds: reset_seconds }),
          Effect.tap(() => maybeCleanup),
          Effect.orDie,
          Effect.withSpan("RateLimiter.hit", { attributes: { "ratelimit.limit": rule.limit, "ratelimit.window_seconds": rule.windowSeconds } })
        )
    })
  })

/** The rate limiter over the store's `SqlClient`: the one to use when several hosts serve one database. */
export const layerRateLimiterSql: Layer.Layer<RateLimiter, never, SqlClient.SqlClient> = Layer.effect(RateLimiter, makeRateLimiterSql())
