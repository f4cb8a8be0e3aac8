import * as SqlClient from "effect/sql/SqlClient"
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
 *
 * And the panel-only resources whose writes are events like any other: subscription plans,
 * customer subscriptions, support tickets (with messages and attachments), tenant email
 * identities and email dispatches.
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

CREATE TABLE subscription_plans (
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  name text NOT NULL,
  code text,
  description text,
  amount numeric(20, 6) NOT NULL CHECK (amount >= 0),
  currency text NOT NULL DEFAULT 'BRL',
  billing_interval text NOT NULL CHECK (billing_interval IN ('day', 'week', 'month', 'year')),
  interval_count integer NOT NULL DEFAULT 1,
  trial_days integer NOT NULL DEFAULT 0,
  is_active boolean NOT NULL DEFAULT true,
  metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  deleted_at timestamptz(3),
  PRIMARY KEY (tenant_id, id)
);
CREATE UNIQUE INDEX subscription_plans_code_key ON subscription_plans (tenant_id, code) WHERE code IS NOT NULL AND deleted_at IS NULL;

CREATE TABLE customer_subscriptions (
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  customer_id uuid NOT NULL,
  plan_id uuid NOT NULL,
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('trialing', 'active', 'past_due', 'paused', 'cancelled')),
  quantity integer NOT NULL DEFAULT 1,
  current_period_start date,
  current_period_end date,
  trial_ends_at date,
  cancel_at_period_end boolean NOT NULL DEFAULT false,
  cancelled_at timestamptz(3),
  metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  deleted_at timestamptz(3),
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, customer_id) REFERENCES customers (tenant_id, id),
  FOREIGN KEY (tenant_id, plan_id) REFERENCES subscription_plans (tenant_id, id)
);
CREATE INDEX customer_subscriptions_customer_idx ON customer_subscriptions (tenant_id, customer_id);

CREATE TABLE support_tickets (
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  ticket_number integer NOT NULL,
  subject text NOT NULL,
  status text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'pending', 'on_hold', 'solved', 'closed')),
  priority text NOT NULL DEFAULT 'normal' CHECK (priority IN ('low', 'normal', 'high', 'urgent')),
  channel text NOT NULL DEFAULT 'web',
  customer_id uuid,
  requester_email text,
  assignee_user_id uuid,
  tags jsonb NOT NULL DEFAULT '[]'::jsonb,
  description text,
  metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  deleted_at timestamptz(3),
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, customer_id) REFERENCES customers (tenant_id, id)
);
CREATE UNIQUE INDEX support_tickets_number_key ON support_tickets (tenant_id, ticket_number);

CREATE TABLE support_ticket_messages (
  tenant_id uuid NOT NULL,
  support_ticket_id uuid NOT NULL,
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  author_kind text NOT NULL CHECK (author_kind IN ('customer', 'agent', 'system')),
  author_name text,
  author_email text,
  body text NOT NULL,
  is_internal boolean NOT NULL DEFAULT false,
  created_at timestamptz(3) NOT NULL DEFAULT clock_timestamp(),
  updated_at timestamptz(3) NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (tenant_id, support_ticket_id, id),
  FOREIGN KEY (tenant_id, support_ticket_id) REFERENCES support_tickets (tenant_id, id)
);

CREATE TABLE support_ticket_attachments (
  tenant_id uuid NOT NULL,
  support_ticket_id uuid NOT NULL,
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  message_id uuid,
  file_name text NOT NULL,
  content_type text NOT NULL,
  size_bytes integer NOT NULL CHECK (size_bytes >= 0),
  url text NOT NULL,
  created_at timestamptz(3) NOT NULL DEFAULT clock_timestamp(),
  updated_at timestamptz(3) NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (tenant_id, support_ticket_id, id),
  FOREIGN KEY (tenant_id, support_ticket_id) REFERENCES support_tickets (tenant_id, id)
);

CREATE TABLE tenant_email_identities (
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  email text NOT NULL,
  domain text NOT NULL,
  display_name text,
  reply_to text,
  status text NOT NULL DEFAULT 'pending_verification' CHECK (status IN ('pending_verification', 'verified', 'failed')),
  verified_at timestamptz(3),
  is_default boolean NOT NULL DEFAULT false,
  metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  deleted_at timestamptz(3),
  PRIMARY KEY (tenant_id, id)
);
CREATE UNIQUE INDEX tenant_email_identities_email_key ON tenant_email_identities (tenant_id, lower(email)) WHERE deleted_at IS NULL;

CREATE TABLE email_dispatches (
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  identity_id uuid,
  to_email text NOT NULL,
  to_name text,
  subject text NOT NULL,
  template text,
  related_resource text,
  related_id text,
  status text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'sent', 'delivered', 'opened', 'bounced', 'failed')),
  provider_message_id text,
  sent_at timestamptz(3),
  delivered_at timestamptz(3),
  error_message text,
  metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  deleted_at timestamptz(3),
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, identity_id) REFERENCES tenant_email_identities (tenant_id, id)
);
CREATE INDEX email_dispatches_related_idx ON email_dispatches (tenant_id, related_resource, related_id);
`))