import * as SqlClient from "effect/sql/SqlClient"
import { Effect, Layer } from "effect"
import { randomBytes } from "node:crypto"
import { hashSecret } from "../auth/tokens.js"
import { McpSessions, mcpSessionIdleSeconds } from "../mcp/sessions.js"
import { makeDirect } from "./direct-statements.js"

/** Visible ASCII, as the MCP transport requires of a session id; 256 bits, so it cannot be guessed. */
const newSessionId = () => randomBytes(32).toString("base64url")

/** A session id a client could send: anything else is simply not found (and never reaches SQL). */
const PLAUSIBLE_ID = /^[A-Za-z0-9_-]{16,128}$/

export const layerMcpSessionsSql = (idleSeconds?: number) =>
  Layer.effect(
    McpSessions,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const direct = yield* makeDirect
      const idle = yield* mcpSessionIdleSeconds(idleSeconds)
      return McpSessions.of({
        idleSeconds: idle,
        open: ({ owner, clientName, protocolVersion }) =>
          Effect.gen(function* () {
            const id = newSessionId()
            // Sessions long expired go when new ones come, so the table never grows without bound.
            yield* sql`DELETE FROM mcp_sessions WHERE expires_at < now() - interval '1 day'`
            yield* sql`INSERT INTO mcp_sessions (id_hash, owner, client_name, protocol_version, expires_at)
              VALUES (${hashSecret(id)}, ${owner}, ${clientName?.slice(0, 200) ?? null}, ${protocolVersion?.slice(0, 40) ?? null},
                now() + make_interval(secs => ${idle}))`
            return id
          }).pipe(Effect.orDie),
        resume: (id, owner) =>
          PLAUSIBLE_ID.test(id)
            ? Effect.gen(function* () {
              // Every MCP call over HTTP resumes its session: straight to the driver.
              const touched = yield* direct(sql`
                UPDATE mcp_sessions SET last_seen_at = now(), expires_at = now() + make_interval(secs => ${idle})
                WHERE id_hash = ${hashSecret(id)} AND expires_at > now() AND owner = ${owner}
                RETURNING owner`, true)
              if (touched.length > 0) return "resumed" as const
              const live = yield* sql`SELECT 1 FROM mcp_sessions WHERE id_hash = ${hashSecret(id)} AND expires_at > now()`
              return live.length > 0 ? "foreign" as const : "missing" as const
            }).pipe(Effect.orDie)
            : Effect.succeed("missing" as const),
        close: (id) =>
          PLAUSIBLE_ID.test(id)
            ? sql<{ owner: string }>`DELETE FROM mcp_sessions WHERE id_hash = ${hashSecret(id)} AND expires_at > now() RETURNING owner`.pipe(
              Effect.map((rows) => rows.length > 0),
              Effect.orDie
            )
            : Effect.succeed(false)
      })
    })
  )
