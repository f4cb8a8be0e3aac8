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

interface Counter {
  readonly windowStart: number
  readonly expiresAt: number
  count: number
}

/**
 * Fixed windows aligned to `windowSeconds` (the same windows as the SQL
 * limiter), counted in this process only: for embedding apps and a single host.
 * Several hosts each counting in memory would each allow the full limit.
 *
 * Time comes from effect's `Clock`, so tests move it with `TestClock`.
 */
export const makeRateLimiterMemory = (options: MemoryRateLimiterOptions = {}) =>
  Effect.sync(() => {
    const maxKeys = Math.max(1, options.maxKeys ?? DEFAULT_MAX_KEYS)
    // A Map iterates in insertion order, and a counter is re-inserted when its window
    // starts, so the first entries are the oldest windows: the ones to expire or evict.
    const counters = new Map<string, Counter>()

    const dropExpired = (now: number) => {
      for (const [key, counter] of counters) {
        if (counter.expiresAt > now) return
        counters.delete(key)
      }
    }

    /** Evicting the oldest lets that key start over early; refusing new keys instead would lock out every newcomer. */
    const makeRoom = () => {
      while (counters.size >= maxKeys) {
        const oldest = counters.keys().next()
        if (oldest.done) return
        counters.delete(oldest.value)
      }
    }

    // Synchronous from reading the map to writing it, so concurrent fibers cannot interleave a hit.
    const count = (rawKey: string, rule: RateLimit, now: number): RateLimitDecision => {
      const key = boundedKey(rawKey)
      dropExpired(now)
      const windowMs = rule.windowSeconds * 1000
      const windowStart = Math.floor(now / windowMs) * windowMs
      let counter = counters.get(key)
      if (!counter || counter.windowStart !== windowStart) {
        counters.delete(key)
        makeRoom()
        counter = { windowStart, expiresAt: windowStart + windowMs, count: 0 }
        counters.set(key, counter)
      }
      const resetSeconds = Math.max(1, Math.ceil((counter.expiresAt - now) / 1000))
      // Refused hits are not counted, as in the SQL limiter.
      if (counter.count >= rule.limit) return { allowed: false, limit: rule.limit, remaining: 0, resetSeconds }
      counter.count += 1
      return { allowed: true, limit: rule.limit, remaining: rule.limit - counter.count, resetSeconds }
    }

    return RateLimiter.of({
      hit: (key, rule) => Effect.map(Clock.currentTimeMillis, (now) => count(key, rule, now))
    })
  })

/** A rate limiter in this process's memory, with at most `maxKeys` keys tracked. */
export const layerRateLimiterMemoryWith = (options: MemoryRateLimiterOptions): Layer.Layer<RateLimiter> =>
  Layer.effect(RateLimiter, makeRateLimiterMemory(options))

/** A rate limiter in this process's memory (10 000 keys at most); the SQL one is for several hosts. */
export const layerRateLimiterMemory: Layer.Layer<RateLimiter> = layerRateLimiterMemoryWith({})
