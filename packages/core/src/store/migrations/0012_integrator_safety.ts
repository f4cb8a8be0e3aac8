import * as SqlClient from "effect/sql/SqlClient"
import { Effect } from "effect"

/**
 * Idempotency keys (the first answer to a POST or PATCH kept for 24 hours per tenant and
 * key), per-credential rate windows shared by every host, and the per-tenant and per-key
 * overrides of the default rate limit.
 */
export default Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`
CREATE TABLE idempotency_keys (
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  key text NOT NULL,
  fingerprint text NOT NULL,
  status_code int,
  response_headers jsonb,
  response_body text,
  locked_until timestamptz(3) NOT NULL,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  expires_at timestamptz(3) NOT NULL,
  PRIMARY KEY (tenant_id, key)
);
CREATE INDEX idempotency_keys_expiry_idx ON idempotency_keys (expires_at);

CREATE TABLE credential_rate_windows (
  key text NOT NULL,
  window_start timestamptz(0) NOT NULL,
  used int NOT NULL,
  last_grant int NOT NULL,
  expires_at timestamptz(0) NOT NULL,
  PRIMARY KEY (key, window_start)
);
CREATE INDEX credential_rate_windows_expiry_idx ON credential_rate_windows (expires_at);

ALTER TABLE tenants ADD COLUMN rate_limit_per_minute int CHECK (rate_limit_per_minute > 0);
ALTER TABLE api_keys ADD COLUMN rate_limit_per_minute int CHECK (rate_limit_per_minute > 0);
`))
