import * as SqlClient from "effect/sql/SqlClient"
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
  /** Hits in the window after this one; null when the window was full: the hit is refused and not recorded. */
  readonly count: number | null
  readonly reset_seconds: number
}

/**
 * A sliding log in `rate_limit_windows`, shared by every host on the database: per key,
 * the times of the hits allowed in the last window. A hit is allowed when fewer than
 * `limit` of them are younger than `windowSeconds`, so no window of that length ever holds
 * more than `limit` (a fixed window lets `limit` through at the end of one minute and
 * `limit` more at the start of the next).
 *
 * Times come from the database's `now()`, not the host's clock, so hosts with skewed
 * clocks count alike. One statement per hit: the upsert serialises concurrent hits on
 * the row, so exactly `limit` pass. Refused hits write nothing, so a flood neither
 * churns the row nor grows it past `limit` timestamps.
 *
 * Call `hit` outside transactions: inside one, `now()` is the transaction's start
 * and the row stays locked, holding up that key's hits, until it ends.
 */
export const makeRateLimiterSql = (options: SqlRateLimiterOptions = {}) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const { cleanupProbability, cleanupBatch } = { ...DEFAULTS, ...options }

    // `live` is the log without the hits that left the window; the update runs only when it
    // has room. When refused, the reset is read from the row as the statement saw it.
    const record = (key: string, rule: RateLimit) => {
      const window = sql`make_interval(secs => ${rule.windowSeconds}::int)`
      const bounded = boundedKey(key)
      return sql<HitRow>`WITH hit AS (
          INSERT INTO rate_limit_windows AS w (key, hits, expires_at)
          VALUES (${bounded}, ARRAY[now()], now() + ${window})
          ON CONFLICT (key) DO UPDATE SET
            hits = array(SELECT h FROM unnest(w.hits) h WHERE h > now() - ${window} ORDER BY h) || now(),
            expires_at = now() + ${window}
          WHERE (SELECT count(*) FROM unnest(w.hits) h WHERE h > now() - ${window}) < ${rule.limit}::int
          RETURNING w.hits
        ), oldest AS (
          SELECT coalesce(
            (SELECT min(h) FROM hit, unnest(hit.hits) h),
            (SELECT min(h) FROM rate_limit_windows w, unnest(w.hits) h WHERE w.key = ${bounded} AND h > now() - ${window}),
            now()
          ) AS at
        )
        SELECT (SELECT cardinality(hits) FROM hit) AS count,
          greatest(1, ceil(extract(epoch FROM oldest.at + ${window} - now())))::int AS reset_seconds
        FROM oldest`.pipe(Effect.map((rows) => rows[0]))
    }

    // SKIP LOCKED: hosts cleaning at the same moment take different rows instead of waiting on each other.
    const cleanup = sql`DELETE FROM rate_limit_windows WHERE key IN (
        SELECT key FROM rate_limit_windows WHERE expires_at < now()
        ORDER BY expires_at LIMIT ${cleanupBatch}::int FOR UPDATE SKIP LOCKED)`

    // A failed cleanup must not fail the request it rode on; the next one retries.
    const maybeCleanup = Effect.flatMap(Random.next, (draw) =>
      draw < cleanupProbability ? cleanup.pipe(Effect.asVoid, Effect.catchCause((cause) => Effect.logWarning("rate-limit cleanup failed", cause))) : Effect.void)

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
        ),
      reset: (key) =>
        sql`DELETE FROM rate_limit_windows WHERE key = ${boundedKey(key)}`.pipe(Effect.asVoid, Effect.orDie, Effect.withSpan("RateLimiter.reset"))
    })
  })

/** The rate limiter over the store's `SqlClient`: the one to use when several hosts serve one database. */
export const layerRateLimiterSql: Layer.Layer<RateLimiter, never, SqlClient.SqlClient> = Layer.effect(RateLimiter, makeRateLimiterSql())
