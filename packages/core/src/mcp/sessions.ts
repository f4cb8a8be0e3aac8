import { Context, Effect } from "effect"
import { InvalidSetting, loadConfig } from "../config/load.js"
import { mcpSettings } from "../config/variables.js"

/**
 * MCP sessions (Streamable HTTP), kept in the store so any host behind a load balancer
 * can serve any request of a session. A session lives while it is used: each request
 * pushes its expiry `idleSeconds` ahead. Ids are random; only their hash is stored.
 */
export class McpSessions extends Context.Service<McpSessions, {
  readonly idleSeconds: number
  readonly open: (input: { readonly owner: string; readonly clientName?: string | undefined; readonly protocolVersion?: string | undefined }) => Effect.Effect<string>
  /**
   * The live session with this id, for its owner: `resumed` (its expiry pushed ahead),
   * `foreign` (another owner's: left untouched), or `missing` (unknown, ended or expired).
   */
  readonly resume: (id: string, owner: string) => Effect.Effect<"resumed" | "foreign" | "missing">
  /** Ends a session; false when there was none. */
  readonly close: (id: string) => Effect.Effect<boolean>
}>()("erp/core/McpSessions") {}

/**
 * How long an unused session lives: `given` (an embedding app's option), else
 * `ERP_MCP_SESSION_IDLE_SECONDS` (one hour by default, as the MCP authorization guidance suggests).
 */
export const mcpSessionIdleSeconds = (given: number | undefined): Effect.Effect<number, InvalidSetting> => {
  if (given === undefined) return loadConfig(mcpSettings.sessionIdleSeconds.config)
  return Number.isInteger(given) && given > 0
    ? Effect.succeed(given)
    : Effect.fail(new InvalidSetting(`The MCP session idle time must be a positive number of seconds, got ${given}`))
}
