import {
  Authenticator,
  CredentialRateLimiter,
  domainErrorBody,
  McpSessions,
  type McpToolset,
  OAuth,
  loadConfig,
  mcpSettings,
  OAuthConfig,
  Reports,
  ResourceEngine,
  Tenancy
} from "@erp/core"
import { Context, Effect, Layer, Option, References, Result } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { apiRequestOf, readJsonBody } from "./body.js"
import { bearerChallenge, publicUrl } from "./public-url.js"
import { limitCredential } from "./authentication.js"
import { errorResponse } from "./errors.js"

/** Browser origins allowed to call MCP over HTTP besides loopback ones and the public URL's; `*` allows every origin. */
export class McpAllowedOrigins extends Context.Service<McpAllowedOrigins, ReadonlyArray<string> | "*">()("erp/http/McpAllowedOrigins") {
  /** `given`, else `ERP_MCP_ALLOWED_ORIGINS` (comma-separated origins, or `*`) from the `ConfigProvider` in context. */
  static readonly layerConfig = (given?: ReadonlyArray<string> | "*") =>
    Layer.effect(McpAllowedOrigins, given === undefined ? loadConfig(mcpSettings.allowedOrigins.config) : Effect.succeed(given))
}

/** `ERP_MCP_TOOLSETS`, read as a host starts, so that an unknown name stops the start (naming the valid ones) rather than the first MCP request. */
const configuredToolsets = loadConfig(mcpSettings.toolsets.config)

/** The toolsets MCP over HTTP serves (every tool when undefined). */
export class McpToolsets extends Context.Service<McpToolsets, ReadonlyArray<McpToolset> | undefined>()("erp/http/McpToolsets") {
  /** `given`, else `ERP_MCP_TOOLSETS` (comma-separated toolset names) from the `ConfigProvider` in context. */
  static readonly layerConfig = (given?: ReadonlyArray<McpToolset>) =>
    Layer.effect(McpToolsets, given === undefined ? configuredToolsets : Effect.succeed(given))
}

/**
 * The MCP server's code (the MCP SDK, with zod and ajv) is loaded by the first MCP request, not
 * by every host's start, most of which serve no agent.
 */
const loadMcp = () => import("@erp/mcp")

const jsonRpcParseError = (message: string, status: number) =>
  HttpServerResponse.jsonUnsafe({ jsonrpc: "2.0", error: { code: -32700, message }, id: null }, { status })

/**
 * The MCP server over Streamable HTTP at `/` (POST messages, DELETE to end a session; GET is
 * 405, as the server sends no messages of its own). The credential is validated on every
 * request before the session is looked at; a 401 carries the challenge that leads a client to discovery.
 */
export const layerMcpRoutes = HttpRouter.use((router) =>
  Effect.gen(function* () {
    const authenticator = yield* Authenticator
    const sessions = yield* McpSessions
    const limiter = yield* CredentialRateLimiter
    const config = yield* OAuthConfig
    // As provided, else read as the routes are built.
    const providedOrigins = yield* Effect.serviceOption(McpAllowedOrigins)
    const allowed = Option.isSome(providedOrigins) ? providedOrigins.value : yield* loadConfig(mcpSettings.allowedOrigins.config)
    const services = yield* Effect.context<ResourceEngine | Reports | Tenancy | OAuth>()
    // As provided, else read as the routes are built (a host's start): a name that does not exist stops it.
    const providedToolsets = yield* Effect.serviceOption(McpToolsets)
    const toolsets = Option.isSome(providedToolsets) ? providedToolsets.value : yield* configuredToolsets

    const handler = Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      // The core's services with the request's references: tools run with the request's log
      // annotation and tracer switch (no spans for the built-in tracer), not those of the layer.
      const run = Effect.runPromiseWith(
        Context.add(
          Context.add(services, References.CurrentLogAnnotations, yield* References.CurrentLogAnnotations),
          References.TracerEnabled,
          yield* References.TracerEnabled
        )
      )
      const base = publicUrl(config, request)
      const identified = yield* Effect.result(authenticator.identify(request.headers.authorization, { issuer: base }))
      if (Result.isFailure(identified)) {
        const error = identified.failure
        return HttpServerResponse.jsonUnsafe(domainErrorBody(error), {
          status: 401,
          headers: { "www-authenticate": bearerChallenge(base, error.code === "MISSING_CREDENTIALS" ? undefined : "invalid_token") }
        })
      }
      // The same per-credential limits as the REST routes; a user's token counts under the user (no tenant is chosen yet).
      const identity = identified.success
      const limited = yield* Effect.result(
        limitCredential(identity.kind === "bound" ? identity.principal : { credential: { id: `user:${identity.userId}` } }, limiter)
      )
      if (Result.isFailure(limited)) return errorResponse(limited.failure)
      let body: unknown = undefined
      if (request.method === "POST") {
        const read = yield* Effect.result(readJsonBody(apiRequestOf(request)))
        if (Result.isFailure(read)) {
          const status = read.failure.status_code
          return jsonRpcParseError(status === 413 ? read.failure.message : `Parse error: ${read.failure.message}`, status === 413 ? 413 : 400)
        }
        body = read.success
      }
      // Only a configured public URL counts: one derived from Host is the attacker's own in a DNS-rebinding attack.
      const origins = allowed === "*" ? "*" : config.publicUrl ? [...allowed, new URL(config.publicUrl).origin] : allowed
      const response = yield* Effect.promise((signal) => {
        const web = new Request(new URL(request.url, base), { method: request.method, headers: new Headers(request.headers), signal })
        return loadMcp().then(({ serveMcpHttp }) => serveMcpHttp({ request: web, body, identity }, { sessions, run, allowedOrigins: origins, toolsets }))
      })
      // Every answer is complete, and is passed on as its bytes rather than as a web stream turned
      // into an Effect stream: streaming an answer that is whole already costs every call for nothing.
      if (response.body === null) return HttpServerResponse.fromWeb(response)
      const bytes = yield* Effect.promise(() => response.arrayBuffer())
      const headers: Record<string, string> = {}
      response.headers.forEach((value, name) => {
        if (name !== "content-type" && name !== "content-length") headers[name] = value
      })
      return HttpServerResponse.uint8Array(new Uint8Array(bytes), { status: response.status, contentType: response.headers.get("content-type") ?? "application/json", headers })
    })
    yield* router.add("POST", "/", handler)
    yield* router.add("GET", "/", handler)
    yield* router.add("DELETE", "/", handler)
  })
)
