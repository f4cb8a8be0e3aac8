import { NodeHttpServer } from "@effect/platform-node"
import {
  allResources,
  type AnyResource,
  type DispatcherOptions,
  layerWebhookDispatcher,
  explainStartupFailure,
  layerCore,
  makeAdmin,
  type McpToolset,
  OAuthConfig,
  type OAuthSettings,
  resolveStoreLocation,
  type StartupContext,
  type TaxEngine,
  type StoreLocation
} from "@erp/core"
import { ConfigProvider, Context, Effect, Layer, ManagedRuntime } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { NetAddress } from "effect/net"
import { createServer } from "node:http"
import { Api, makeApi } from "./api.js"
import { layerAuthentication } from "./authentication.js"
import { layerRequestBody } from "./request-body.js"
import { layerDocsRoutes } from "./docs-page.js"
import { layerHandlers, makeHandlers } from "./handlers.js"
import { checkPortFree } from "./listen.js"
import { layerShutdownGrace, SHUTDOWN_GRACE_MS } from "./shutdown-grace.js"
import { ArrivedAs, withHostConcerns } from "./middleware.js"
import { layerServerFailures } from "./server-errors.js"
import { layerSpansOnlyForInstalledTracer } from "./tracing.js"
import { SignInHook } from "./browser-session.js"
import { layerOAuthRoutes } from "./oauth/routes.js"
import { layerOpenApiRoute } from "./openapi-route.js"
import { layerMcpRoutes, McpAllowedOrigins, McpToolsets } from "./mcp-route.js"
import { layerPanelRoutes } from "./panel/routes.js"
import { publicPath, routedUrl, WELL_KNOWN_DOCUMENTS } from "./public-url.js"

/**
 * The routes over a registry (the built-in one by default, or yours with resources of
 * your own declared on the same engine): the API with its handlers, `/openapi.json`, the
 * `/docs` page, OAuth, MCP and the panel, on one router, every route inside `layerServerFailures`.
 */
export const makeHttpApiLayer = (registry: ReadonlyArray<AnyResource> = allResources, options: PanelOption = {}) => {
  const api = registry === allResources ? Api : makeApi(registry)
  const handlers = registry === allResources ? layerHandlers : makeHandlers(api, registry)
  const panel = options.panel === false ? Layer.empty : layerPanelRoutes(registry)
  return Layer.mergeAll(
    HttpApiBuilder.layer(api).pipe(Layer.provide(handlers), Layer.provide([layerAuthentication, layerRequestBody])),
    layerOpenApiRoute(api),
    layerDocsRoutes,
    layerOAuthRoutes,
    layerMcpRoutes,
    panel,
    layerServerFailures
  )
}

export interface PanelOption {
  /** Serve the panel at `/panel` (default true; `erp serve --no-panel` turns it off). */
  readonly panel?: boolean
}

/** The routes of the built-in registry; need the core services and a router. */
export const layerHttpApi = makeHttpApiLayer()

export interface ListenOptions extends PanelOption {
  readonly port?: number
  readonly host?: string
  /** The resources to serve; the built-in registry by default. */
  readonly resources?: ReadonlyArray<AnyResource>
  /** How long a stop waits for the requests in flight before it ends every connection left (default 5,000 ms). */
  readonly shutdownGraceMs?: number
}

/** The Node HTTP server serving the API (and exposing `HttpServer` for its address); needs the core services. */
export const layerNodeServer = (options: ListenOptions = {}) => {
  const server = createServer()
  const routes = options.resources || options.panel === false ? makeHttpApiLayer(options.resources, options) : layerHttpApi
  // The host's concerns around every request, and no access log or listen line of the
  // platform's (the host logs its 5xx itself).
  const served = HttpRouter.serve(routes, { middleware: withHostConcerns, disableLogger: true, disableListenLog: true })
  // Built after the server and its routes, the grace is released first: a stop starts it.
  return layerShutdownGrace(server, options.shutdownGraceMs ?? SHUTDOWN_GRACE_MS).pipe(
    Layer.provideMerge(served),
    Layer.provide(layerSpansOnlyForInstalledTracer),
    Layer.provideMerge(NodeHttpServer.layer(() => server, { port: options.port ?? 3000, host: options.host ?? "127.0.0.1" }))
  )
}

