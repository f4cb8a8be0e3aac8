import { errorBody, type RateLimit, type RateLimitDecision, RateLimiter } from "@erp/core"
import { Effect, Option } from "effect"
import { HttpEffect, type HttpServerRequest, HttpServerResponse } from "effect/http"
import { addressLimitKey, forwardedClient, normalizeAddress } from "./client-address.js"

/**
 * The rate-limit header fields of the IETF draft draft-ietf-httpapi-ratelimit-headers
 * in its widely deployed form (up to draft 06): `RateLimit-Limit` (hits allowed per
 * window), `RateLimit-Remaining` (hits left now) and `RateLimit-Reset` (seconds until
 * the oldest hit counted leaves the sliding window and frees one; a delta, never a
 * timestamp, so client clock skew does not matter).
 * Lower case because HTTP field names are case-insensitive and the platform's
 * headers are lower case; clients see the same fields.
 */
export const rateLimitHeaders = (decision: RateLimitDecision): Record<string, string> => ({
  "ratelimit-limit": String(decision.limit),
  "ratelimit-remaining": String(decision.remaining),
  "ratelimit-reset": String(decision.resetSeconds)
})

/**
 * 429 with the spec's error body. `Retry-After` (RFC 9110, in seconds) is the
 * header clients already honour; the spec asks them to respect it and back off.
 */
export const tooManyRequests = (decision: RateLimitDecision, message = "Too many requests"): HttpServerResponse.HttpServerResponse => {
  const seconds = decision.resetSeconds
  const lead = message.trim().replace(/(?<![.!?])$/, ".")
  const retry = `Retry in ${seconds} second${seconds === 1 ? "" : "s"}.`
  return HttpServerResponse.jsonUnsafe(errorBody(429, `${lead} ${retry}`, "RATE_LIMITED"), {
    status: 429,
    headers: { ...rateLimitHeaders(decision), "retry-after": String(seconds) }
  })
}

/**
 * Counts one hit on `key` (name the endpoint in it: a key is one counter whatever
 * the rule) and answers 429 once `rule` is exceeded, else runs `response`.
 *
 * The RateLimit-* fields go on the response returned here and, through a
 * pre-response handler, also on one the caller renders later from a failure of
 * `response` (an OAuth error still counted as a hit).
 */
export const withRateLimit = <E, R>(
  key: string,
  rule: RateLimit,
  response: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R | RateLimiter | HttpServerRequest.HttpServerRequest> =>
  Effect.gen(function* () {
    const limiter = yield* RateLimiter
    const decision = yield* limiter.hit(key, rule)
    if (!decision.allowed) return tooManyRequests(decision)
    const headers = rateLimitHeaders(decision)
    yield* HttpEffect.appendPreResponseHandler((_request, out) => Effect.succeed(HttpServerResponse.setHeaders(out, headers)))
    return HttpServerResponse.setHeaders(yield* response, headers)
  })

/**
 * The caller's address: the socket's peer, or with `trustProxy` (one proxy of yours in front,
 * ERP_TRUST_PROXY) the address that proxy appended to X-Forwarded-For, the header's last entry.
 * Without `trustProxy` the header is ignored: any client can send it. IPv4 callers of a
 * dual-stack socket (`::ffff:a.b.c.d`) are their IPv4 address.
 */
export const clientAddress = (request: HttpServerRequest.HttpServerRequest, trustProxy = false): string => {
  const forwarded = trustProxy ? forwardedClient(request.headers["x-forwarded-for"]) : undefined
  if (forwarded !== undefined) return normalizeAddress(forwarded)
  return Option.match(request.remoteAddress, {
    onNone: () => "unknown",
    onSome: (address) => (address.trim() ? normalizeAddress(address) : "unknown")
  })
}

/** The caller's key in limits per address (`clientAddress`, an IPv6 caller by its /64). */
export const clientLimitKey = (request: HttpServerRequest.HttpServerRequest, trustProxy = false): string =>
  addressLimitKey(clientAddress(request, trustProxy))
