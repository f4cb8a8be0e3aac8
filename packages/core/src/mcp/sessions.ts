import { Context, type Effect } from "effect"

/**
 * MCP sessions (Streamable HTTP), kept in the store so any host behind a load balancer
 * can serve any request of a session. A session lives while it is used: each request
 * pushes its expiry `idleSeconds` ahead. Ids are random; only their hash is stored.
 */
export class McpSessions extends Context.Tag("erp/core/McpSessions")<McpSessions, {
  readonly idleSeconds: number
  readonly open: (input: { readonly owner: string; readonly clientName?: string | undefined; readonly protocolVersion?: string | undefined }) => Effect.Effect<string>
  /**
   * The live session with this id, for its owner: `resumed` (its expiry pushed ahead),
   * `foreign` (another owner's: left untouched), or `missing` (unknown, ended or expired).
   */
  readonly resume: (id: string, owner: string) => Effect.Effect<"resumed" | "foreign" | "missing">
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
