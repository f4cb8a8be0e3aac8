import * as SqlClient from "effect/sql/SqlClient"
import { Effect } from "effect"

/**
 * Rate limits count in a sliding window: per key, the times of the hits allowed in the
 * last window (a sliding log), instead of one counter per fixed window, which lets twice
 * the limit through across a window boundary. The fixed-window counters are transient: dropped.
 */
export default Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`
DROP TABLE rate_limit_counters;

CREATE TABLE rate_limit_windows (
  key text PRIMARY KEY,
  hits timestamptz[] NOT NULL,
  expires_at timestamptz NOT NULL
);
CREATE INDEX rate_limit_windows_expiry_idx ON rate_limit_windows (expires_at);
`))
