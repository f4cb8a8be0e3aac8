import { HttpApp, type HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { errorBody, type RateLimit, type RateLimitDecision, RateLimiter } from "@erp/core"
import { Effect, Option } from "effect"

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
  return HttpServerResponse.unsafeJson(errorBody(429, `${lead} ${retry}`, "RATE_LIMITED"), {
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
): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R | RateLimiter> =>
  Effect.gen(function* () {
    const limiter = yield* RateLimiter
    const decision = yield* limiter.hit(key, rule)
    if (!decision.allowed) return tooManyRequests(decision)
    const headers = rateLimitHeaders(decision)
    yield* HttpApp.appendPreResponseHandler((_request, out) => Effect.succeed(HttpServerResponse.setHeaders(out, headers)))
    return HttpServerResponse.setHeaders(yield* response, headers)
  })

/** Node reports IPv4 callers on a dual-stack socket as `::ffff:a.b.c.d`; one caller, one key. */
const normalizeAddress = (address: string): string => {
  const trimmed = address.trim()
  return /^::ffff:\d+\.\d+\.\d+\.\d+$/i.test(trimmed) ? trimmed.slice(7) : trimmed
}

/**
 * The caller's IP for per-IP limits: the socket's peer address. X-Forwarded-For is
 * read only with `trustProxy`, because any client can send it to pick a fresh key
 * per request; behind a proxy the socket peer is the proxy, so set `trustProxy`
 * only when a proxy you run replaces the header with the address it saw (a proxy
 * that appends to it leaves the caller's own value first).
 */
export const clientAddress = (request: HttpServerRequest.HttpServerRequest, trustProxy = false): string => {
  if (trustProxy) {
    const forwarded = request.headers["x-forwarded-for"]?.split(",")[0]?.trim()
    if (forwarded) return normalizeAddress(forwarded)
  }
  return Option.match(request.remoteAddress, {
    onNone: () => "unknown",
    onSome: (address) => (address.trim() ? normalizeAddress(address) : "unknown")
  })
}
