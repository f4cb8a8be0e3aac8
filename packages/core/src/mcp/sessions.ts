import { Context, type Effect, type Option } from "effect"

/** An MCP session as the store keeps it: who owns it (`user:<id>`, `api_key:<id>`). */
export interface McpSession {
  readonly owner: string
  readonly clientName: string | null
  readonly protocolVersion: string | null
}

/**
 * MCP sessions (Streamable HTTP), kept in the store so any host behind a load balancer
 * can serve any request of a session. A session lives while it is used: each request
 * pushes its expiry `idleSeconds` ahead. Ids are random; only their hash is stored.
 */
export class McpSessions extends Context.Tag("erp/core/McpSessions")<McpSessions, {
  readonly idleSeconds: number
  readonly open: (input: { readonly owner: string; readonly clientName?: string | undefined; readonly protocolVersion?: string | undefined }) => Effect.Effect<string>
  /** The live session with this id, its expiry pushed ahead; None when unknown or expired. */
  readonly resume: (id: string) => Effect.Effect<Option.Option<McpSession>>
  /** Ends a session; false when there was none. */
  readonly close: (id: string) => Effect.Effect<boolean>
}>() {}

/** One hour, as the MCP authorization guidance suggests for idle sessions; `ERP_MCP_SESSION_IDLE_SECONDS` changes it. */
export const DEFAULT_MCP_SESSION_IDLE_SECONDS = 3600

export const mcpSessionIdleSeconds = (given: number | undefined): number => {
  const fromEnv = Number(process.env.ERP_MCP_SESSION_IDLE_SECONDS)
  const value = given ?? (Number.isInteger(fromEnv) && fromEnv > 0 ? fromEnv : DEFAULT_MCP_SESSION_IDLE_SECONDS)
  if (!Number.isInteger(value) || value <= 0) throw new Error(`The MCP session idle time must be a positive number of seconds, got ${value}`)
  return value
}
