import { allResources, type AnyResource, CurrentPrincipal, type DomainError, IdempotencyKeys, notFound, type Page, pageEnvelope, type Principal, publicResources, type QueryParams, ResourceEngine, storeAnswers, TenantBusy, TenantGate } from "@erp/core"
import { Effect, Layer } from "effect"
import { HttpServerResponse } from "effect/http"
import { HttpApi, HttpApiBuilder, type HttpApiEndpoint } from "effect/http-api"
import type { ApiRequest } from "./api-request.js"
import { Api, type ErpApi, type ResourceApi, resourceGroup } from "./api.js"
import { apiRequestOf } from "./body.js"
import { versionsBody } from "./versions.js"
import { type ApiError, errorBody, InternalServerError, tenantBusy, toApiError } from "./errors.js"
import { preconditionOf, readResponse, recordResponse } from "./conditional.js"
import { idempotent } from "./idempotency.js"
import { noteServerFailure } from "./server-errors.js"
import { queryParams } from "./query-params.js"
import { reportsHandlers } from "./reports-handlers.js"
import { prefers } from "./accept.js"


const mapDomain = Effect.mapError((error: DomainError) => toApiError(error))

const json = (body: unknown, status = 200) => HttpServerResponse.jsonUnsafe(body, { status })

/** An action's answer as a page to print: its own styles, no script, nothing loaded from elsewhere. */
const printablePage = (page: string, status: number) =>
  HttpServerResponse.text(page, {
    status,
    contentType: "text/html; charset=utf-8",
    headers: { "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'none'", "x-content-type-options": "nosniff" }
  })

/**
 * A page whose records are JSON text already (built by the store): each written into one buffer,
 * never parsed and encoded again, and never joined into one string first: a page of 100 sales
 * orders passes the 128 KB V8 allocates young, and one string that large is a large object,
 * allocated, encoded and collected far more slowly than the records' own strings.
 */
const pageResponse = (page: Page<string>) => {
  const [head, tail] = pageEnvelope(page)
  let length = Buffer.byteLength(head) + Buffer.byteLength(tail) + Math.max(0, page.data.length - 1)
  for (const record of page.data) length += Buffer.byteLength(record)
  const body = Buffer.allocUnsafe(length)
  let at = body.write(head, 0)
  page.data.forEach((record, index) => {
    if (index > 0) at = body.writeUInt8(0x2c, at)
    at += body.write(record, at)
  })
  body.write(tail, at)
  return HttpServerResponse.uint8Array(body, { contentType: "application/json" })
}

/**
 * One endpoint's handler: the request, its path parameters, its body (read by `RequestBody`,
 * parsed by the builder, decoded by the use case) and the authenticated caller in, the answer
 * out. The caller is an argument: read once from what `Authentication` provides, it is passed
 * down to the engine rather than looked up again by each step.
 */
export type Handler = (request: {
  readonly request: ApiRequest
  readonly path: Readonly<Record<string, string>>
  readonly payload: unknown
  readonly caller: Principal
}) => Effect.Effect<HttpServerResponse.HttpServerResponse, ApiError>

