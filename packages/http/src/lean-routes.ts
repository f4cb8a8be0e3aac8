import { HttpApp, HttpServerRequest } from "@effect/platform"
import { type AnyResource, Authenticator, CredentialRateLimiter, CurrentPrincipal, IdempotencyKeys, OAuthConfig, publicResources, ResourceEngine, TenantGate } from "@erp/core"
import { Context, Effect, Option } from "effect"
import { admit, authenticateRequest } from "./authentication.js"
import { errorResponse } from "./errors.js"
import { type Handler, makeResourceHandlers } from "./handlers.js"
import { handleServerFailures } from "./server-errors.js"

/** Which endpoint of a top-level resource a request is, for the requests answered here. */
const endpointOf = (method: string, resource: AnyResource, id: string | undefined): string | undefined => {
  if (id === undefined) return method === "POST" && resource.write ? "create" : undefined
  // Routes of the resource beside its records (`/customers/search`) stay the router's.
  if (id === "" || (resource.searchRoute && id === "search")) return undefined
  if (method === "GET") return "get"
  return method === "PATCH" && resource.write ? "update" : undefined
}

/**
 * The requests an integration sends most — `GET /<resource>/<id>`, `POST /<resource>` and
 * `PATCH /<resource>/<id>`, without a query string — answered around the `HttpApi` router: its
 * routing, path and security-header decoding, middleware and error encoding are about 100 steps of
 * the Effect runtime, a third of a small read. The answer is the route's own: the same handler
 * (`makeResourceHandlers`), the same authentication and credential limit as the `Authentication`
 * middleware, errors encoded as the router encodes them, and the pre-response handlers passed as
 * its answers pass them. A request it does not recognise, or whose credential does not
 * authenticate (nothing counted yet), goes to the router as before.
 */
export const withLeanRoutes = (registry: ReadonlyArray<AnyResource>) => {
  const byName = new Map(publicResources(registry).filter((resource) => !resource.nestedUnder).map((resource) => [resource.name, resource] as const))
  // Made on a resource's first request, from the services in the request's context.
  const handlers = new Map<AnyResource, Record<string, Handler>>()
  const handlersOf = (resource: AnyResource, services: () => Context.Context<ResourceEngine | TenantGate | IdempotencyKeys>) => {
    const made = handlers.get(resource)
    return made ? Effect.succeed(made) : makeResourceHandlers(resource).pipe(Effect.provide(services()), Effect.tap((built) => Effect.sync(() => handlers.set(resource, built))))
  }
  return <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R | HttpServerRequest.HttpServerRequest> =>
    Effect.withFiberRuntime((fiber) => {
      const context = fiber.currentContext
      const request = Context.unsafeGet(context, HttpServerRequest.HttpServerRequest)
      const authorization = request.headers.authorization
      const url = request.url
      if (authorization === undefined || url.charCodeAt(0) !== 47 || url.includes("?") || url.includes("%")) return app
      const slash = url.indexOf("/", 1)
      if (slash >= 0 && url.indexOf("/", slash + 1) >= 0) return app
      const resource = byName.get(slash < 0 ? url.slice(1) : url.slice(1, slash))
      const id = slash < 0 ? undefined : url.slice(slash + 1)
      const name = resource && endpointOf(request.method, resource, id)
      const services = Option.all([
        Context.getOption(context, Authenticator),
        Context.getOption(context, OAuthConfig),
        Context.getOption(context, CredentialRateLimiter),
        Context.getOption(context, ResourceEngine),
        Context.getOption(context, TenantGate),
        Context.getOption(context, IdempotencyKeys)
      ])
      if (!resource || !name || Option.isNone(services)) return app
      const [authenticator, config, limiter, engine, gate, keys] = services.value
      const handlerServices = () => Context.make(ResourceEngine, engine).pipe(Context.add(TenantGate, gate), Context.add(IdempotencyKeys, keys))
      return Effect.flatMap(
        Effect.either(authenticateRequest(authenticator, config, request, authorization)),
        (authenticated) => {
          if (authenticated._tag === "Left") return app
          const principal = authenticated.right
          const answer = admit(principal, limiter).pipe(
            Effect.zipRight(Effect.flatMap(handlersOf(resource, handlerServices), (built) => built[name]({ request, path: id === undefined ? {} : { id } }))),
            Effect.provideService(CurrentPrincipal, principal),
            Effect.catchAll((error) => Effect.succeed(errorResponse(error)))
          )
          // The router's answers pass the pre-response handlers (request id, version, rate-limit fields) on
          // their way out; an answer made here, around the router, passes them here.
          return Effect.flatMap(handleServerFailures(answer), (response) => {
            const handler = fiber.getFiberRef(HttpApp.currentPreResponseHandlers)
            return handler._tag === "None" ? Effect.succeed(response) : Effect.orDie(handler.value(request, response))
          })
        }
      )
    })
}
