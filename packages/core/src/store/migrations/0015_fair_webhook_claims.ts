import * as SqlClient from "effect/sql/SqlClient"
import { Effect } from "effect"

/**
 * Webhook claims visit the endpoints with pending deliveries one by one and take each one's
 * oldest due deliveries: one index gives both, ordered by endpoint, then due time. Leases are
 * few (the attempts in flight), so counting an endpoint's reads them alone, never its backlog.
 * Claims never read deliveries in global due order: the index on due time alone goes.
 */
export default Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`
CREATE INDEX webhook_deliveries_claim_idx ON webhook_deliveries (tenant_id, endpoint_id, next_attempt_at, id) WHERE status IN ('pending', 'retrying');
CREATE INDEX webhook_deliveries_leased_idx ON webhook_deliveries (tenant_id, endpoint_id) WHERE lease_until IS NOT NULL;
DROP INDEX webhook_deliveries_due_idx;
`))