export interface StoreOptions {
  /**
   * Where the settings these options leave out are read (docs/configuration.md lists them):
   * the environment unless given, e.g. `ConfigProvider.fromMap(new Map([["ERP_TRUST_PROXY", "true"]]))`.
   * The options here win over it.
   */
  readonly configProvider?: ConfigProvider.ConfigProvider
  /** PostgreSQL URL; defaults to `DATABASE_URL`, else the embedded store. */
  readonly databaseUrl?: string
  /** Folder of the embedded store; defaults to `ERP_DATA_DIR` or `.erp-data`. */
  readonly dataDir?: string
  /** A ready store location (overrides the two above). */
  readonly store?: StoreLocation
  /**
   * The public base URL, path included (`https://app.example.com/erp`): the OAuth issuer and
   * the base of every generated URL. Default `ERP_PUBLIC_URL`, else each request's Host plus `basePath`.
   */
  readonly publicUrl?: string
  /** OAuth settings beyond the configured ones (dynamic registration, trusted proxy, identity provider). */
  readonly oauth?: Partial<OAuthSettings>
  /**
   * The key sealing stored secrets (32 random bytes as base64 or hex). Default `ERP_SECRET_KEY`;
   * required with PostgreSQL; the embedded store generates `<dataDir>/secret.key` without one.
   */
  readonly secretKey?: string
  /** The previous key while rotating (default `ERP_SECRET_KEY_PREVIOUS`): secrets it sealed are sealed again on start. */
  readonly previousSecretKey?: string
  /**
   * Sign users in with your app's own session on the OAuth authorization page:
   * answer the user's id or email for the request, or nothing to show the sign-in form.
   */
  /**
   * MCP over HTTP (`POST /`): browser origins allowed besides loopback ones and the public URL's
   * (default `ERP_MCP_ALLOWED_ORIGINS`; `*` for any), how long an idle session lives
   * (default `ERP_MCP_SESSION_IDLE_SECONDS` or 3600), and the toolsets served (default
   * `ERP_MCP_TOOLSETS`, else every tool).
   */
  readonly mcp?: { readonly allowedOrigins?: ReadonlyArray<string> | "*"; readonly sessionIdleSeconds?: number; readonly toolsets?: ReadonlyArray<McpToolset> }
  readonly signIn?: (request: { readonly headers: Readonly<Record<string, string | undefined>>; readonly url: string }) => Promise<string | undefined>
  /** Your tax engine (a Layer of core's `TaxEngine`) instead of the built-in one; its name is recorded in invoices' tax_engine_provider. */
  readonly taxEngine?: Layer.Layer<TaxEngine>
  /**
   * Send webhooks from this process: the dispatcher runs in the background until `close` /
   * `dispose` (default true; settings such as `concurrency` may be given, and `allowPrivate`
   * lets endpoints be written with such URLs too). `false` when `erp worker` processes send them.
   */
  readonly webhooks?: boolean | DispatcherOptions
}

export interface FetchHandlerOptions extends StoreOptions, PanelOption {
  /**
   * The path the handler is mounted under (`/erp`): requests arrive with it (the handler
   * takes it off before routing) and every generated URL, form action and cookie path
   * carries it. Forward the two metadata documents too (`handles(path)` says which paths are the handler's).
   */
  readonly basePath?: string
}

const settingsOf = (options: FetchHandlerOptions): Partial<OAuthSettings> => ({
  ...options.oauth,
  ...(options.basePath !== undefined ? { basePath: options.basePath } : {}),
  ...(options.publicUrl !== undefined ? { publicUrl: options.publicUrl } : {})
})

const layerCoreOf = (options: FetchHandlerOptions, location: StoreLocation) => {
  const core = layerCore(location, {
    oauth: settingsOf(options),
    ...(options.taxEngine ? { taxEngine: options.taxEngine } : {}),
    mcp: { ...(options.mcp?.sessionIdleSeconds !== undefined ? { sessionIdleSeconds: options.mcp.sessionIdleSeconds } : {}) },
    ...(options.secretKey !== undefined ? { secretKey: options.secretKey } : {}),
    ...(options.previousSecretKey !== undefined ? { previousSecretKey: options.previousSecretKey } : {}),
    // The dispatcher's allowPrivate is the endpoints' rule too: a URL it would send to can be written.
    ...(typeof options.webhooks === "object" && options.webhooks.allowPrivate !== undefined ? { webhooks: { allowPrivate: options.webhooks.allowPrivate } } : {})
  }).pipe(
    Layer.provideMerge(options.signIn ? Layer.succeed(SignInHook, options.signIn) : Layer.empty),
    Layer.provideMerge(McpAllowedOrigins.layerConfig(options.mcp?.allowedOrigins)),
    Layer.provideMerge(McpToolsets.layerConfig(options.mcp?.toolsets))
  )
  const served = options.webhooks === false
    ? core
    : layerWebhookDispatcher(options.webhooks === true || options.webhooks === undefined ? {} : options.webhooks).pipe(Layer.provideMerge(core))
  return options.configProvider ? Layer.provide(served, ConfigProvider.layer(options.configProvider)) : served
}

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

