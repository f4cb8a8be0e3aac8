import { Clock, Effect, Layer } from "effect"
import { createHash } from "node:crypto"
import { type RateLimit, type RateLimitDecision, RateLimiter } from "./rate-limiter.js"

const MAX_KEY_LENGTH = 200

/**
 * Keys often carry caller input (a `client_id` from a request body). A long one
 * is replaced by its hash, so it can neither bloat memory nor exceed an index
 * row's size (a database error would fail the request instead of limiting it).
 * Shared by the memory and SQL limiters.
 */
export const boundedKey = (key: string): string =>
  key.length <= MAX_KEY_LENGTH ? key : `sha256:${createHash("sha256").update(key).digest("hex")}`

export interface MemoryRateLimiterOptions {
  /** Most keys tracked at once; past it the oldest window is forgotten. */
  readonly maxKeys?: number
}

/** Enough for the clients and IPs a single host sees in a window, while bounding memory under a flood of new keys. */
const DEFAULT_MAX_KEYS = 10_000

interface Log {
  /** Times (ms) of the hits allowed in the last window, oldest first. */
  readonly hits: Array<number>
  expiresAt: number
}

/**
 * A sliding log per key (the same rule as the SQL limiter): a hit is allowed when fewer
 * than `limit` hits were allowed in the `windowSeconds` before it, so no window of that
 * length ever holds more than `limit`. It keeps one timestamp per allowed hit, which is
 * cheap for the small limits of authentication endpoints. Counted in this process only:
 * for embedding apps and a single host. Several hosts each counting in memory would
 * each allow the full limit.
 *
 * Time comes from effect's `Clock`, so tests move it with `TestClock`.
 */
export const makeRateLimiterMemory = (options: MemoryRateLimiterOptions = {}) =>
  Effect.sync(() => {
    const maxKeys = Math.max(1, options.maxKeys ?? DEFAULT_MAX_KEYS)
    // A Map iterates in insertion order, and a log is re-inserted on each allowed hit, so
    // the first entries are those hit longest ago: the ones to expire or evict.
    const logs = new Map<string, Log>()

    const dropExpired = (now: number) => {
      for (const [key, log] of logs) {
        if (log.expiresAt > now) return
        logs.delete(key)
      }
    }

    /** Evicting the oldest lets that key start over early; refusing new keys instead would lock out every newcomer. */
    const makeRoom = () => {
      while (logs.size >= maxKeys) {
        const oldest = logs.keys().next()
        if (oldest.done) return
        logs.delete(oldest.value)
      }
    }

    // Synchronous from reading the map to writing it, so concurrent fibers cannot interleave a hit.
    const count = (rawKey: string, rule: RateLimit, now: number): RateLimitDecision => {
      const key = boundedKey(rawKey)
      dropExpired(now)
      const windowMs = rule.windowSeconds * 1000
      let log = logs.get(key)
      if (!log) {
        makeRoom()
        log = { hits: [], expiresAt: now + windowMs }
        logs.set(key, log)
      }
      // A hit exactly one window old has left it.
      while (log.hits.length > 0 && log.hits[0] <= now - windowMs) log.hits.shift()
      const resetAfter = (oldest: number) => Math.max(1, Math.ceil((oldest + windowMs - now) / 1000))
      // Refused hits are not counted, as in the SQL limiter.
      if (log.hits.length >= rule.limit) return { allowed: false, limit: rule.limit, remaining: 0, resetSeconds: resetAfter(log.hits[0]) }
      log.hits.push(now)
      log.expiresAt = now + windowMs
      logs.delete(key)
      logs.set(key, log)
      return { allowed: true, limit: rule.limit, remaining: rule.limit - log.hits.length, resetSeconds: resetAfter(log.hits[0]) }
    }

    return RateLimiter.of({
      hit: (key, rule) => Effect.map(Clock.currentTimeMillis, (now) => count(key, rule, now)),
      reset: (key) => Effect.sync(() => void logs.delete(boundedKey(key)))
    })
  })

/** A rate limiter in this process's memory, with at most `maxKeys` keys tracked. */
export const layerRateLimiterMemoryWith = (options: MemoryRateLimiterOptions): Layer.Layer<RateLimiter> =>
  Layer.effect(RateLimiter, makeRateLimiterMemory(options))

/** A rate limiter in this process's memory (10 000 keys at most); the SQL one is for several hosts. */
export const layerRateLimiterMemory: Layer.Layer<RateLimiter> = layerRateLimiterMemoryWith({})
