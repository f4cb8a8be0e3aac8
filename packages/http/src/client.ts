import { Context, Effect } from "effect"
import { HttpClient, HttpClientRequest, type UrlParams } from "effect/http"
import { HttpApiClient } from "effect/http-api"
import { Api, type ErpApi } from "./api.js"
import { CURRENT_VERSION } from "./versions.js"

export interface ErpClientOptions {
  /** Where the API is: `https://erp.example.com`, or the base path an app mounts it under. */
  readonly baseUrl: string
  /** An API key (`sk_…`) or an OAuth access token, sent as `Authorization: Bearer <token>`. */
  readonly token: string
  /** The `api-version` header of every request (default: the current version). */
  readonly apiVersion?: string
  /** The contract to call (default `Api`, the built-in registry's; `makeApi(registry)` for a host serving its own). */
  readonly api?: ErpApi
}

/**
 * The query string a call of the client adds: list endpoints read theirs in the engine (their
 * filters depend on the resource), so the contract declares none and a method takes no `query`.
 * Set it for one call with `withClientQuery`.
 */
export const ErpClientQuery = Context.Reference<UrlParams.Input>("erp/http/ErpClientQuery", { defaultValue: () => [] })

/**
 * Runs a client call with these query parameters: `limit`, `cursor`, `sort`, filters, `expand[]`.
 *
 * ```ts
 * client.products.list({ params: {} }).pipe(withClientQuery({ limit: 100, sort: "name:asc" }))
 * ```
 */
export const withClientQuery = (query: UrlParams.Input) => <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.provideService(effect, ErpClientQuery, query)

/**
 * The API's own `HttpApiClient` (Effect 4, `effect/http-api`) for one credential: each call
 * carries `Authorization: Bearer <token>` and `api-version`, and answers the decoded success
 * or fails with the declared error classes (`BadRequest`, `NotFound`, `UnprocessableEntity`, …).
 * Needs an `HttpClient` (`FetchHttpClient.layer` from `effect/http`).
 *
 * Typing: `health` and `versions` are typed in full. The resource groups are built at run time
 * from the registry, so the compiler sees each as a group of any name whose endpoints take
 * string path parameters and answer `unknown`: `client.products.list({ params: {} })` compiles
 * for any group and endpoint name, and answers what the record schema decodes. For typed
 * records, paths and bodies, use `@erp/client`.
 */
export const makeErpClient = (options: ErpClientOptions) => {
  const version = options.apiVersion ?? CURRENT_VERSION
  return HttpApiClient.make(options.api ?? Api, {
    baseUrl: options.baseUrl,
    transformClient: (client) =>
      client.pipe(
        HttpClient.mapRequest((request) => request.pipe(HttpClientRequest.bearerToken(options.token), HttpClientRequest.setHeader("api-version", version))),
        HttpClient.mapRequestEffect((request) => Effect.map(Effect.service(ErpClientQuery), (query) => HttpClientRequest.appendUrlParams(request, query)))
      )
  })
}

/** The client `makeErpClient` makes. */
export type ErpClient = Effect.Success<ReturnType<typeof makeErpClient>>
