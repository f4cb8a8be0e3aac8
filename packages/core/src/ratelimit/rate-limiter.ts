import { Context, type Effect } from "effect"

/** One limit: at most `limit` hits per `windowSeconds` for a key (fixed window). */
export interface RateLimit {
  readonly limit: number
  readonly windowSeconds: number
}

export interface RateLimitDecision {
  readonly allowed: boolean
  readonly limit: number
  /** Hits left in the current window (0 once exceeded). */
  readonly remaining: number
  /** Seconds until the window resets (for `RateLimit-Reset` and `Retry-After`). */
  readonly resetSeconds: number
}

/**
 * Counts hits per key. Behind an interface so that any endpoint can use it and
 * several hosts can share one store of counters (the SQL implementation does).
 */
export class RateLimiter extends Context.Tag("erp/core/RateLimiter")<RateLimiter, {
  /** Records one hit for `key` and says whether it is within `rule`. */
  readonly hit: (key: string, rule: RateLimit) => Effect.Effect<RateLimitDecision>
}>() {}

/** The spec's limits. */
export const AUTHORIZE_LIMIT: RateLimit = { limit: 20, windowSeconds: 60 }
export const TOKEN_LIMIT: RateLimit = { limit: 10, windowSeconds: 60 }
