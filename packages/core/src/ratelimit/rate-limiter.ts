import { Context, type Effect } from "effect"

/**
 * One limit: at most `limit` hits for a key in any `windowSeconds` (a sliding window: the
 * window ends at each hit, so no boundary lets a second burst through).
 */
export interface RateLimit {
  readonly limit: number
  readonly windowSeconds: number
}

export interface RateLimitDecision {
  readonly allowed: boolean
  readonly limit: number
  /** Hits left now (0 once exceeded). */
  readonly remaining: number
  /**
   * Seconds until the oldest hit counted leaves the window, freeing one hit (for
   * `RateLimit-Reset` and, once refused, `Retry-After`).
   */
  readonly resetSeconds: number
}

/**
 * Counts hits per key. Behind an interface so that any endpoint can use it and
 * several hosts can share one store of counters (the SQL implementation does).
 */
export class RateLimiter extends Context.Service<RateLimiter, {
  /** Records one hit for `key` and says whether it is within `rule`. */
  readonly hit: (key: string, rule: RateLimit) => Effect.Effect<RateLimitDecision>
  /** Forgets every hit of `key` (an account's failed sign-ins, once its password was given). */
  readonly reset: (key: string) => Effect.Effect<void>
}>()("erp/core/RateLimiter") {}

/** The spec's limits. */
export const AUTHORIZE_LIMIT: RateLimit = { limit: 20, windowSeconds: 60 }
export const TOKEN_LIMIT: RateLimit = { limit: 10, windowSeconds: 60 }
/**
 * Password attempts on one account, counted whether the account exists or not, by the panel and
 * the authorization page together, beside their limits per address: guesses spread over many
 * addresses still get 10 every 5 minutes. A successful sign-in starts the count over, so it
 * counts failures: a user who mistypes gets on, and only an account under attack is held.
 */
export const SIGN_IN_ACCOUNT_LIMIT: RateLimit = { limit: 10, windowSeconds: 300 }
/** Client authentication at /oauth/revoke, per client_id: as at /oauth/token, so secrets cannot be guessed there instead. */
export const REVOKE_LIMIT: RateLimit = { limit: 10, windowSeconds: 60 }
