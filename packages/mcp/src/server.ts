import {
  checkUntrustedJson,
  type DomainError,
  errorBody,
  invalid,
  type InvalidRequest,
  type McpToolset,
  type OAuth,
  type ResourceEngine,
  type Reports,
  type Tenancy,
  TenantBusy,
  TenantGate,
  traced,
  type Unauthenticated
} from "@erp/core"
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv"
import {
  type CallToolResult,
  CallToolRequestSchema,
  CompleteRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  SetLevelRequestSchema,
  type Tool
} from "@modelcontextprotocol/sdk/types.js"
import { Cause, Effect, Option } from "effect"
import type { McpCaller } from "./caller.js"
import { domainErrorBody, type ErrorBody, internalErrorBody } from "./errors.js"
import { JsonAnswer } from "./json-answer.js"
import { ANY_OBJECT, type ObjectJsonSchema } from "./json-schema.js"
import { getPrompt, promptsFor } from "./prompts.js"
import { contractResources, readContractResource } from "./resources.js"
import { registryTools, type ToolArguments, type ToolDefinition } from "./tools.js"
import { toolsetsOf, toolsetTools } from "./toolsets.js"

export const MCP_SERVER_VERSION = "0.1.0"

const INSTRUCTIONS = "ERP integrations API. Call list_tenants first: it names the tenants you reach and your role in each; every " +
  "other tool takes tenant_id. Lists are paginated: pass pagination.next_cursor as cursor to continue. Money and quantities are " +
  "decimal strings. A refused call answers isError with the API's error body (status_code, message, code, details.fields): relay " +
  "it, fix the arguments it names, or ask for the permission. The resources erp://api and erp://resources/{name} describe every field."

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** Compact JSON: an agent reads it as well as indented, for fewer tokens and less work per call. */
export const toolResult = (value: unknown): CallToolResult => {
  if (value instanceof JsonAnswer) {
    const structured: unknown = JSON.parse(value.text)
    return { content: [{ type: "text", text: value.text }], ...(isRecord(structured) ? { structuredContent: structured } : {}) }
  }
  return {
    content: [{ type: "text", text: JSON.stringify(value ?? null) }],
    ...(isRecord(value) ? { structuredContent: value } : {})
  }
}

/**
 * A refusal: the spec's error body as text. No `structuredContent`: clients validate that
 * against the tool's `outputSchema`, which describes success.
 */
export const toolError = (body: ErrorBody): CallToolResult => ({
  content: [{ type: "text", text: JSON.stringify(body) }],
  isError: true
})

/** Runs an effect in the host's runtime (a ManagedRuntime, or the HTTP request's own). */
export type McpRunner<R> = <A, E>(effect: Effect.Effect<A, E, R>, options?: { readonly signal?: AbortSignal }) => Promise<A>

type CallerEffect<R> = Effect.Effect<McpCaller, Unauthenticated | InvalidRequest, R>

/**
 * Runs one effect to a tool result, whatever happens: refusals become the spec's
 * error body, defects a logged 500. Only interruption (the client cancelled) escapes.
 */
const busyBody = (busy: TenantBusy) =>
  errorBody(429, `Too many calls of this tenant at once (${busy.concurrency} run at a time; the wait for a turn exceeded ${busy.waitMs} ms); retry shortly`, "TOO_MANY_CONCURRENT_REQUESTS")

const toResult = <R>(name: string, effect: Effect.Effect<unknown, DomainError | TenantBusy, R>) =>
  effect.pipe(
    Effect.map(toolResult),
    Effect.catchCause((cause) =>
      Cause.hasInterruptsOnly(cause)
        ? Effect.interrupt
        : Option.match(Cause.findErrorOption(cause), {
          onSome: (error) => Effect.succeed(toolError(error instanceof TenantBusy ? busyBody(error) : domainErrorBody(error))),
          onNone: () => Effect.logError(`MCP tool ${name} failed`, cause).pipe(Effect.as(toolError(internalErrorBody())))
        })
    ),
    traced(`mcp.${name}`)
  )

const TENANT_ID_DESCRIPTION = "UUID of the tenant to act on (list_tenants names yours)."

/** `tenant_id`, taken off the arguments: a string or nothing; anything else is refused before the tool runs. */
const tenantArgument = (args: ToolArguments): Effect.Effect<{ readonly tenantId: string | undefined; readonly rest: ToolArguments }, InvalidRequest> => {
  const { tenant_id: tenantId, ...rest } = args
  return tenantId === undefined || typeof tenantId === "string"
    ? Effect.succeed({ tenantId, rest })
    : Effect.fail(invalid("tenant_id must be a string (a tenant's UUID)", "INVALID_ARGUMENTS", { tenant_id: ["must be a string"] }))
}

