import type { DomainError, Principal, Reports, ResourceEngine, Tenancy } from "@erp/core"
import type { ToolAnnotations } from "@modelcontextprotocol/sdk/types.js"
import type { Effect } from "effect"
import type { ObjectJsonSchema } from "./json-schema.js"

export type ToolArguments = Readonly<Record<string, unknown>>

/** One MCP tool: what `tools/list` shows, and what a call runs for the authenticated caller. */
export interface ToolDefinition {
  readonly name: string
  /** The resource it serves (toolsets are sets of resources). */
  readonly resource: string
  readonly title: string
  readonly description: string
  readonly inputSchema: ObjectJsonSchema
  /** The shape of `structuredContent` on success; clients validate it. */
  readonly outputSchema: ObjectJsonSchema
  readonly annotations: ToolAnnotations
  readonly run: (principal: Principal, args: ToolArguments) => Effect.Effect<unknown, DomainError, ResourceEngine | Reports | Tenancy>
}
