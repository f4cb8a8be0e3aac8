import { HttpApp, HttpServerRequest } from "@effect/platform"
import { type AnyResource, Authenticator, CredentialRateLimiter, OAuthConfig, publicResources, ResourceEngine, TenantBusy, TenantGate } from "@erp/core"
import { Context, Effect, Option } from "effect"
import { limitCredential } from "./authentication.js"
import { readResponse } from "./conditional.js"
import { type ApiError, errorResponse, tenantBusy, toApiError } from "./errors.js"
import { publicUrl } from "./public-url.js"
import { CurrentTrace, handleServerFailures } from "./server-errors.js"

/**
 * `GET /<resource>/<id>` with no query string, the request an integration sends most, answered
 * without the `HttpApi` router: its routing, path and security-header decoding, middleware and
 * error encoding are about 70 steps of the Effect runtime, a fifth of such a request. Everything
 * else is the route's own: the same authentication, credential limit, tenant turn, engine read,
 * ETag and `If-None-Match`, and errors with the same bodies. A request it does not recognise, or
 * whose credential does not authenticate (nothing counted yet), goes to the router as before.
 */
export const withLeanReads = (registry: ReadonlyArray<AnyResource>) => {
  const byName = new Map(publicResources(registry).filter((resource) => !resource.nestedUnder).map((resource) => [resource.name, resource] as const))
  return <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R | HttpServerRequest.HttpServerRequest> =>
    Effect.withFiberRuntime((fiber) => {
      const context = fiber.currentContext
      const request = Context.unsafeGet(context, HttpServerRequest.HttpServerRequest)
      const authorization = request.headers.authorization
      if (request.method !== "GET" || authorization === undefined) return app
      const url = request.url
      const slash = url.indexOf("/", 1)
      if (url.charCodeAt(0) !== 47 || slash < 0 || url.indexOf("/", slash + 1) >= 0 || url.includes("?") || url.includes("%")) return app
      const resource = byName.get(url.slice(1, slash))
      const id = url.slice(slash + 1)
      // Routes of the resource beside its records (`/customers/search`) stay the router's.
      if (resource === undefined || id === "" || (resource.searchRoute && id === "search")) return app
      const services = Option.all([
        Context.getOption(context, Authenticator),
        Context.getOption(context, OAuthConfig),
        Context.getOption(context, CredentialRateLimiter),
        Context.getOption(context, TenantGate),
        Context.getOption(context, ResourceEngine)
      ])
      if (Option.isNone(services)) return app
      const [authenticator, config, limiter, gate, engine] = services.value
      const tenantId = request.headers["x-tenant-id"]
      return Effect.flatMap(
        Effect.either(authenticator.authenticate(authorization, { issuer: publicUrl(config, request), ...(tenantId ? { tenantId } : {}) })),
        (authenticated) => {
          if (authenticated._tag === "Left") return app
          const principal = authenticated.right
          const trace = fiber.getFiberRef(CurrentTrace)
          if (trace) trace.tenantId = principal.tenantId
          const read = limitCredential(principal, limiter).pipe(
            Effect.zipRight(gate.run(principal.tenantId, engine.get(resource, principal, id, []))),
            Effect.mapError((error): ApiError => error instanceof TenantBusy ? tenantBusy(error) : "status_code" in error ? error : toApiError(error)),
            Effect.flatMap((record) => readResponse(request, resource, record)),
            Effect.catchAll((error) => Effect.succeed(errorResponse(error)))
          )
          // The router's answers pass the pre-response handlers (request id, version, rate-limit fields) on
          // their way out; an answer made here, around the router, passes them here.
          return Effect.flatMap(handleServerFailures(read), (response) => {
            const handler = fiber.getFiberRef(HttpApp.currentPreResponseHandlers)
            return handler._tag === "None" ? Effect.succeed(response) : Effect.orDie(handler.value(request, response))
          })
        }
      )
    })
}
