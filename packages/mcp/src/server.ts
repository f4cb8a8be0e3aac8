import { checkUntrustedJson, type InvalidRequest, type Principal, type ResourceEngine, type Tenancy, type Unauthenticated } from "@erp/core"
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import {
  type CallToolResult,
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type Tool
} from "@modelcontextprotocol/sdk/types.js"
import { Cause, Effect, type ManagedRuntime, Option } from "effect"
import { domainErrorBody, type ErrorBody, internalErrorBody } from "./errors.js"
import { type ToolArguments, type ToolDefinition, tools as registryTools } from "./tools.js"

export const MCP_SERVER_VERSION = "0.1.0"

const INSTRUCTIONS = "ERP integrations API for one tenant (see list_tenants). Lists are paginated: pass pagination.next_cursor " +
  "as cursor to continue. Money and quantities are decimal strings. A refused call answers isError with the API's error body " +
  "(status_code, message, code, details.fields): relay it, fix the arguments it names, or ask for a key with the permission."

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

export const toolResult = (value: unknown): CallToolResult => ({
  content: [{ type: "text", text: JSON.stringify(value ?? null, null, 2) }],
  ...(isRecord(value) ? { structuredContent: value } : {})
})

export const toolError = (body: ErrorBody): CallToolResult => ({
  content: [{ type: "text", text: JSON.stringify(body, null, 2) }],
  structuredContent: { ...body },
  isError: true
})

/**
 * Runs one tool call to a result, whatever happens: refusals become the spec's
 * error body, defects a logged 500. Only interruption (the client cancelled) escapes.
 */
export const callTool = <R>(tool: ToolDefinition, principal: Effect.Effect<Principal, Unauthenticated | InvalidRequest, R>, args: ToolArguments) =>
  Effect.flatMap(principal, (caller) => {
    // Every argument passes the same rules as an HTTP body before any tool reads it.
    const untrusted = checkUntrustedJson(args, "arguments")
    return untrusted ? Effect.fail(untrusted) : tool.run(caller, args)
  }).pipe(
    Effect.map(toolResult),
    Effect.catchAllCause((cause) =>
      Cause.isInterruptedOnly(cause)
        ? Effect.interrupt
        : Option.match(Cause.failureOption(cause), {
          onSome: (error) => Effect.succeed(toolError(domainErrorBody(error))),
          onNone: () => Effect.logError(`MCP tool ${tool.name} failed`, cause).pipe(Effect.as(toolError(internalErrorBody())))
        })
    ),
    Effect.withSpan(`mcp.${tool.name}`)
  )

export interface McpServerOptions<R> {
  /**
   * Resolves the caller on every call, not once per session, so a key revoked
   * or expired mid-session stops working at once (401).
   */
  readonly principal: Effect.Effect<Principal, Unauthenticated | InvalidRequest, R>
  readonly runtime: ManagedRuntime.ManagedRuntime<R | ResourceEngine | Tenancy, unknown>
  /** Defaults to every tool derived from the resource registry. */
  readonly tools?: ReadonlyArray<ToolDefinition>
}

/** An MCP server (not yet connected) offering the registry's tools to one caller. */
export const makeMcpServer = <R>(options: McpServerOptions<R>): Server => {
  const tools = options.tools ?? registryTools
  const byName = new Map(tools.map((tool) => [tool.name, tool]))
  const listed: Array<Tool> = tools.map(({ name, title, description, inputSchema, annotations }) => ({
    name,
    title,
    description,
    inputSchema: { ...inputSchema, required: [...inputSchema.required] },
    annotations
  }))

  const server = new Server({ name: "erp", version: MCP_SERVER_VERSION }, { capabilities: { tools: {} }, instructions: INSTRUCTIONS })
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listed }))
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const tool = byName.get(request.params.name)
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool "${request.params.name}"; tools/list names the tools`)
    try {
      return await options.runtime.runPromise(callTool(tool, options.principal, request.params.arguments ?? {}), { signal: extra.signal })
    } catch (error) {
      // The runtime itself failed (the store could not be opened) or the call was cancelled; the agent still gets an answer.
      console.error(`MCP tool ${tool.name} could not run:`, error)
      return toolError(internalErrorBody())
    }
  })
  return server
}
