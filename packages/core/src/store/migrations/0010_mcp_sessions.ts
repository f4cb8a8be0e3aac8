import * as SqlClient from "effect/sql/SqlClient"
import { Effect } from "effect"

/** MCP sessions of the Streamable HTTP transport: in the store, so every host can serve every session. */
export default Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`
CREATE TABLE mcp_sessions (
  id_hash text PRIMARY KEY,
  owner text NOT NULL,
  client_name text,
  protocol_version text,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  last_seen_at timestamptz(3) NOT NULL DEFAULT now(),
  expires_at timestamptz(3) NOT NULL
);
CREATE INDEX mcp_sessions_expiry ON mcp_sessions (expires_at);
`))
