import { HttpApiMiddleware, HttpApiSecurity, HttpApp, HttpServerRequest, HttpServerResponse, OpenApi } from "@effect/platform"
import { Authenticator, credentialLimit, CredentialRateLimiter, CurrentPrincipal, OAuthConfig, type Principal } from "@erp/core"
import { Effect, Layer, Redacted, Schema } from "effect"
import { BadRequest, errorBody, toApiError, TooManyRequests, Unauthorized } from "./errors.js"
import { publicUrl } from "./public-url.js"
import { rateLimitHeaders } from "./rate-limit.js"
import { noteTenant } from "./server-errors.js"

/** `Authorization` carries `Bearer <token>` or the bare token, so it is declared as a header credential. */
const authorizationHeader = HttpApiSecurity.apiKey({ in: "header", key: "Authorization" }).pipe(
  HttpApiSecurity.annotate(OpenApi.Description, "API key `sk_<publicId>_<secret>` (or OAuth access token) as `Bearer <token>` or the bare token.")
)

export class Authentication extends HttpApiMiddleware.Tag<Authentication>()("erp/http/Authentication", {
  failure: Schema.Union(Unauthorized, BadRequest, TooManyRequests),
  provides: CurrentPrincipal,
  security: { authorization: authorizationHeader }
}) {}

/**
 * Counts the request against its credential's limits. The RateLimit-* fields go on
 * whatever response the request ends with (a 4xx of the handler included), and on a
 * refusal `Retry-After` too.
 */
export const limitCredential = (principal: Pick<Principal, "credential">) =>
  Effect.gen(function* () {
    const credential = principal.credential
    if (!credential) return
    const limiter = yield* CredentialRateLimiter
    const limit = credentialLimit(credential.rateLimitPerMinute)
    const decision = yield* limiter.hit(credential.id, limit)
    const headers = { ...rateLimitHeaders(decision), ...(decision.allowed ? {} : { "retry-after": String(decision.resetSeconds) }) }
    yield* HttpApp.appendPreResponseHandler((_request, out) => Effect.succeed(HttpServerResponse.setHeaders(out, headers)))
    if (!decision.allowed) {
      const seconds = decision.resetSeconds
      const message = `Rate limit of this credential exceeded (${limit.perMinute} requests a minute, bursts of ${limit.burstPerSecond} a second). Retry in ${seconds} second${seconds === 1 ? "" : "s"}.`
      return yield* Effect.fail(new TooManyRequests(errorBody(429, message, "RATE_LIMITED")))
    }
  })

export const layerAuthentication = Layer.effect(
  Authentication,
  Effect.map(Effect.all([Authenticator, OAuthConfig, CredentialRateLimiter]), ([authenticator, config, limiter]) =>
    Authentication.of({
      authorization: (credential) =>
        Effect.gen(function* () {
          const request = yield* HttpServerRequest.HttpServerRequest
          const tenantId = request.headers["x-tenant-id"]
          const principal = yield* authenticator.authenticate(Redacted.value(credential), {
            issuer: publicUrl(config, request),
            ...(tenantId ? { tenantId } : {})
          }).pipe(Effect.mapError((error) => toApiError(error) as Unauthorized | BadRequest))
          yield* noteTenant(principal.tenantId)
          yield* limitCredential(principal).pipe(Effect.provideService(CredentialRateLimiter, limiter))
          return principal
        })
    }))
)
