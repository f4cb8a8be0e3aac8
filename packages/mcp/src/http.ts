import type { Identity, McpSessions, McpToolset, OAuth, Reports, ResourceEngine, Tenancy } from "@erp/core"
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js"
import { Effect } from "effect"
import { callerOf } from "./caller.js"
import { type McpRunner, makeMcpServer } from "./server.js"

/**
 * JSON-RPC error codes of the HTTP transport beyond the protocol's own: -32001 is the
 * SDK's "Session not found"; -32003 is ours, a session presented by another user or key.
 */
export const SESSION_NOT_FOUND = -32001
export const SESSION_OF_ANOTHER_CALLER = -32003

const jsonRpcError = (status: number, code: number, message: string, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }), {
    status,
    headers: { "content-type": "application/json", ...headers }
  })

const LOOPBACK_ORIGIN = /^https?:\/\/(localhost|127\.0\.0\.1|\[::1\])(:\d+)?$/

/**
 * Which browser origins may call (DNS-rebinding protection, as the MCP transport asks):
 * requests without `Origin` (every non-browser client) always may; a browser page only from
 * an allowed origin — by default the public URL's and loopback ones.
 */
export const originAllowed = (origin: string | null, allowed: ReadonlyArray<string> | "*"): boolean =>
  origin === null || allowed === "*" || allowed.includes(origin) || LOOPBACK_ORIGIN.test(origin)

export interface McpHttpInput {
  /** The request as it arrived (method, URL, headers); its body already read into `body`. */
  readonly request: Request
  /** The parsed JSON body of a POST. */
  readonly body: unknown
  /** The credential of this very request, validated before the session is looked at. */
  readonly identity: Identity
}

export interface McpHttpOptions<R> {
  readonly sessions: McpSessions["Service"]
  readonly run: McpRunner<R | ResourceEngine | Reports | Tenancy | OAuth>
  readonly allowedOrigins: ReadonlyArray<string> | "*"
  /** Serve only these toolsets' tools (`ERP_MCP_TOOLSETS`); every tool when absent. */
  readonly toolsets?: ReadonlyArray<McpToolset>
}

const SESSION_HEADER = "mcp-session-id"

/**
 * One request of the Streamable HTTP transport. Sessions live in the store, so each request
 * is served by a fresh server and stateless SDK transport over the session it names: any
 * host can serve any request. The session binds its owner; the credential is checked on every
 * request (by the caller of this function) and must be the owner's.
 */
export const serveMcpHttp = async <R>(input: McpHttpInput, options: McpHttpOptions<R>): Promise<Response> => {
  const { request, body, identity } = input
  if (!originAllowed(request.headers.get("origin"), options.allowedOrigins)) {
    return jsonRpcError(403, -32000, `Origin ${request.headers.get("origin")} is not allowed to call this MCP server`)
  }
  // No stream on GET: the server sends nothing of its own (no notifications, requests or logs;
  // each answer goes back on its POST), which the transport answers with 405.
  if (request.method !== "POST" && request.method !== "DELETE") {
    const why = request.method === "GET" ? "this server sends no messages of its own, so it offers no event stream; " : ""
    return jsonRpcError(405, -32000, `Method not allowed: ${why}POST messages, DELETE to end a session`, { allow: "POST, DELETE" })
  }
  const caller = callerOf(identity)
  const sessionId = request.headers.get(SESSION_HEADER)

  if (sessionId === null) {
    if (request.method !== "POST" || !isInitializeRequest(body)) {
      return jsonRpcError(400, -32000, "Bad Request: send Mcp-Session-Id (an initialize request without it starts a session)")
    }
    const opened = await options.run(options.sessions.open({
      owner: caller.owner,
      clientName: body.params.clientInfo.name,
      protocolVersion: body.params.protocolVersion
    }))
    const response = await handle(input, options, caller)
    const headers = new Headers(response.headers)
    if (response.ok) headers.set(SESSION_HEADER, opened)
    return new Response(response.body, { status: response.status, statusText: response.statusText, headers })
  }

  const session = await options.run(options.sessions.resume(sessionId, caller.owner))
  if (session === "missing") return jsonRpcError(404, SESSION_NOT_FOUND, "Session not found: it ended or expired; initialize a new one")
  if (session === "foreign") {
    return jsonRpcError(403, SESSION_OF_ANOTHER_CALLER, "This session belongs to another user or key: initialize a session of your own")
  }
  if (request.method === "DELETE") {
    await options.run(options.sessions.close(sessionId))
    return new Response(null, { status: 204 })
  }
  if (request.method === "POST" && (isInitializeRequest(body) || (Array.isArray(body) && body.some(isInitializeRequest)))) {
    return jsonRpcError(400, -32600, "Invalid Request: this session is already initialized")
  }
  return handle(input, options, caller)
}

const handle = async <R>(input: McpHttpInput, options: McpHttpOptions<R>, caller: ReturnType<typeof callerOf>): Promise<Response> => {
  const server = makeMcpServer({
    caller: Effect.succeed(caller),
    choosesTenant: caller.choosesTenant,
    run: options.run,
    toolsets: options.toolsets
  })
  // Stateless: the session is ours (above); JSON answers, since no tool streams progress.
  const transport = new WebStandardStreamableHTTPServerTransport({ enableJsonResponse: true })
  await server.connect(transport)
  const response = await transport.handleRequest(input.request, { parsedBody: input.body })
  // Closed once the SDK has settled the request (its handler's abort controller is let go a few
  // microtasks after the answer): closed before, it aborts that controller, a DOMException each call.
  setImmediate(() => void server.close().catch(() => undefined))
  return response
}
