import * as SqlClient from "effect/sql/SqlClient"
import { Effect } from "effect"

/**
 * Products and customers. Country blocks, tags, emails, phones and metadata are
 * jsonb; `search_vector` backs `search`, `payload_vector` backs `include_payload_search`.
 */
export default Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`
CREATE TABLE products (
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  reference_code text,
  name text NOT NULL,
  description text,
  tags jsonb NOT NULL DEFAULT '[]',
  type text NOT NULL DEFAULT 'goods',
  sale_price numeric(20, 6),
  image_url text,
  is_blocked boolean NOT NULL DEFAULT false,
  metadata jsonb NOT NULL DEFAULT '{}',
  unit_of_measurement_id uuid REFERENCES units_of_measurement (id),
  br_data jsonb NOT NULL DEFAULT '{}',
  us_data jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  deleted_at timestamptz(3),
  search_vector tsvector GENERATED ALWAYS AS (
    to_tsvector('erp_search', name || ' ' || coalesce(reference_code, '') || ' ' || coalesce(description, ''))
      || jsonb_to_tsvector('erp_search', tags, '["string"]')
  ) STORED,
  payload_vector tsvector GENERATED ALWAYS AS (jsonb_to_tsvector('erp_search', metadata, '["string", "numeric"]')) STORED,
  PRIMARY KEY (tenant_id, id)
);
CREATE INDEX products_created_idx ON products (tenant_id, created_at, id);
CREATE INDEX products_updated_idx ON products (tenant_id, updated_at, id);
CREATE INDEX products_name_idx ON products (tenant_id, name, id);
CREATE UNIQUE INDEX products_reference_code_key ON products (tenant_id, reference_code)
  WHERE reference_code IS NOT NULL AND deleted_at IS NULL;
CREATE INDEX products_search_idx ON products USING gin (search_vector);
CREATE INDEX products_payload_idx ON products USING gin (payload_vector);

CREATE TABLE customers (
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
CREATE INDEX customers_created_idx ON customers (tenant_id, created_at, id);
CREATE INDEX customers_updated_idx ON customers (tenant_id, updated_at, id);
CREATE INDEX customers_legal_name_idx ON customers (tenant_id, legal_name, id);
CREATE INDEX customers_tax_id_idx ON customers (tenant_id, tax_id);
CREATE UNIQUE INDEX customers_reference_code_key ON customers (tenant_id, reference_code)
  WHERE reference_code IS NOT NULL AND deleted_at IS NULL;
CREATE INDEX customers_search_idx ON customers USING gin (search_vector);
CREATE INDEX customers_payload_idx ON customers USING gin (payload_vector);
`))
