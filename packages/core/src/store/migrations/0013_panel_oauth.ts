import * as SqlClient from "effect/sql/SqlClient"
import { Effect } from "effect"

/**
 * The panel's OAuth screens: a client may belong to the tenant whose admin made it in the
 * panel (operator and dynamically registered clients belong to none), and a tenant's grants
 * are found by tenant.
 */
export default Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`
ALTER TABLE oauth_clients ADD COLUMN tenant_id uuid REFERENCES tenants (id);
CREATE INDEX oauth_clients_tenant_idx ON oauth_clients (tenant_id) WHERE tenant_id IS NOT NULL;
CREATE INDEX oauth_tokens_tenant_idx ON oauth_tokens (tenant_id, family_id);
CREATE INDEX oauth_tokens_user_idx ON oauth_tokens (user_id) WHERE tenant_id IS NULL;
`))
