import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

/**
 * Webhooks: endpoints (their signing secrets sealed, never clear), one delivery per
 * subscribed endpoint per event (created in the event's transaction), and every
 * attempt of each delivery.
 *
 * A delivery copies what its payload says about the event, so it still sends the
 * same bytes after the change feed has pruned the event. `lease_until` is a
 * dispatcher's claim: expired, any other worker may take the delivery again.
 *
 * The change feed also says when the server disabled an endpoint
 * (`webhook_endpoint.disabled`, action `disabled`): a signal for the panel, never a webhook.
 */
export default Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`
ALTER TABLE events DROP CONSTRAINT events_action_check;
ALTER TABLE events ADD CONSTRAINT events_action_check CHECK (action IN ('create', 'update', 'delete', 'restore', 'disabled'));

CREATE TABLE webhook_endpoints (
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  url text NOT NULL,
  description text,
  events jsonb NOT NULL DEFAULT '[]'::jsonb,
  enabled boolean NOT NULL DEFAULT true,
  disabled_reason text,
  metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
  secret_sealed text NOT NULL,
  previous_secret_sealed text,
  previous_secret_expires_at timestamptz(3),
  failing_since timestamptz(3),
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  deleted_at timestamptz(3),
  PRIMARY KEY (tenant_id, id)
);
CREATE UNIQUE INDEX webhook_endpoints_id_key ON webhook_endpoints (id);
CREATE INDEX webhook_endpoints_live_idx ON webhook_endpoints (tenant_id) WHERE enabled AND deleted_at IS NULL;

CREATE TABLE webhook_deliveries (
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  endpoint_id uuid NOT NULL,
  event_id uuid NOT NULL,
  event_type text NOT NULL,
  resource text NOT NULL,
  resource_id text NOT NULL,
  action text NOT NULL,
  event_created_at timestamptz(3) NOT NULL,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'retrying', 'failed')),
  attempt_count integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz(3) DEFAULT clock_timestamp(),
  lease_until timestamptz(3),
  leased_by text,
  last_status_code integer,
  last_error text,
  last_attempt_at timestamptz(3),
  succeeded_at timestamptz(3),
  created_at timestamptz(3) NOT NULL DEFAULT clock_timestamp(),
  updated_at timestamptz(3) NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, endpoint_id) REFERENCES webhook_endpoints (tenant_id, id)
);
CREATE INDEX webhook_deliveries_endpoint_idx ON webhook_deliveries (tenant_id, endpoint_id, created_at, id);
-- What the dispatcher claims: due deliveries, oldest first, across tenants.
CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE status IN ('pending', 'retrying');

CREATE TABLE webhook_delivery_attempts (
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  delivery_id uuid NOT NULL,
  attempt_number integer NOT NULL,
  status_code integer,
  latency_ms integer NOT NULL,
  error text,
  response_body text,
  created_at timestamptz(3) NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, delivery_id) REFERENCES webhook_deliveries (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX webhook_delivery_attempts_delivery_idx ON webhook_delivery_attempts (tenant_id, delivery_id, created_at);
`))