/** Runs a resource tool for the caller: the tenant it names, resolved with the same permission rules as REST. */
export const callTool = <R>(tool: ToolDefinition, caller: CallerEffect<R>, args: ToolArguments) =>
  toResult(tool.name, Effect.gen(function* () {
    // Every argument passes the same rules as an HTTP body before any tool reads it.
    const untrusted = checkUntrustedJson(args, "arguments")
    if (untrusted) return yield* Effect.fail(untrusted)
    const { tenantId, rest } = yield* tenantArgument(args)
    const principal = yield* Effect.flatMap(caller, (resolved) => resolved.principalFor(tenantId))
    // The tenant's turns in the store, as over REST: an agent's burst cannot take the pool from other tenants.
    const gate = yield* Effect.serviceOption(TenantGate)
    return yield* Option.isSome(gate) ? gate.value.run(principal.tenantId, tool.run(principal, rest)) : tool.run(principal, rest)
  }))

const LIST_TENANTS: Tool = {
  name: "list_tenants",
  title: "List tenants",
  description: "The tenants you can act on, as {data: [{id, name, country_code, role}]} (role is admin or member for a user, null for " +
    "an API key). Pass one's id as tenant_id to every other tool.",
  inputSchema: { type: "object", properties: {}, required: [], additionalProperties: false },
  outputSchema: {
    type: "object",
    properties: {
      data: {
        type: "array",
        items: {
          type: "object",
          properties: {
            id: { type: "string" },
            name: { type: "string" },
            country_code: { type: "string" },
            role: { anyOf: [{ type: "string", enum: ["admin", "member"] }, { type: "null" }] }
          },
          required: ["id", "name", "country_code", "role"]
        }
      }
    },
    required: ["data"]
  },
  annotations: { title: "List tenants", readOnlyHint: true, openWorldHint: false }
}

const listTenants = <R>(caller: CallerEffect<R>, args: ToolArguments) => {
  const names = Object.keys(args)
  return toResult("list_tenants", names.length > 0
    ? Effect.fail(invalid(`Invalid arguments: this tool takes none, got ${names.join(", ")}`, "INVALID_ARGUMENTS",
      Object.fromEntries(names.map((name) => [name, ["is not an argument of this tool"]]))))
    : Effect.map(Effect.flatMap(caller, (resolved) => resolved.tenants), (data) => ({ data })))
}

/** A resource tool as `tools/list` shows it: with `tenant_id`, required when the caller chooses among tenants. */
const listedTool = ({ name, title, description, inputSchema, outputSchema, annotations }: ToolDefinition, choosesTenant: boolean): Tool => {
  const schema: ObjectJsonSchema = {
    ...inputSchema,
    properties: { tenant_id: { type: "string", format: "uuid", description: TENANT_ID_DESCRIPTION }, ...inputSchema.properties },
    required: choosesTenant ? ["tenant_id", ...inputSchema.required] : [...inputSchema.required]
  }
  return {
    name,
    title,
    description,
    inputSchema: schema as Tool["inputSchema"],
    ...(outputSchema === ANY_OBJECT ? {} : { outputSchema: outputSchema as Tool["outputSchema"] }),
    annotations
  }
}

export interface McpServerOptions<R> {
  /**
   * Resolves the caller on every call, not once per session, so a key revoked
   * or a token expired mid-session stops working at once (401).
   */
  readonly caller: CallerEffect<R>
  /** Whether tools must name a tenant (a user's session); an API key's tools default to its tenant. */
  readonly choosesTenant: boolean
  readonly run: McpRunner<R | ResourceEngine | Reports | Tenancy | OAuth>
  /** Defaults to every tool derived from the resource registry. */
  readonly tools?: ReadonlyArray<ToolDefinition>
  /** Serve only the tools of these toolsets (and `list_tenants`); every tool when absent. */
  readonly toolsets?: ReadonlyArray<McpToolset>
}

/**
 * Over HTTP every request gets a server of its own (the session lives in the store): what does
 * not depend on the request is made once. The tool list per tool set and tenant choice, and
 * one JSON Schema validator (the SDK would build an Ajv instance for each server).
 */
interface ServedTools {
  readonly byName: ReadonlyMap<string, ToolDefinition>
  /** Names of the tools served, `list_tenants` included: prompts are offered where theirs are. */
  readonly names: ReadonlySet<string>
  readonly listed: Map<boolean, Array<Tool>>
}
const toolSets = new WeakMap<ReadonlyArray<ToolDefinition>, ServedTools>()
const toolSetOf = (tools: ReadonlyArray<ToolDefinition>, choosesTenant: boolean) => {
  let set = toolSets.get(tools)
  if (!set) {
    set = { byName: new Map(tools.map((tool) => [tool.name, tool])), names: new Set([LIST_TENANTS.name, ...tools.map((tool) => tool.name)]), listed: new Map() }
    toolSets.set(tools, set)
  }
  let listed = set.listed.get(choosesTenant)
  if (!listed) {
    listed = [LIST_TENANTS, ...tools.map((tool) => listedTool(tool, choosesTenant))]
    set.listed.set(choosesTenant, listed)
  }
  return { byName: set.byName, names: set.names, listed }
}

