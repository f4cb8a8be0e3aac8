import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Layer, Option } from "effect"
import { randomBytes } from "node:crypto"
import { hashSecret } from "../auth/tokens.js"
import { McpSessions, mcpSessionIdleSeconds } from "../mcp/sessions.js"

/** Visible ASCII, as the MCP transport requires of a session id; 256 bits, so it cannot be guessed. */
const newSessionId = () => randomBytes(32).toString("base64url")

/** A session id a client could send: anything else is simply not found (and never reaches SQL). */
const PLAUSIBLE_ID = /^[A-Za-z0-9_-]{16,128}$/

export const layerMcpSessionsSql = (idleSeconds?: number) =>
  Layer.effect(
    McpSessions,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const idle = mcpSessionIdleSeconds(idleSeconds)
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
        resume: (id) =>
          PLAUSIBLE_ID.test(id)
            ? sql<{ owner: string; client_name: string | null; protocol_version: string | null }>`
                UPDATE mcp_sessions SET last_seen_at = now(), expires_at = now() + make_interval(secs => ${idle})
                WHERE id_hash = ${hashSecret(id)} AND expires_at > now()
                RETURNING owner, client_name, protocol_version`.pipe(
                Effect.map((rows) =>
                  Option.map(Option.fromNullable(rows[0]), (row) => ({ owner: row.owner, clientName: row.client_name, protocolVersion: row.protocol_version }))),
                Effect.orDie
              )
            : Effect.succeed(Option.none()),
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