/** The handlers of one declared resource by endpoint name (`list`, `get`, `create`, `action_<name>` …). */
export const makeResourceHandlers = (resource: AnyResource) =>
  Effect.gen(function* () {
    const engine = yield* ResourceEngine
    const gate = yield* TenantGate
    const keys = yield* IdempotencyKeys
    /**
     * The engine's work for the caller, in its tenant's turn (bodies are read before: a slow upload
     * holds no turn), its domain errors answered as the API's.
     */
    const withCaller = <A>(caller: Principal, work: Effect.Effect<A, DomainError>) =>
      gate.run(caller.tenantId, work).pipe(Effect.mapError((error) => (error instanceof TenantBusy ? tenantBusy(error) : toApiError(error))))
    const respond = <A>(caller: Principal, work: Effect.Effect<A, DomainError>, status = 200) =>
      Effect.map(withCaller(caller, work), (body) => json(body, status))
    const nested = resource.nestedUnder
    /** Under a parent (`/webhook-endpoints/{parentId}/deliveries`): the parent must be the caller's (else its 404), the record its own. */
    const underParent = (caller: Principal, path: Readonly<Record<string, string>>, id?: string) =>
      !nested
        ? Effect.void
        : Effect.gen(function* () {
          yield* engine.get(nested.parent(), caller, path.parentId, [])
          if (id === undefined) return
          const record = yield* engine.get(resource, caller, id, [])
          if (record[nested.key] !== path.parentId) return yield* Effect.fail(notFound(resource))
        })
    /** The route names the parent: its key is the route's, never the query's. */
    const listParams = (request: ApiRequest, path: Readonly<Record<string, string>>): QueryParams =>
      nested
        ? [[nested.key, path.parentId], ...queryParams(request).filter(([key]) => key !== nested.key && !key.startsWith(`${nested.key}[`))]
        : queryParams(request)
    const byName: Record<string, Handler> = {
      list: ({ path, request, caller }) =>
        Effect.map(
          withCaller(caller, nested ? Effect.andThen(underParent(caller, path), engine.listAnswers(resource, caller, listParams(request, path))) : engine.listAnswers(resource, caller, listParams(request, path))),
          pageResponse
        ),
      search: ({ request, caller }) => respond(caller, engine.search(resource, caller, queryParams(request))),
      get: ({ path, request, caller }) =>
        Effect.flatMap(
          withCaller(caller, nested ? Effect.andThen(underParent(caller, path, path.id), engine.get(resource, caller, path.id, queryParams(request))) : engine.get(resource, caller, path.id, queryParams(request))),
          (record) => readResponse(request, resource, record)
        ),
      create: ({ request, payload, caller }) =>
        idempotent(keys, caller, request, payload, Effect.map(withCaller(caller, engine.create(resource, caller, payload)), (record) => recordResponse(resource, record, 201))),
      update: ({ path, request, payload, caller }) =>
        Effect.flatMap(preconditionOf(request), (precondition) =>
          idempotent(keys, caller, request, payload, Effect.map(withCaller(caller, engine.update(resource, caller, path.id, payload, { precondition })), (record) => recordResponse(resource, record)))),
      remove: ({ path, request, caller }) =>
        Effect.flatMap(preconditionOf(request), (precondition) =>
          Effect.as(withCaller(caller, engine.remove(resource, caller, path.id, { precondition })), HttpServerResponse.empty({ status: 204 })))
    }
    for (const action of resource.actions ?? []) {
      byName[`action_${action.name}`] = ({ path, request, payload: body, caller }) =>
        Effect.gen(function* () {
          const precondition = yield* preconditionOf(request)
          const { id, parentId: _parent, ...params } = path
          const run = Effect.gen(function* () {
            yield* underParent(caller, path, id).pipe(mapDomain)
            const output = yield* withCaller(caller, engine.action(resource, action, caller, id, params, body, { precondition }))
            if (!action.output) return HttpServerResponse.empty({ status: 204 })
            if (action.page && prefers(request.headers.accept, "text/html")) return printablePage(action.page(output), action.successStatus ?? 200)
            // An action answering the record it acted on (a cancel) gives its new ETag, for the next If-Match.
            const answersRecord = typeof output === "object" && output !== null && String((output as { id?: unknown }).id) === id
            return answersRecord ? recordResponse(resource, output, action.successStatus ?? 200) : json(output, action.successStatus ?? 200)
          })
          // Only POST actions take a key: a DELETE is idempotent already.
          return yield* (action.method === "POST" ? idempotent(keys, caller, request, body, run) : run)
        })
    }
    for (const lookup of resource.lookups ?? []) {
      byName[`lookup_${lookup.name}`] = ({ path, request, caller }) =>
        respond(caller, engine.lookup(resource, caller, lookup.name, path[lookup.parameter], queryParams(request)))
    }
    return byName
  })

/** What the builder runs for one of a resource's operations: its request, path parameters and payload, the caller from `Authentication`. */
type ResourceRoute = HttpApiEndpoint.Handler<ResourceApi["groups"][string]["endpoints"][string], never, CurrentPrincipal>

/**
 * The handlers of one declared resource, one per endpoint its declaration gives it, against an
 * API of its group alone (the group the served API has).
 */
const resourceHandlers = (resource: AnyResource) => {
  const group = resourceGroup(resource)
  const api: ResourceApi = HttpApi.make("erp").add(group)
  return HttpApiBuilder.group(api, resource.name, (handlers) =>
    Effect.map(makeResourceHandlers(resource), (byName) => {
      const routes: { [name: string]: ResourceRoute } = {}
      for (const name of Object.keys(group.endpoints)) {
        routes[name] = ({ request, params, payload }) =>
          Effect.flatMap(Effect.service(CurrentPrincipal), (caller) => byName[name]({ request: apiRequestOf(request), path: params, payload, caller }))
      }
      return handlers.handleAll(routes)
    })
  )
}

export const VERSION = "0.1.0"

const healthHandlers = (api: ErpApi) => HttpApiBuilder.group(api, "health", (handlers) =>
  handlers.handle("health", () =>
    storeAnswers.pipe(
      Effect.as({ status: "ok" as const, version: VERSION }),
      Effect.catch((error) => Effect.andThen(noteServerFailure(error), Effect.fail(new InternalServerError(errorBody(500, "The store is not reachable", "STORE_UNAVAILABLE")))))
    ))
)

const versionsHandlers = (api: ErpApi) => HttpApiBuilder.group(api, "versions", (handlers) =>
  handlers.handle("versions", () => Effect.succeed(versionsBody()))
)

/** Handlers for every group of an API made by `makeApi(registry)`. */
export const makeHandlers = (api: ErpApi, registry: ReadonlyArray<AnyResource>) =>
  Layer.mergeAll(healthHandlers(api), versionsHandlers(api), reportsHandlers, ...publicResources(registry).map(resourceHandlers))

/** Handlers for every group of the API, derived from the registry. */
export const layerHandlers = makeHandlers(Api, allResources)
