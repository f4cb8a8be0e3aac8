import { HttpApiBuilder, type HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { type AnyResource, CurrentPrincipal, type DomainError, type QueryParams, ResourceEngine, resources } from "@erp/core"
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Layer } from "effect"
import { Api, ResourceApi } from "./api.js"
import { readJsonBody } from "./body.js"
import { errorBody, InternalServerError, toApiError } from "./errors.js"

/** Query string pairs in order, repeated keys kept. */
export const queryParams = (request: HttpServerRequest.HttpServerRequest): QueryParams => {
  const query = request.url.indexOf("?")
  return query < 0 ? [] : [...new URLSearchParams(request.url.slice(query + 1)).entries()]
}

const mapDomain = Effect.mapError((error: DomainError) => toApiError(error))

const json = (body: unknown, status = 200) => HttpServerResponse.unsafeJson(body, { status })

/** The five generic handlers for one declared resource. */
const resourceHandlers = (resource: AnyResource) =>
  HttpApiBuilder.group(ResourceApi, resource.name, (handlers) =>
    Effect.gen(function* () {
      const engine = yield* ResourceEngine
      return handlers
        .handleRaw("list", ({ request }) =>
          Effect.flatMap(CurrentPrincipal, (principal) => engine.list(resource, principal, queryParams(request))).pipe(mapDomain, Effect.map((page) => json(page))))
        .handleRaw("get", ({ path, request }) =>
          Effect.flatMap(CurrentPrincipal, (principal) => engine.get(resource, principal, path.id, queryParams(request))).pipe(mapDomain, Effect.map((record) => json(record))))
        .handleRaw("create", ({ request }) =>
          Effect.gen(function* () {
            const principal = yield* CurrentPrincipal
            const body = yield* readJsonBody(request)
            const record = yield* engine.create(resource, principal, body).pipe(mapDomain)
            return json(record, 201)
          }))
        .handleRaw("update", ({ path, request }) =>
          Effect.gen(function* () {
            const principal = yield* CurrentPrincipal
            const body = yield* readJsonBody(request)
            const record = yield* engine.update(resource, principal, path.id, body).pipe(mapDomain)
            return json(record)
          }))
        .handleRaw("remove", ({ path }) =>
          Effect.flatMap(CurrentPrincipal, (principal) => engine.remove(resource, principal, path.id)).pipe(
            mapDomain,
            Effect.as(HttpServerResponse.empty({ status: 204 }))
          ))
    })
  )

export const VERSION = "0.1.0"

const healthHandlers = HttpApiBuilder.group(Api, "health", (handlers) =>
  handlers.handle("health", () =>
    Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT 1`).pipe(
      Effect.as({ status: "ok" as const, version: VERSION }),
      Effect.catchAll(() => Effect.fail(new InternalServerError(errorBody(500, "The store is not reachable", "STORE_UNAVAILABLE"))))
    ))
)

/** Handlers for every group of the API, derived from the registry. */
export const layerHandlers = Layer.mergeAll(healthHandlers, ...resources.map(resourceHandlers))