/** A web Request with another path and query (the base path taken off), body and signal kept. */
const withPath = (request: Request, pathAndQuery: string): Request => {
  const url = new URL(pathAndQuery, request.url)
  const hasBody = request.body !== null
  return new Request(url, {
    method: request.method,
    headers: request.headers,
    signal: request.signal,
    ...(hasBody ? { body: request.body, duplex: "half" } : {})
  } as RequestInit)
}

/**
 * A web-standard handler for embedding in any server that speaks `Request`/`Response`
 * (node:http via an adapter, Express, Fastify, Bun, Deno, workers), with the admin facade
 * (`tenants`, `users`, `members`, `keys`, `oauthClients`, `resources`, `ensureDemoTenant`).
 * The store is opened and migrated before the promise resolves; `dispose` closes it.
 * A start-up failure rejects with a `StartupError` (one plain line).
 */
export const createFetchHandler = async (options: FetchHandlerOptions = {}) => {
  const location = options.store ?? resolveStoreLocation(options, options.configProvider)
  const { runtime: core, value: context } = await openRuntime(() => ManagedRuntime.make(layerCoreOf(options, location)), (made) => made.context(), startupContext(location))
  const settings = Context.get(context, OAuthConfig)
  const web = HttpRouter.toWebHandler(
    // provideMerge: each request runs in the built context, where the host middleware reads the
    // settings (base path, public URL) and the tracer switch.
    (options.panel === false ? makeHttpApiLayer(allResources, options) : layerHttpApi).pipe(
      Layer.provideMerge(HttpServer.layerServices),
      Layer.provideMerge(layerSpansOnlyForInstalledTracer),
      Layer.provideMerge(Layer.succeedContext(context))
    ),
    { middleware: withHostConcerns, disableLogger: true }
  )
  const base = settings.basePath
  const documents = WELL_KNOWN_DOCUMENTS.map((name) => `/.well-known/${name}${publicPath(settings)}`)
  /** Whether a request path (or URL) is the handler's: under the base path, or one of its two metadata documents. */
  const handles = (url: string): boolean => {
    const path = new URL(url, "http://local").pathname
    return base === "" || path === base || path.startsWith(`${base}/`) || documents.includes(path)
  }
  return {
    ...makeAdmin(core),
    handler: (request: Request): Promise<Response> => {
      if (base === "") return web.handler(request)
      const url = new URL(request.url)
      const routed = routedUrl(base, `${url.pathname}${url.search}`)
      const arrived = Context.make(ArrivedAs, { path: url.pathname, routed: routed !== undefined })
      return web.handler(routed === undefined ? request : withPath(request, routed), arrived)
    },
    handles,
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
  const location = options.store ?? resolveStoreLocation(options, options.configProvider)
  const listen = { host: options.host ?? "127.0.0.1", port: options.port ?? 3000 }
  const context = startupContext(location, listen)
  await checkPortFree(listen.host, listen.port).catch((error) => {
    throw explainStartupFailure(error, context)
  })
  const { runtime, value: address } = await openRuntime(
    () => ManagedRuntime.make(layerNodeServer({ ...listen, ...(options.panel === false ? { panel: false } : {}) }).pipe(Layer.provideMerge(layerCoreOf(options, location)))),
    (made) => made.runPromise(Effect.map(HttpServer.HttpServer, (server) => server.address)),
    context
  )
  const url = address._tag === "UnixPathAddress" ? `unix:${address.path}` : `http://${NetAddress.formatInet(address)}`
  return { ...makeAdmin(runtime), url, close: () => runtime.dispose() }
}
