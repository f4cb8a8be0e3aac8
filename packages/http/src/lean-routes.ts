import { HttpApp, HttpServerRequest, type HttpServerResponse } from "@effect/platform"
import { type AnyResource, Authenticator, CredentialRateLimiter, IdempotencyKeys, OAuthConfig, type Principal, publicResources, ResourceEngine, TenantGate } from "@erp/core"
import { Context, Effect, Option } from "effect"
import type { ApiRequest } from "./api-request.js"
import { admit, authenticateRequest } from "./authentication.js"
import { apiRequestOf } from "./body.js"
import { type ApiError, errorResponse } from "./errors.js"
import { type Handler, makeResourceHandlers } from "./handlers.js"
import { answerDefects, CurrentTrace, type RequestTrace } from "./server-errors.js"

/** Which endpoint of a top-level resource a request is, for the requests answered here. */
const endpointOf = (method: string, resource: AnyResource, id: string | undefined): string | undefined => {
  if (id === undefined) return method === "POST" && resource.write ? "create" : undefined
  // Routes of the resource beside its records (`/customers/search`) stay the router's.
  if (id === "" || (resource.searchRoute && id === "search")) return undefined
  if (method === "GET") return "get"
  return method === "PATCH" && resource.write ? "update" : undefined
}

/** A request the lean routes answer: its resource, endpoint and record id. */
export interface LeanRoute {
  readonly resource: AnyResource
  readonly endpoint: string
  readonly id: string | undefined
}

/** The services a lean answer runs with. */
export interface LeanServices {
  readonly authenticator: Authenticator["Type"]
  readonly config: OAuthConfig["Type"]
  readonly limiter: CredentialRateLimiter["Type"]
  readonly engine: ResourceEngine["Type"]
  readonly gate: TenantGate["Type"]
  readonly keys: IdempotencyKeys["Type"]
}

/**
 * The requests an integration sends most — `GET /<resource>/<id>`, `POST /<resource>` and
 * `PATCH /<resource>/<id>`, with a credential and without a query string — answered around the
 * `HttpApi` router: its routing, path and security-header decoding, middleware and error encoding
 * are about 100 steps of the Effect runtime, a third of a small read. The answer is the route's
 * own: the same handler (`makeResourceHandlers`), the same authentication and credential limit as
 * the `Authentication` middleware, errors encoded as the router encodes them, defects answered as
 * `handleServerFailures` answers them. A request whose credential does not authenticate (nothing
 * counted yet) gets `unauthenticated`: the router's answer, with its challenge.
 */
export const makeLeanRoutes = (registry: ReadonlyArray<AnyResource>) => {
  const byName = new Map(publicResources(registry).filter((resource) => !resource.nestedUnder).map((resource) => [resource.name, resource] as const))
  // Made on a resource's first request, from the services the answer runs with.
  const handlers = new Map<AnyResource, Record<string, Handler>>()
  const handlersOf = (resource: AnyResource, services: LeanServices) => {
    const made = handlers.get(resource)
    if (made) return Effect.succeed(made)
    const context = Context.make(ResourceEngine, services.engine).pipe(Context.add(TenantGate, services.gate), Context.add(IdempotencyKeys, services.keys))
    return makeResourceHandlers(resource).pipe(Effect.provide(context), Effect.tap((built) => Effect.sync(() => handlers.set(resource, built))))
  }

  /** The lean route a request line names, if it names one. */
  const match = (method: string, url: string): LeanRoute | undefined => {
    if (url.charCodeAt(0) !== 47 || url.includes("?") || url.includes("%")) return undefined
    const slash = url.indexOf("/", 1)
    if (slash >= 0 && url.indexOf("/", slash + 1) >= 0) return undefined
    const resource = byName.get(slash < 0 ? url.slice(1) : url.slice(1, slash))
    const id = slash < 0 ? undefined : url.slice(slash + 1)
    const endpoint = resource && endpointOf(method, resource, id)
    return resource && endpoint ? { resource, endpoint, id } : undefined
  }

  /**
   * The route's handler for an authenticated caller, after its `admission` (the credential's
   * count): errors encoded as the router encodes them, defects answered (a read whose connection
   * was lost is retried once, unless it is the `retry` already).
   */
  const answerCaller = (services: LeanServices, route: LeanRoute, request: ApiRequest, principal: Principal, trace: RequestTrace, admission: Effect.Effect<void, ApiError>, retry = false) => {
    const input = { request, path: route.id === undefined ? {} : { id: route.id } as Readonly<Record<string, string>>, caller: principal }
    // The resource's handlers are made once; from then on they are called as they are, not through an effect that finds them.
    const built = handlers.get(route.resource)
    const handled = built ? built[route.endpoint](input) : Effect.flatMap(handlersOf(route.resource, services), (made) => made[route.endpoint](input))
    const answered = Effect.catchAll(Effect.zipRight(admission, handled), (error) => Effect.succeed(errorResponse(error)))
    return answerDefects(answered, request.method === "GET" && !retry, trace)
  }

  const answer = <A, E, R>(
    services: LeanServices,
    route: LeanRoute,
    request: ApiRequest,
    authorization: string,
    trace: RequestTrace,
    finish: (response: HttpServerResponse.HttpServerResponse) => Effect.Effect<HttpServerResponse.HttpServerResponse>,
    unauthenticated: Effect.Effect<A, E, R>
  ): Effect.Effect<A | HttpServerResponse.HttpServerResponse, E, R> =>
    Effect.matchEffect(authenticateRequest(services.authenticator, services.config, request, authorization), {
      onFailure: (): Effect.Effect<A | HttpServerResponse.HttpServerResponse, E, R> => unauthenticated,
      onSuccess: (principal) => Effect.flatMap(answerCaller(services, route, request, principal, trace, admit(principal, services.limiter)), finish)
    })

  return { match, answer, answerCaller }
}

/** The lean routes as the host's middleware, around the router: for the fetch handler, and for any request the Node server's direct route hands over. */
export const withLeanRoutes = (registry: ReadonlyArray<AnyResource>) => {
  const lean = makeLeanRoutes(registry)
  return <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R | HttpServerRequest.HttpServerRequest> =>
    Effect.withFiberRuntime((fiber) => {
      const context = fiber.currentContext
      const request = Context.unsafeGet(context, HttpServerRequest.HttpServerRequest)
      const authorization = request.headers.authorization
      const route = authorization === undefined ? undefined : lean.match(request.method, request.url)
      if (route === undefined || authorization === undefined) return app
      const services = Option.all({
        authenticator: Context.getOption(context, Authenticator),
        config: Context.getOption(context, OAuthConfig),
        limiter: Context.getOption(context, CredentialRateLimiter),
        engine: Context.getOption(context, ResourceEngine),
        gate: Context.getOption(context, TenantGate),
        keys: Context.getOption(context, IdempotencyKeys)
      })
      if (Option.isNone(services)) return app
      const trace = fiber.getFiberRef(CurrentTrace) ?? { requestId: "unknown", method: request.method, path: request.url }
      // The router's answers pass the pre-response handlers (request id, version, rate-limit fields) on
      // their way out; an answer made here, around the router, passes them here.
      const finish = (response: HttpServerResponse.HttpServerResponse) => {
        const handler = fiber.getFiberRef(HttpApp.currentPreResponseHandlers)
        return handler._tag === "None" ? Effect.succeed(response) : Effect.orDie(handler.value(request, response))
      }
      return lean.answer(services.value, route, apiRequestOf(request), authorization, trace, finish, app)
    })
}
