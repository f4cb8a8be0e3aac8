import * as SqlClient from "effect/sql/SqlClient"
import { Effect } from "effect"

/**
 * Every key of a tenant's table names the tenant, so a store sharded by tenant (Citus) keeps each
 * one unique on the shard that holds the tenant (`store/distribution.ts` says where each table goes).
 *
 * API keys are found by their public id before the tenant is known: a global lookup table
 * (`api_key_ids`, a reference table) maps each public id to its tenant and keeps public ids unique
 * across tenants. Keys already issued keep working, a token does not carry its tenant's id, and the
 * lookup is written only when a key is made.
 */
export default Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`
DROP INDEX events_sequence_key;
CREATE UNIQUE INDEX events_sequence_key ON events (tenant_id, sequence);

DROP INDEX webhook_endpoints_id_key;

CREATE TABLE api_key_ids (
  public_id text PRIMARY KEY,
  tenant_id uuid NOT NULL REFERENCES tenants (id)
);
INSERT INTO api_key_ids (public_id, tenant_id) SELECT public_id, tenant_id FROM api_keys;
ALTER TABLE api_keys DROP CONSTRAINT api_keys_public_id_key;
ALTER TABLE api_keys ADD CONSTRAINT api_keys_public_id_key UNIQUE (tenant_id, public_id);
ALTER TABLE api_keys ADD CONSTRAINT api_keys_public_id_fkey FOREIGN KEY (public_id) REFERENCES api_key_ids (public_id);
`))
