import * as SqlClient from "effect/sql/SqlClient"
import { Effect } from "effect"

/**
 * Sales documents: quotes, sales orders and invoices with their items, the tenant's
 * Brazilian fiscal rules with their taxes, and the snapshots of what each invoice
 * item's taxes were computed from. Receivables' links to orders and invoices become
 * real references.
 */
export default Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`
CREATE TABLE quotes (
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  record_number integer NOT NULL,
  reference_code text,
  product_type text,
  -- expired is derived on read from valid_until in the tenant's time zone.
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'rejected', 'converted')),
  customer_id uuid NOT NULL,
  quote_date date,
  valid_until date,
  salesperson_name text,
  estimated_delivery_date date,
  description text,
  subtotal numeric(20, 6) NOT NULL DEFAULT 0,
  discount_amount numeric(20, 6),
  discount_rate numeric(20, 6),
  total_discount numeric(20, 6) NOT NULL DEFAULT 0,
  total numeric(20, 6) NOT NULL DEFAULT 0 CHECK (total >= 0),
  metadata jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  deleted_at timestamptz(3),
  search_vector tsvector GENERATED ALWAYS AS (
    to_tsvector('erp_search', coalesce(reference_code, '') || ' ' || coalesce(salesperson_name, '') || ' ' || coalesce(description, ''))
  ) STORED,
  payload_vector tsvector GENERATED ALWAYS AS (jsonb_to_tsvector('erp_search', metadata, '["string", "numeric"]')) STORED,
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, customer_id) REFERENCES customers (tenant_id, id)
);
CREATE UNIQUE INDEX quotes_record_number_key ON quotes (tenant_id, record_number);
CREATE INDEX quotes_customer_idx ON quotes (tenant_id, customer_id);
CREATE INDEX quotes_created_idx ON quotes (tenant_id, created_at, id);
CREATE INDEX quotes_search_idx ON quotes USING gin (search_vector);
CREATE INDEX quotes_payload_idx ON quotes USING gin (payload_vector);

CREATE TABLE quote_items (
  tenant_id uuid NOT NULL,
  quote_id uuid NOT NULL,
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  product_id uuid,
  item_description text NOT NULL,
  quantity numeric(20, 6) NOT NULL,
  unit_price numeric(20, 6) NOT NULL,
  discount_amount numeric(20, 6) NOT NULL DEFAULT 0,
  subtotal numeric(20, 6) NOT NULL,
  total numeric(20, 6) NOT NULL,
  position integer NOT NULL,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  deleted_at timestamptz(3),
  PRIMARY KEY (tenant_id, quote_id, id),
  FOREIGN KEY (tenant_id, quote_id) REFERENCES quotes (tenant_id, id),
  FOREIGN KEY (tenant_id, product_id) REFERENCES products (tenant_id, id)
);

CREATE TABLE sales_orders (
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  record_number integer NOT NULL,
  reference_code text,
  operation_type text,
  product_type text,
  status text NOT NULL DEFAULT 'draft' CHECK (status IN ('draft', 'confirmed', 'fulfilled', 'cancelled')),
  order_date date,
  delivery_date date,
  customer_id uuid NOT NULL,
  quote_id uuid,
  salesperson_name text,
  description text,
  notes text,
  subtotal numeric(20, 6) NOT NULL DEFAULT 0,
  items_discount numeric(20, 6) NOT NULL DEFAULT 0,
  discount_amount numeric(20, 6),
  discount_rate numeric(20, 6),
  total_discount numeric(20, 6) NOT NULL DEFAULT 0,
  total numeric(20, 6) NOT NULL DEFAULT 0 CHECK (total >= 0),
  metadata jsonb NOT NULL DEFAULT '{}',
  br_data jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  deleted_at timestamptz(3),
  search_vector tsvector GENERATED ALWAYS AS (
    to_tsvector('erp_search', coalesce(reference_code, '') || ' ' || coalesce(salesperson_name, '') || ' ' || coalesce(description, '')
      || ' ' || coalesce(notes, ''))
  ) STORED,
  payload_vector tsvector GENERATED ALWAYS AS (jsonb_to_tsvector('erp_search', metadata, '["string", "numeric"]')) STORED,
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, customer_id) REFERENCES customers (tenant_id, id),
  FOREIGN KEY (tenant_id, quote_id) REFERENCES quotes (tenant_id, id)
);
-- A quote becomes one order: a second conversion is a conflict even when two race.
CREATE UNIQUE INDEX sales_orders_quote_key ON sales_orders (tenant_id, quote_id) WHERE quote_id IS NOT NULL AND deleted_at IS NULL;
CREATE UNIQUE INDEX sales_orders_record_number_key ON sales_orders (tenant_id, record_number);
CREATE INDEX sales_orders_customer_idx ON sales_orders (tenant_id, customer_id);
CREATE INDEX sales_orders_order_date_idx ON sales_orders (tenant_id, order_date, id);
CREATE INDEX sales_orders_created_idx ON sales_orders (tenant_id, created_at, id);
CREATE INDEX sales_orders_search_idx ON sales_orders USING gin (search_vector);
CREATE INDEX sales_orders_payload_idx ON sales_orders USING gin (payload_vector);

CREATE TABLE sales_order_items (
  tenant_id uuid NOT NULL,
  sales_order_id uuid NOT NULL,
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  product_id uuid,
  item_description text NOT NULL,
  quantity numeric(20, 6) NOT NULL,
  unit_price numeric(20, 6) NOT NULL,
  discount_amount numeric(20, 6) NOT NULL DEFAULT 0,
  subtotal numeric(20, 6) NOT NULL,
  total numeric(20, 6) NOT NULL,
  position integer NOT NULL,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, sales_order_id, id),
  FOREIGN KEY (tenant_id, sales_order_id) REFERENCES sales_orders (tenant_id, id),
  FOREIGN KEY (tenant_id, product_id) REFERENCES products (tenant_id, id)
);

CREATE TABLE invoices (
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  reference_code text,
  series text,
  status text NOT NULL DEFAULT 'draft' CHECK (status IN ('draft', 'issued', 'cancelled')),
  operation_type text,
  product_type text,
  customer_id uuid NOT NULL,
  invoice_date date NOT NULL,
  origin_state_code text,
  origin_country_code text,
  destination_state_code text,
  destination_country_code text,
  customer_tax_type text,
  salesperson_name text,
  fiscal_notes text,
  internal_notes text,
  discount_amount numeric(20, 6),
  discount_rate numeric(20, 6),
  tax_engine_provider text,
  sales_order_id uuid,
  subtotal numeric(20, 6) NOT NULL DEFAULT 0,
  items_discount numeric(20, 6) NOT NULL DEFAULT 0,
  total_discount numeric(20, 6) NOT NULL DEFAULT 0,
  total_tax numeric(20, 6) NOT NULL DEFAULT 0,
  withheld_total numeric(20, 6) NOT NULL DEFAULT 0,
  net_receivable_total numeric(20, 6) NOT NULL DEFAULT 0,
  total numeric(20, 6) NOT NULL DEFAULT 0 CHECK (total >= 0),
  br_data jsonb NOT NULL DEFAULT '{}',
  us_data jsonb NOT NULL DEFAULT '{}',
  deleted_by_user_id uuid,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  deleted_at timestamptz(3),
  search_vector tsvector GENERATED ALWAYS AS (
    to_tsvector('erp_search', coalesce(reference_code, '') || ' ' || coalesce(series, '') || ' ' || coalesce(salesperson_name, '')
      || ' ' || coalesce(fiscal_notes, '') || ' ' || coalesce(internal_notes, ''))
  ) STORED,
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, customer_id) REFERENCES customers (tenant_id, id),
  FOREIGN KEY (tenant_id, sales_order_id) REFERENCES sales_orders (tenant_id, id)
);
CREATE INDEX invoices_date_idx ON invoices (tenant_id, invoice_date, id);
CREATE INDEX invoices_sales_order_idx ON invoices (tenant_id, sales_order_id);
CREATE INDEX invoices_customer_idx ON invoices (tenant_id, customer_id);
CREATE INDEX invoices_created_idx ON invoices (tenant_id, created_at, id);
CREATE INDEX invoices_search_idx ON invoices USING gin (search_vector);

-- What an item's taxes were computed from: the product's fiscal fields, the rule, the rates.
CREATE TABLE tax_resolutions (
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  provider text NOT NULL,
  inputs jsonb NOT NULL,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, id)
);

CREATE TABLE invoice_items (
  tenant_id uuid NOT NULL,
  invoice_id uuid NOT NULL,
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  product_id uuid,
  sales_order_item_id uuid,
  item_description text NOT NULL,
  quantity numeric(20, 6) NOT NULL,
  unit_price numeric(20, 6) NOT NULL,
  discount_amount numeric(20, 6) NOT NULL DEFAULT 0,
  po_number text,
  subtotal numeric(20, 6) NOT NULL,
  total numeric(20, 6) NOT NULL,
  position integer NOT NULL,
  tax_resolution_id uuid,
  br_data jsonb NOT NULL DEFAULT '{}',
  us_data jsonb NOT NULL DEFAULT '{}',
  taxes jsonb NOT NULL DEFAULT '[]',
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, invoice_id, id),
  FOREIGN KEY (tenant_id, invoice_id) REFERENCES invoices (tenant_id, id),
  FOREIGN KEY (tenant_id, product_id) REFERENCES products (tenant_id, id),
  FOREIGN KEY (tenant_id, tax_resolution_id) REFERENCES tax_resolutions (tenant_id, id)
);

CREATE TABLE fiscal_rules_br (
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  name text NOT NULL,
  description text,
  ncm_prefix text,
  cfop text,
  operation_type text,
  origin_state_code text,
  destination_state_code text,
  priority integer NOT NULL DEFAULT 0,
  is_active boolean NOT NULL DEFAULT true,
  metadata jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  deleted_at timestamptz(3),
  PRIMARY KEY (tenant_id, id)
);
CREATE INDEX fiscal_rules_br_created_idx ON fiscal_rules_br (tenant_id, created_at, id);

CREATE TABLE fiscal_rule_br_taxes (
  tenant_id uuid NOT NULL,
  fiscal_rule_id uuid NOT NULL,
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  tax_code text NOT NULL,
  tax_name text,
  rate numeric(20, 6) NOT NULL,
  base_reduction numeric(20, 6) NOT NULL DEFAULT 0,
  is_withheld boolean NOT NULL DEFAULT false,
  is_included boolean NOT NULL DEFAULT false,
  jurisdiction text,
  position integer NOT NULL,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, fiscal_rule_id, id),
  FOREIGN KEY (tenant_id, fiscal_rule_id) REFERENCES fiscal_rules_br (tenant_id, id)
);

-- Links kept as given before orders and invoices existed name nothing: they move to metadata, then become references.
UPDATE receivables SET metadata = metadata || jsonb_strip_nulls(jsonb_build_object('former_sales_order_id', sales_order_id, 'former_invoice_id', invoice_id)),
  sales_order_id = NULL, invoice_id = NULL
  WHERE sales_order_id IS NOT NULL OR invoice_id IS NOT NULL;
ALTER TABLE receivables ADD FOREIGN KEY (tenant_id, sales_order_id) REFERENCES sales_orders (tenant_id, id);
ALTER TABLE receivables ADD FOREIGN KEY (tenant_id, invoice_id) REFERENCES invoices (tenant_id, id);
CREATE INDEX receivables_invoice_idx ON receivables (tenant_id, invoice_id);
`))
