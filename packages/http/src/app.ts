import { HttpApiBuilder, HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import {
  explainStartupFailure,
  layerCore,
  makeAdmin,
  OAuthConfig,
  type OAuthSettings,
  resolveStoreLocation,
  type StartupContext,
  type StoreLocation
} from "@erp/core"
import { Context, Effect, Layer, ManagedRuntime } from "effect"
import { createServer } from "node:http"
import { Api } from "./api.js"
import { layerAuthentication } from "./authentication.js"
import { layerHandlers } from "./handlers.js"
import { checkPortFree } from "./listen.js"
import { withHostConcerns } from "./middleware.js"
import { SignInHook } from "./oauth/authorize.js"
import { layerOAuthRoutes } from "./oauth/routes.js"
import { publicPath, WELL_KNOWN_DOCUMENTS } from "./public-url.js"

/** The API with its handlers and `/openapi.json`; needs the core services. */
export const layerHttpApi = Layer.mergeAll(HttpApiBuilder.middlewareOpenApi({ path: "/openapi.json" }), layerOAuthRoutes).pipe(
  Layer.provideMerge(HttpApiBuilder.api(Api).pipe(Layer.provide(layerHandlers), Layer.provide(layerAuthentication)))
)

export interface ListenOptions {
  readonly port?: number
  readonly host?: string
}

/** The Node HTTP server serving the API (and exposing `HttpServer` for its address); needs the core services. */
export const layerNodeServer = (options: ListenOptions = {}) =>
  HttpApiBuilder.serve(withHostConcerns).pipe(
    Layer.provide(layerHttpApi),
    Layer.provideMerge(NodeHttpServer.layer(createServer, { port: options.port ?? 3000, host: options.host ?? "127.0.0.1" }))
  )

export interface StoreOptions {
  /** PostgreSQL URL; defaults to `DATABASE_URL`, else the embedded store. */
  readonly databaseUrl?: string
  /** Folder of the embedded store; defaults to `ERP_DATA_DIR` or `.erp-data`. */
  readonly dataDir?: string
  /** A ready store location (overrides the two above). */
  readonly store?: StoreLocation
  /**
   * The path the API is mounted under (`/erp`): requests arrive with it and it is taken off
   * before routing; generated URLs, form actions and cookie paths carry it. Default `ERP_BASE_PATH`, else none.
   */
  readonly basePath?: string
  /**
   * The public base URL, path included (`https://app.example.com/erp`): the OAuth issuer and
   * the base of every generated URL. Default `ERP_PUBLIC_URL`, else each request's Host plus `basePath`.
   */
  readonly publicUrl?: string
  /** OAuth settings beyond the environment's (dynamic registration, trusted proxy, identity provider). */
  readonly oauth?: Partial<OAuthSettings>
  /**
   * Sign users in with your app's own session on the OAuth authorization page:
   * answer the user's id or email for the request, or nothing to show the sign-in form.
   */
  readonly signIn?: (request: { readonly headers: Readonly<Record<string, string | undefined>>; readonly url: string }) => Promise<string | undefined>
}

const settingsOf = (options: StoreOptions): Partial<OAuthSettings> => ({
  ...options.oauth,
  ...(options.basePath !== undefined ? { basePath: options.basePath } : {}),
  ...(options.publicUrl !== undefined ? { publicUrl: options.publicUrl } : {})
})

const layerCoreOf = (options: StoreOptions, location: StoreLocation) =>
  layerCore(location, { oauth: settingsOf(options) }).pipe(
    Layer.provideMerge(options.signIn ? Layer.succeed(SignInHook, options.signIn) : Layer.empty)
  )

/** Hints name the options of this API, not the CLI's flags. */
const startupContext = (location: StoreLocation, listen?: { host: string; port: number }): StartupContext => ({
  store: location,
  databaseHint: "check the databaseUrl option or DATABASE_URL",
  portHint: "choose another port",
  ...(listen ? { listen } : {})
})

/**
 * Opens a runtime, turning any start-up failure into a `StartupError` whose message is
 * one plain line (`cannot connect to PostgreSQL at 127.0.0.1:5999: connection refused; …`).
 */
const openRuntime = async <R, A>(
  make: () => ManagedRuntime.ManagedRuntime<R, unknown>,
  ready: (runtime: ManagedRuntime.ManagedRuntime<R, unknown>) => Promise<A>,
  context: StartupContext
) => {
  let runtime: ManagedRuntime.ManagedRuntime<R, unknown> | undefined
  try {
    runtime = make()
    return { runtime, value: await ready(runtime) }
  } catch (error) {
    await runtime?.dispose().catch(() => undefined)
    throw explainStartupFailure(error, context)
  }
}

/** The paths an embedding app forwards to the handler: the base path, and the two metadata documents at the root. */
const handledPaths = (settings: OAuthSettings) => {
  const base = settings.basePath
  const documents = publicPath(settings) === "" ? [] : WELL_KNOWN_DOCUMENTS.map((name) => `/.well-known/${name}${publicPath(settings)}`)
  return (url: string): boolean => {
    const pathname = url.startsWith("/") ? url.split("?")[0] : new URL(url).pathname
    return documents.includes(pathname) || base === "" || pathname === base || pathname.startsWith(`${base}/`)
  }
}

/**
 * A web-standard handler for embedding in any server that speaks `Request`/`Response`
 * (node:http via an adapter, Express, Fastify, Bun, Deno, workers), with the admin facade
 * (`tenants`, `users`, `members`, `keys`, `oauthClients`, `resources`, `ensureDemoTenant`).
 * The store is opened and migrated before the promise resolves; `dispose` closes it.
 * A start-up failure rejects with a `StartupError` (one plain line).
 */
export const createFetchHandler = async (options: StoreOptions = {}) => {
  const location = options.store ?? resolveStoreLocation(options)
  const { runtime: core, value: runtime } = await openRuntime(() => ManagedRuntime.make(layerCoreOf(options, location)), (made) => made.runtime(), startupContext(location))
  const settings = Context.get(runtime.context, OAuthConfig)
  const web = HttpApiBuilder.toWebHandler(
    Layer.mergeAll(layerHttpApi, HttpServer.layerContext).pipe(Layer.provide(Layer.succeedContext(runtime.context))),
    { middleware: withHostConcerns }
  )
  return {
    ...makeAdmin(core),
    handler: web.handler,
    /** Whether a request path (or URL) is the handler's: under the base path, or one of its metadata documents. */
    handles: handledPaths(settings),
    /** The core services as an Effect runtime, for apps written with Effect. */
    core,
    dispose: async () => {
      await web.dispose()
      await core.dispose()
    }
  }
}

/**
 * Starts the Node server on its own (port 0 picks a free port) and resolves with its URL
 * and the admin facade once it listens; `close` stops it and closes the store. The port is
 * checked before the store is opened; a start-up failure rejects with a `StartupError`.
 */
export const startServer = async (options: StoreOptions & ListenOptions = {}) => {
  const location = options.store ?? resolveStoreLocation(options)
  const listen = { host: options.host ?? "127.0.0.1", port: options.port ?? 3000 }
  const context = startupContext(location, listen)
  await checkPortFree(listen.host, listen.port).catch((error) => {
    throw explainStartupFailure(error, context)
  })
  const { runtime, value: address } = await openRuntime(
    () => ManagedRuntime.make(layerNodeServer(listen).pipe(Layer.provideMerge(layerCoreOf(options, location)))),
    (made) => made.runPromise(Effect.map(HttpServer.HttpServer, (server) => server.address)),
    context
  )
  const url = address._tag === "TcpAddress" ? `http://${address.hostname.includes(":") ? `[${address.hostname}]` : address.hostname}:${address.port}` : `unix:${address.path}`
  const { basePath } = await runtime.runPromise(OAuthConfig)
  return { ...makeAdmin(runtime), url: `${url}${basePath}`, close: () => runtime.dispose() }
}
