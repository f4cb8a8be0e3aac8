import { Authenticator, type CredentialLimit, credentialLimit, CredentialRateLimiter, CurrentPrincipal, type InvalidRequest, OAuthConfig, type Principal, type RateLimitDecision, type Unauthenticated } from "@erp/core"
import { Context, Effect, Layer, Redacted } from "effect"
import { HttpEffect, HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiMiddleware, HttpApiSecurity, OpenApi } from "effect/http-api"
import { BadRequest, errorBody, TooManyRequests, Unauthorized } from "./errors.js"
import { publicUrl } from "./public-url.js"
import { rateLimitHeaders } from "./rate-limit.js"
import { CurrentTrace, type RequestTrace } from "./server-errors.js"

/** `Authorization` carries `Bearer <token>` or the bare token, so it is declared as a header credential. */
const authorizationHeader = HttpApiSecurity.apiKey({ in: "header", key: "Authorization" }).pipe(
  HttpApiSecurity.annotate(OpenApi.Description, "API key `sk_<publicId>_<secret>` (or OAuth access token) as `Bearer <token>` or the bare token.")
)

/**
 * Every resource operation's credential check: the caller as `CurrentPrincipal`, or the
 * refusal (401, the 400 of a malformed `X-Tenant-Id`, the credential's 429).
 */
export class Authentication extends HttpApiMiddleware.Service<Authentication, { provides: CurrentPrincipal }>()("erp/http/Authentication", {
  error: [Unauthorized, BadRequest, TooManyRequests],
  security: { authorization: authorizationHeader }
}) {}

/**
 * Counts the request against its credential's limits. The RateLimit-* fields go on
 * whatever response the request ends with (a 4xx of the handler included), and on a
 * refusal `Retry-After` too: through the request's trace when the host keeps one (read
 * once on the way out), else a pre-response handler.
 */
export const limitCredential = (principal: Pick<Principal, "credential"> & { readonly tenantId?: string }, limiter: CredentialRateLimiter["Service"]) => {
  const credential = principal.credential
  if (!credential) return Effect.void
  const limit = credentialLimit(credential.rateLimitPerMinute)
  return Effect.flatMap(limiter.hit(credential.id, limit), (decision) =>
    Effect.withFiber<void, TooManyRequests, HttpServerRequest.HttpServerRequest>((fiber) => {
      const trace = fiber.getRef(CurrentTrace)
      // On the host's trace (every request it serves), the fields are noted at once: one step of the runtime, not three.
      if (trace) {
        const refused = noteDecision(trace, principal, limit, decision)
        return refused ? Effect.fail(refused) : Effect.void
      }
      const headers = decisionHeaders(decision)
      const noted = HttpEffect.appendPreResponseHandler((_request, out) => Effect.succeed(HttpServerResponse.setHeaders(out, headers)))
      return decision.allowed ? noted : Effect.andThen(noted, Effect.fail(refusal(limit, decision)))
    }))
}

/** The RateLimit-* fields of a decision, and `Retry-After` on a refusal. */
const decisionHeaders = (decision: RateLimitDecision) => ({ ...rateLimitHeaders(decision), ...(decision.allowed ? {} : { "retry-after": String(decision.resetSeconds) }) })

const refusal = (limit: CredentialLimit, decision: RateLimitDecision) => {
  const seconds = decision.resetSeconds
  const message = `Rate limit of this credential exceeded (${limit.perMinute} requests a minute, bursts of ${limit.burstPerSecond} a second). Retry in ${seconds} second${seconds === 1 ? "" : "s"}.`
  return new TooManyRequests(errorBody(429, message, "RATE_LIMITED"))
}

/** A decision noted in the request's trace (its fields and tenant, read on the way out): the refusal to answer, if it is one. */
const noteDecision = (trace: RequestTrace, principal: { readonly tenantId?: string }, limit: CredentialLimit, decision: RateLimitDecision) => {
  if (principal.tenantId) trace.tenantId = principal.tenantId
  trace.responseHeaders = decisionHeaders(decision)
  return decision.allowed ? undefined : refusal(limit, decision)
}

/** A request's credential as its principal: the issuer is the URL the request reached, `X-Tenant-Id` picks a user's company. */
export const authenticateRequest = (
  authenticator: Authenticator["Service"],
  config: OAuthConfig["Service"],
  request: { readonly headers: Readonly<Record<string, string | undefined>> },
  authorization: string
) => {
  const tenantId = request.headers["x-tenant-id"]
  return authenticator.authenticate(authorization, { issuer: publicUrl(config, request), ...(tenantId ? { tenantId } : {}) })
}

/** An authenticated caller let in: its tenant noted in the request's trace (for a failure's log line), the request counted. */
export const admit = (principal: Principal, limiter: CredentialRateLimiter["Service"]) =>
  principal.credential
    ? limitCredential(principal, limiter)
    : Effect.withFiber<void, TooManyRequests>((fiber) => {
      const trace = fiber.getRef(CurrentTrace)
      if (trace) trace.tenantId = principal.tenantId
      return Effect.void
    })

/** A credential refused: 401, or 400 when it names a tenant badly (`X-Tenant-Id`). */
const refusedCredential = (error: Unauthenticated | InvalidRequest): Unauthorized | BadRequest =>
  error._tag === "InvalidRequest"
    ? new BadRequest(errorBody(400, error.message, error.code, error.fields))
    : new Unauthorized(errorBody(401, error.message, error.code))

export const layerAuthentication = Layer.effect(
  Authentication,
  Effect.gen(function* () {
    const authenticator = yield* Authenticator
    const config = yield* OAuthConfig
    const limiter = yield* CredentialRateLimiter
    return Authentication.of({
      authorization: (effect, { credential }) =>
        Effect.withFiber((fiber) =>
          authenticateRequest(authenticator, config, Context.getUnsafe(fiber.context, HttpServerRequest.HttpServerRequest), Redacted.value(credential)).pipe(
            Effect.mapError(refusedCredential),
            Effect.tap((principal) => admit(principal, limiter)),
            Effect.flatMap((principal) => Effect.provideService(effect, CurrentPrincipal, principal))
          ))
    })
  })
)
