import { Context, type Effect } from "effect"
import type { RateLimitDecision } from "./rate-limiter.js"

/** Sustained requests per minute per credential unless the tenant or the key says otherwise. */
export const DEFAULT_RATE_LIMIT_PER_MINUTE = 6_000

/** Requests per second a credential may send in a burst (Stripe allows 100 operations per second). */
export const DEFAULT_BURST_PER_SECOND = 100

/** The limits of one credential: a per-second burst and a sustained per-minute count. */
export interface CredentialLimit {
  readonly perMinute: number
  readonly burstPerSecond: number
}

/**
 * A credential's limits from its per-minute setting: the burst is 100 per second, more
 * when the minute allows more than 100 a second on average, never more than the minute.
 */
export const credentialLimit = (perMinute: number = DEFAULT_RATE_LIMIT_PER_MINUTE): CredentialLimit => ({
  perMinute,
  burstPerSecond: Math.min(perMinute, Math.max(DEFAULT_BURST_PER_SECOND, Math.ceil(perMinute / 60)))
})

/** Largest per-minute limit a tenant or key may be given (fits the store's int column with room for a window's count). */
export const MAX_RATE_LIMIT_PER_MINUTE = 1_000_000

/** `undefined` when `value` is a valid per-minute limit, else why not. */
export const rateLimitProblem = (value: number): string | undefined =>
  Number.isInteger(value) && value >= 1 && value <= MAX_RATE_LIMIT_PER_MINUTE
    ? undefined
    : `The rate limit must be a whole number of requests per minute from 1 to ${MAX_RATE_LIMIT_PER_MINUTE}, got ${value}`

/**
 * Counts a credential's requests against its limits. `credential` names it (`key:<id>`,
 * `oauth:<client>:<user>`, `user:<id>`).
 */
export class CredentialRateLimiter extends Context.Service<CredentialRateLimiter, {
  readonly hit: (credential: string, limit: CredentialLimit) => Effect.Effect<RateLimitDecision>
}>()("erp/core/CredentialRateLimiter") {}
