import { HttpApiBuilder, HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { allResources, type AnyResource, layerCore, type OAuthSettings, resolveStoreLocation, type StoreLocation } from "@erp/core"
import { Effect, Layer, ManagedRuntime } from "effect"
import { createServer } from "node:http"
import { Api, makeApi } from "./api.js"
import { layerAuthentication } from "./authentication.js"
import { layerHandlers, makeHandlers } from "./handlers.js"
import { withHostConcerns } from "./middleware.js"
import { SignInHook } from "./oauth/authorize.js"
import { layerOAuthRoutes } from "./oauth/routes.js"

/**
 * The API over a registry (the built-in one by default, or yours with resources of
 * your own declared on the same engine), with its handlers and `/openapi.json`.
 */
export const makeHttpApiLayer = (registry: ReadonlyArray<AnyResource> = allResources) => {
  const api = registry === allResources ? Api : makeApi(registry)
  const handlers = registry === allResources ? layerHandlers : makeHandlers(api, registry)
  return Layer.mergeAll(HttpApiBuilder.middlewareOpenApi({ path: "/openapi.json" }), layerOAuthRoutes).pipe(
    Layer.provideMerge(HttpApiBuilder.api(api).pipe(Layer.provide(handlers), Layer.provide(layerAuthentication)))
  )
}

/** The API with its handlers and `/openapi.json`; needs the core services. */
export const layerHttpApi = makeHttpApiLayer()

export interface ListenOptions {
  readonly port?: number
  readonly host?: string
  /** The resources to serve; the built-in registry by default. */
  readonly resources?: ReadonlyArray<AnyResource>
}

/** The Node HTTP server serving the API (and exposing `HttpServer` for its address); needs the core services. */
export const layerNodeServer = (options: ListenOptions = {}) =>
  HttpApiBuilder.serve(withHostConcerns).pipe(
    Layer.provide(options.resources ? makeHttpApiLayer(options.resources) : layerHttpApi),
    Layer.provideMerge(NodeHttpServer.layer(createServer, { port: options.port ?? 3000, host: options.host ?? "127.0.0.1" }))
  )

export interface StoreOptions {
  /** PostgreSQL URL; defaults to `DATABASE_URL`, else the embedded store. */
  readonly databaseUrl?: string
  /** Folder of the embedded store; defaults to `ERP_DATA_DIR` or `.erp-data`. */
  readonly dataDir?: string
  /** A ready store location (overrides the two above). */
  readonly store?: StoreLocation
  /** OAuth settings beyond the environment's (public URL, dynamic registration, identity provider). */
  readonly oauth?: Partial<OAuthSettings>
  /**
   * Sign users in with your app's own session on the OAuth authorization page:
   * answer the user's id or email for the request, or nothing to show the sign-in form.
   */
  readonly signIn?: (request: { readonly headers: Readonly<Record<string, string | undefined>>; readonly url: string }) => Promise<string | undefined>
}

const layerCoreOf = (options: StoreOptions) =>
  layerCore(options.store ?? resolveStoreLocation(options), options.oauth ? { oauth: options.oauth } : {}).pipe(
    Layer.provideMerge(options.signIn ? Layer.succeed(SignInHook, options.signIn) : Layer.empty)
  )

/**
 * A web-standard handler for embedding in any server that speaks `Request`/`Response`
 * (node:http via an adapter, Express, Fastify, Bun, Deno, workers). The store is opened
 * and migrated before the promise resolves; `dispose` closes it.
 */
export const createFetchHandler = async (options: StoreOptions = {}) => {
  const core = ManagedRuntime.make(layerCoreOf(options))
  const runtime = await core.runtime()
  const web = HttpApiBuilder.toWebHandler(
    Layer.mergeAll(layerHttpApi, HttpServer.layerContext).pipe(Layer.provide(Layer.succeedContext(runtime.context))),
    { middleware: withHostConcerns }
  )
  return {
    handler: web.handler,
    /** The core services (tenants, keys, the resource engine) for the embedding app's own use. */
    core,
    dispose: async () => {
      await web.dispose()
      await core.dispose()
    }
  }
}

/**
 * Starts the Node server on its own (port 0 picks a free port) and resolves with
 * its URL once it listens; `close` stops it and closes the store.
 */
export const startServer = async (options: StoreOptions & ListenOptions = {}) => {
  const runtime = ManagedRuntime.make(layerNodeServer(options).pipe(Layer.provide(layerCoreOf(options))))
  const address = await runtime.runPromise(Effect.map(HttpServer.HttpServer, (server) => server.address))
  const url = address._tag === "TcpAddress" ? `http://${address.hostname.includes(":") ? `[${address.hostname}]` : address.hostname}:${address.port}` : `unix:${address.path}`
  return { url, close: () => runtime.dispose() }
}
