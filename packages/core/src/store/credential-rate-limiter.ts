import * as SqlClient from "effect/sql/SqlClient"
import { Effect, Layer } from "effect"
import { type CredentialLimit, CredentialRateLimiter } from "../ratelimit/credential-limits.js"
import { boundedKey } from "../ratelimit/memory.js"
import type { RateLimitDecision } from "../ratelimit/rate-limiter.js"

/** Credentials tracked in memory at once; past it the least recently seen is forgotten (its lease is lost, never over-granted). */
const MAX_CREDENTIALS = 10_000

/**
 * How many of a minute's requests one lease takes from the store: a sixtieth of the minute
 * (one second's worth at the sustained rate), 1 to 100. At the default 6,000 a minute a host
 * goes to the store once per 100 requests; at small limits each request does, so counting
 * stays exact where a single request matters.
 */
const leaseSize = (perMinute: number) => Math.min(100, Math.max(1, Math.ceil(perMinute / 60)))

interface Local {
  /** When (this host's clock, ms) the store's current minute window ends. */
  windowEndsAt: number
  /** Requests leased from the store and not yet spent here. */
  leased: number
  /** The window's requests left in the store after the last lease (other hosts may have taken some since). */
  storeLeft: number
  /** The store refused a lease: the window is full for every host until it ends. */
  full: boolean
  /** Burst bucket: tokens now, refilled continuously at the burst rate. */
  tokens: number
  tokensAt: number
}

interface LeaseRow {
  readonly used: number | null
  readonly granted: number | null
  readonly reset_ms: number
}

/**
 * Per-credential limits with a fast path in memory. The sustained limit counts in fixed
 * minute windows in `credential_rate_windows`, shared by every host: a host leases a slice
 * of the window's requests in one statement and spends it locally, so most requests need
 * no round trip; leased requests a host does not spend are lost when the window ends, so
 * hosts together never exceed the limit. The per-second burst is a token bucket in this
 * process (a second is too short to share through the store): with several hosts each
 * allows the burst. Windows follow the database's clock, so skewed hosts share them.
 */
export const makeCredentialRateLimiterSql = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const locals = new Map<string, Local>()

  const lease = (key: string, limit: CredentialLimit, want: number) =>
    sql<LeaseRow>`WITH hit AS (
        INSERT INTO credential_rate_windows AS w (key, window_start, used, last_grant, expires_at)
        VALUES (${key}, date_trunc('minute', now()), least(${want}::int, ${limit.perMinute}::int), least(${want}::int, ${limit.perMinute}::int),
          date_trunc('minute', now()) + interval '2 minutes')
        ON CONFLICT (key, window_start) DO UPDATE SET
          used = w.used + least(${want}::int, ${limit.perMinute}::int - w.used),
          last_grant = least(${want}::int, ${limit.perMinute}::int - w.used)
        WHERE w.used < ${limit.perMinute}::int
        RETURNING w.used, w.last_grant
      )
      SELECT (SELECT used FROM hit) AS used, (SELECT last_grant FROM hit) AS granted,
        greatest(1, ceil(extract(epoch FROM date_trunc('minute', now()) + interval '1 minute' - now()) * 1000))::int AS reset_ms`.pipe(
      Effect.map((rows) => rows[0])
    )

  const fresh = (now: number, limit: CredentialLimit): Local => ({
    windowEndsAt: 0,
    leased: 0,
    storeLeft: limit.perMinute,
    full: false,
    tokens: limit.burstPerSecond,
    tokensAt: now
  })

  /** The entry for `key`, most recently seen last, so the first entries are the ones to evict. */
  const entry = (key: string, now: number, limit: CredentialLimit): Local => {
    const found = locals.get(key)
    if (found) {
      locals.delete(key)
      locals.set(key, found)
      return found
    }
    while (locals.size >= MAX_CREDENTIALS) {
      const oldest = locals.keys().next()
      if (oldest.done) break
      locals.delete(oldest.value)
    }
    const made = fresh(now, limit)
    locals.set(key, made)
    return made
  }

  const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000))

  const decision = (local: Local, limit: CredentialLimit, now: number, allowed: boolean): RateLimitDecision => ({
    allowed,
    limit: limit.perMinute,
    remaining: allowed ? Math.max(0, local.storeLeft + local.leased) : 0,
    resetSeconds: seconds(local.windowEndsAt - now)
  })

  /** Spends one of the leased requests (the store was asked when none was left). */
  const spend = (local: Local, limit: CredentialLimit, now: number) => {
    local.leased -= 1
    local.tokens -= 1
    return decision(local, limit, now, true)
  }

  /** The decision made in memory at `now` (most requests), or the entry whose lease ran out: the store is asked. */
  const decide = (key: string, limit: CredentialLimit, now: number): RateLimitDecision | Local => {
    const local = entry(key, now, limit)
    local.tokens = Math.min(limit.burstPerSecond, local.tokens + ((now - local.tokensAt) / 1000) * limit.burstPerSecond)
    local.tokensAt = now
    if (now >= local.windowEndsAt) Object.assign(local, { leased: 0, storeLeft: limit.perMinute, full: false })
    // The burst is spent: a token comes back within 1/burst seconds.
    if (local.tokens < 1) return { allowed: false, limit: limit.perMinute, remaining: 0, resetSeconds: seconds(((1 - local.tokens) / limit.burstPerSecond) * 1000) }
    if (local.full) return decision(local, limit, now, false)
    if (local.leased >= 1) return spend(local, limit, now)
    return local
  }
  const isLocal = (decided: RateLimitDecision | Local): decided is Local => "leased" in decided

  // Synchronous while a lease lasts (most requests): an effect with a round trip only when one runs out.
  const hit = (credential: string, limit: CredentialLimit): Effect.Effect<RateLimitDecision> =>
    Effect.clockWith((clock) => {
      const key = boundedKey(`cred:${credential}`)
      const now = clock.currentTimeMillisUnsafe()
      const local = decide(key, limit, now)
      if (!isLocal(local)) return Effect.succeed(local)
      return lease(key, limit, leaseSize(limit.perMinute)).pipe(
        Effect.map((row) => {
          const after = clock.currentTimeMillisUnsafe()
          local.windowEndsAt = after + row.reset_ms
          if (row.used === null || row.granted === null || row.granted < 1) {
            Object.assign(local, { full: true, leased: 0, storeLeft: 0 })
            return decision(local, limit, after, false)
          }
          local.leased += row.granted
          local.storeLeft = limit.perMinute - row.used
          local.full = false
          return spend(local, limit, now)
        }),
        Effect.orDie,
        Effect.withSpan("CredentialRateLimiter.hit")
      )
    })

  return CredentialRateLimiter.of({ hit })
})

export const layerCredentialRateLimiterSql: Layer.Layer<CredentialRateLimiter, never, SqlClient.SqlClient> = Layer.effect(
  CredentialRateLimiter,
  makeCredentialRateLimiterSql
)

/** Deletes finished minute windows. */
export const pruneCredentialWindows = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql`DELETE FROM credential_rate_windows WHERE expires_at <= now()`).pipe(Effect.asVoid, Effect.orDie, Effect.withSpan("pruneCredentialWindows"))
