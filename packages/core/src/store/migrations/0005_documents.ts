import * as SqlClient from "effect/sql/SqlClient"
import { Effect } from "effect"

/**
 * The document engine's tables: the event log (the change feed and, later, what
 * webhooks deliver), per-tenant record number sequences, and suppliers.
 */
export default Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`
CREATE TABLE events (
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  sequence bigint GENERATED ALWAYS AS IDENTITY,
  type text NOT NULL,
  resource text NOT NULL,
  resource_id text NOT NULL,
  action text NOT NULL CHECK (action IN ('create', 'update', 'delete', 'restore')),
  actor_kind text NOT NULL,
  actor_id text NOT NULL,
  -- clock_timestamp, not now(): events of one long transaction still order by when they happened.
  created_at timestamptz(3) NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (tenant_id, id)
);
CREATE INDEX events_created_idx ON events (tenant_id, created_at, id);
CREATE INDEX events_resource_idx ON events (tenant_id, resource, resource_id);
CREATE UNIQUE INDEX events_sequence_key ON events (sequence);
CREATE INDEX events_retention_idx ON events (created_at);

CREATE TABLE record_sequences (
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  name text NOT NULL,
  last_value bigint NOT NULL,
  PRIMARY KEY (tenant_id, name)
);

CREATE TABLE suppliers (
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  type text NOT NULL DEFAULT 'company',
  tax_id text,
  tax_id_type text,
  legal_name text NOT NULL,
  trade_name text,
  website text,
  address_line1 text,
  address_line2 text,
  city_id integer REFERENCES cities (id),
  state_id integer REFERENCES states (id),
  country_id integer REFERENCES countries (id),
  postal_code text,
  reference_code text,
  bank_code text,
  branch_number text,
  account_number text,
  account_type text,
  emails jsonb NOT NULL DEFAULT '[]',
  phones jsonb NOT NULL DEFAULT '[]',
  tags jsonb NOT NULL DEFAULT '[]',
  is_blocked boolean NOT NULL DEFAULT false,
  metadata jsonb NOT NULL DEFAULT '{}',
  br_data jsonb NOT NULL DEFAULT '{}',
  us_data jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  deleted_at timestamptz(3),
  search_vector tsvector GENERATED ALWAYS AS (
    to_tsvector('erp_search', legal_name || ' ' || coalesce(trade_name, '') || ' ' || coalesce(tax_id, '') || ' '
      || coalesce(reference_code, ''))
      || jsonb_to_tsvector('erp_search', emails, '["string"]')
      || jsonb_to_tsvector('erp_search', tags, '["string"]')
  ) STORED,
  payload_vector tsvector GENERATED ALWAYS AS (jsonb_to_tsvector('erp_search', metadata, '["string", "numeric"]')) STORED,
  PRIMARY KEY (tenant_id, id)
);
CREATE INDEX suppliers_created_idx ON suppliers (tenant_id, created_at, id);
CREATE INDEX suppliers_updated_idx ON suppliers (tenant_id, updated_at, id);
CREATE INDEX suppliers_legal_name_idx ON suppliers (tenant_id, legal_name, id);
CREATE INDEX suppliers_tax_id_idx ON suppliers (tenant_id, tax_id);
CREATE UNIQUE INDEX suppliers_reference_code_key ON suppliers (tenant_id, reference_code)
  WHERE reference_code IS NOT NULL AND deleted_at IS NULL;
CREATE INDEX suppliers_search_idx ON suppliers USING gin (search_vector);
CREATE INDEX suppliers_payload_idx ON suppliers USING gin (payload_vector);
`))