/** The refusal of a tool this server knows but does not serve, naming the toolsets that have it. */
const notServed = (tool: ToolDefinition, toolsets: ReadonlyArray<McpToolset>) => {
  const sets = toolsetsOf(tool)
  return new McpError(
    ErrorCode.InvalidParams,
    `Tool "${tool.name}" is not served here: it is in the ${sets.join(", ")} toolset${sets.length > 1 ? "s" : ""}, and this server ` +
      `serves ${toolsets.join(", ")} (ERP_MCP_TOOLSETS, or erp mcp --toolsets); tools/list names the tools it serves`
  )
}
let validator: AjvJsonSchemaValidator | undefined

/** An MCP server (not yet connected) offering the registry's tools, contract resources and prompts to one caller. */
export const makeMcpServer = <R>(options: McpServerOptions<R>): Server => {
  const every = options.tools ?? registryTools()
  const { byName, names, listed } = toolSetOf(toolsetTools(every, options.toolsets), options.choosesTenant)
  const { byName: everyByName } = toolSetOf(every, options.choosesTenant)

  const server = new Server(
    { name: "erp", title: "ERP integrations API", version: MCP_SERVER_VERSION },
    {
      capabilities: { tools: {}, resources: {}, prompts: {}, completions: {}, logging: {} },
      instructions: options.toolsets
        ? `${INSTRUCTIONS} This server serves the ${options.toolsets.join(", ")} toolset${options.toolsets.length > 1 ? "s" : ""} of tools only.`
        : INSTRUCTIONS,
      jsonSchemaValidator: (validator ??= new AjvJsonSchemaValidator())
    }
  )
  const run = async (name: string, effect: Effect.Effect<CallToolResult, never, R | ResourceEngine | Reports | Tenancy | OAuth>, signal: AbortSignal) => {
    try {
      return await options.run(effect, { signal })
    } catch (error) {
      // The runtime itself failed (the store could not be opened) or the call was cancelled; the agent still gets an answer.
      console.error(`MCP tool ${name} could not run:`, error)
      return toolError(internalErrorBody())
    }
  }
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listed }))
  server.setRequestHandler(CallToolRequestSchema, (request, extra) => {
    const args = request.params.arguments ?? {}
    if (request.params.name === LIST_TENANTS.name) return run(LIST_TENANTS.name, listTenants(options.caller, args), extra.signal)
    const tool = byName.get(request.params.name)
    if (!tool) {
      const known = everyByName.get(request.params.name)
      if (known && options.toolsets) throw notServed(known, options.toolsets)
      throw new McpError(ErrorCode.InvalidParams, `Unknown tool "${request.params.name}"; tools/list names the tools`)
    }
    return run(tool.name, callTool(tool, options.caller, args), extra.signal)
  })
  server.setRequestHandler(ListResourcesRequestSchema, () => ({ resources: contractResources() }))
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({ resourceTemplates: [] }))
  server.setRequestHandler(ReadResourceRequestSchema, (request) => {
    const contents = readContractResource(request.params.uri)
    if (!contents) throw new McpError(ErrorCode.InvalidParams, `Unknown resource "${request.params.uri}"; resources/list names them`)
    return { contents: [contents] }
  })
  const prompts = promptsFor(options.toolsets ? names : undefined)
  server.setRequestHandler(ListPromptsRequestSchema, () => ({ prompts }))
  // Tools log nothing to the client (the operator's log has it all), so any level is accepted and nothing changes.
  server.setRequestHandler(SetLevelRequestSchema, () => ({}))
  // A prompt's tenant_id completes to the caller's tenants (id first, then name); nothing else has a closed set of values.
  server.setRequestHandler(CompleteRequestSchema, async (request) => {
    if (request.params.ref.type !== "ref/prompt" || request.params.argument.name !== "tenant_id") return { completion: { values: [], hasMore: false } }
    const typed = request.params.argument.value.toLowerCase()
    const tenants = await options.run(Effect.orElseSucceed(Effect.flatMap(options.caller, (caller) => caller.tenants), () => []))
    const values = tenants.filter((tenant) => tenant.id.startsWith(typed) || tenant.name.toLowerCase().includes(typed)).map((tenant) => tenant.id)
    return { completion: { values: values.slice(0, 100), total: values.length, hasMore: values.length > 100 } }
  })
  server.setRequestHandler(GetPromptRequestSchema, (request) => {
    const prompt = getPrompt(request.params.name, request.params.arguments ?? {}, options.toolsets ? names : undefined)
    if (!prompt) throw new McpError(ErrorCode.InvalidParams, `Unknown prompt "${request.params.name}"; prompts/list names them`)
    return prompt
  })
  return server
}
