import * as SqlClient from "effect/sql/SqlClient"
import { Effect } from "effect"

/**
 * A key whose request's write committed says so, in the write's own transaction, with the record
 * it wrote first: a host that stops before keeping the answer leaves a key a retry never runs again.
 */
export default Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`
ALTER TABLE idempotency_keys ADD COLUMN committed_at timestamptz(3);
ALTER TABLE idempotency_keys ADD COLUMN committed_resource text;
ALTER TABLE idempotency_keys ADD COLUMN committed_id text;
`))
