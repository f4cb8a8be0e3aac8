import * as SqlClient from "effect/sql/SqlClient"
import { Effect } from "effect"
import { defaultTimeZoneSql } from "../../tenancy/time-zones.js"

/**
 * Finance: each tenant's time zone (its "today", for overdue payables), financial
 * accounts, categories and transactions, payables and receivables with their
 * allocations, purchase invoices with items, and integration entity mappings.
 */
export default Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`
ALTER TABLE tenants ADD COLUMN time_zone text NOT NULL DEFAULT 'UTC';
UPDATE tenants SET time_zone = coalesce(
  (SELECT z.name FROM pg_timezone_names z WHERE z.name = ${defaultTimeZoneSql("tenants.country_code::text")}), 'UTC');

CREATE TABLE financial_accounts (
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  bank_id uuid REFERENCES banks (id),
  name text NOT NULL,
  reference_code text,
  type text NOT NULL CHECK (type IN ('checking', 'savings', 'cash', 'credit_card', 'investment', 'other')),
  initial_balance numeric(20, 6) NOT NULL DEFAULT 0,
  description text,
  is_blocked boolean NOT NULL DEFAULT false,
  display_order integer NOT NULL DEFAULT 0,
  metadata jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  deleted_at timestamptz(3),
  search_vector tsvector GENERATED ALWAYS AS (
    to_tsvector('erp_search', name || ' ' || coalesce(reference_code, '') || ' ' || coalesce(description, ''))
  ) STORED,
  payload_vector tsvector GENERATED ALWAYS AS (jsonb_to_tsvector('erp_search', metadata, '["string", "numeric"]')) STORED,
  PRIMARY KEY (tenant_id, id)
);
CREATE INDEX financial_accounts_order_idx ON financial_accounts (tenant_id, display_order, id);
CREATE INDEX financial_accounts_created_idx ON financial_accounts (tenant_id, created_at, id);
CREATE INDEX financial_accounts_search_idx ON financial_accounts USING gin (search_vector);
CREATE INDEX financial_accounts_payload_idx ON financial_accounts USING gin (payload_vector);

CREATE TABLE financial_categories (
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  name text NOT NULL,
  type text NOT NULL CHECK (type IN ('income', 'expense')),
  parent_id uuid,
  code text,
  position integer NOT NULL DEFAULT 0,
  is_blocked boolean NOT NULL DEFAULT false,
  metadata jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  deleted_at timestamptz(3),
  search_vector tsvector GENERATED ALWAYS AS (to_tsvector('erp_search', name || ' ' || coalesce(code, ''))) STORED,
  payload_vector tsvector GENERATED ALWAYS AS (jsonb_to_tsvector('erp_search', metadata, '["string", "numeric"]')) STORED,
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, parent_id) REFERENCES financial_categories (tenant_id, id),
  CHECK (parent_id IS DISTINCT FROM id)
);
CREATE INDEX financial_categories_position_idx ON financial_categories (tenant_id, position, id);
CREATE INDEX financial_categories_parent_idx ON financial_categories (tenant_id, parent_id);
CREATE INDEX financial_categories_created_idx ON financial_categories (tenant_id, created_at, id);
CREATE INDEX financial_categories_search_idx ON financial_categories USING gin (search_vector);
CREATE INDEX financial_categories_payload_idx ON financial_categories USING gin (payload_vector);

CREATE TABLE financial_transactions (
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  account_id uuid NOT NULL,
  transfer_id uuid,
  source text NOT NULL DEFAULT 'manual',
  fitid text,
  trn_type text NOT NULL,
  posted_at date NOT NULL,
  user_initiated_at date,
  amount numeric(20, 6) NOT NULL,
  orig_currency_code text,
  orig_amount numeric(20, 6),
  name text,
  extd_name text,
  memo text,
  refnum text,
  checknum text,
  srvrtid text,
  correct_fitid text,
  correct_action text CHECK (correct_action IN ('REPLACE', 'DELETE')),
  is_reconciled boolean NOT NULL DEFAULT false,
  reconciled_at timestamptz(3),
  ignored_at timestamptz(3),
  metadata jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  deleted_at timestamptz(3),
  search_vector tsvector GENERATED ALWAYS AS (
    to_tsvector('erp_search', coalesce(name, '') || ' ' || coalesce(memo, '') || ' ' || coalesce(extd_name, '') || ' '
      || coalesce(checknum, '') || ' ' || coalesce(refnum, ''))
  ) STORED,
  payload_vector tsvector GENERATED ALWAYS AS (jsonb_to_tsvector('erp_search', metadata, '["string", "numeric"]')) STORED,
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, account_id) REFERENCES financial_accounts (tenant_id, id)
);
-- A FITID names one transaction of an account, deleted ones included: a deleted line stays deleted when a statement is imported again.
CREATE UNIQUE INDEX financial_transactions_fitid_key ON financial_transactions (tenant_id, account_id, fitid) WHERE fitid IS NOT NULL;
CREATE INDEX financial_transactions_posted_idx ON financial_transactions (tenant_id, posted_at, id);
CREATE INDEX financial_transactions_account_idx ON financial_transactions (tenant_id, account_id, posted_at);
CREATE INDEX financial_transactions_created_idx ON financial_transactions (tenant_id, created_at, id);
CREATE INDEX financial_transactions_search_idx ON financial_transactions USING gin (search_vector);
CREATE INDEX financial_transactions_payload_idx ON financial_transactions USING gin (payload_vector);

CREATE TABLE purchase_invoices (
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  supplier_id uuid NOT NULL,
  reference_code text,
  series text,
  access_key text CHECK (access_key ~ '^[0-9]{44}$'),
  issue_date date NOT NULL,
  entry_date date,
  items_total numeric(20, 6) NOT NULL DEFAULT 0,
  discount_amount numeric(20, 6) NOT NULL DEFAULT 0,
  freight_amount numeric(20, 6) NOT NULL DEFAULT 0,
  other_amount numeric(20, 6) NOT NULL DEFAULT 0,
  total numeric(20, 6) NOT NULL DEFAULT 0,
  financial_category_id uuid,
  notes text,
  metadata jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  deleted_at timestamptz(3),
  search_vector tsvector GENERATED ALWAYS AS (
    to_tsvector('erp_search', coalesce(reference_code, '') || ' ' || coalesce(series, '') || ' ' || coalesce(access_key, '') || ' ' || coalesce(notes, ''))
  ) STORED,
  payload_vector tsvector GENERATED ALWAYS AS (jsonb_to_tsvector('erp_search', metadata, '["string", "numeric"]')) STORED,
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, supplier_id) REFERENCES suppliers (tenant_id, id),
  FOREIGN KEY (tenant_id, financial_category_id) REFERENCES financial_categories (tenant_id, id)
);
CREATE UNIQUE INDEX purchase_invoices_access_key_key ON purchase_invoices (tenant_id, access_key)
  WHERE access_key IS NOT NULL AND deleted_at IS NULL;
CREATE INDEX purchase_invoices_issue_idx ON purchase_invoices (tenant_id, issue_date, id);
CREATE INDEX purchase_invoices_supplier_idx ON purchase_invoices (tenant_id, supplier_id);
CREATE INDEX purchase_invoices_created_idx ON purchase_invoices (tenant_id, created_at, id);
CREATE INDEX purchase_invoices_search_idx ON purchase_invoices USING gin (search_vector);
CREATE INDEX purchase_invoices_payload_idx ON purchase_invoices USING gin (payload_vector);

CREATE TABLE purchase_invoice_items (
  tenant_id uuid NOT NULL,
  purchase_invoice_id uuid NOT NULL,
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  product_id uuid,
  description text NOT NULL,
  quantity numeric(20, 6) NOT NULL,
  unit_price numeric(20, 6) NOT NULL,
  discount_amount numeric(20, 6) NOT NULL DEFAULT 0,
  subtotal numeric(20, 6) NOT NULL,
  total numeric(20, 6) NOT NULL,
  position integer NOT NULL,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, purchase_invoice_id, id),
  FOREIGN KEY (tenant_id, purchase_invoice_id) REFERENCES purchase_invoices (tenant_id, id),
  FOREIGN KEY (tenant_id, product_id) REFERENCES products (tenant_id, id)
);

${settlementTables("payables", "payable", "supplier_id uuid,\n  purchase_invoice_id uuid,", `
  FOREIGN KEY (tenant_id, supplier_id) REFERENCES suppliers (tenant_id, id),
  FOREIGN KEY (tenant_id, purchase_invoice_id) REFERENCES purchase_invoices (tenant_id, id),`)}
CREATE INDEX payables_supplier_idx ON payables (tenant_id, supplier_id);
CREATE INDEX payables_purchase_invoice_idx ON payables (tenant_id, purchase_invoice_id);

${settlementTables("receivables", "receivable", "customer_id uuid,\n  sales_order_id uuid,\n  invoice_id uuid,", `
  FOREIGN KEY (tenant_id, customer_id) REFERENCES customers (tenant_id, id),`)}
CREATE INDEX receivables_customer_idx ON receivables (tenant_id, customer_id);
CREATE INDEX receivables_sales_order_idx ON receivables (tenant_id, sales_order_id);

CREATE TABLE integration_entity_mappings (
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  tenant_integration_id uuid NOT NULL,
  entity_type text NOT NULL,
  internal_entity_id uuid NOT NULL,
  external_entity_id text NOT NULL,
  mapping_origin text NOT NULL DEFAULT 'manual',
  sync_status text NOT NULL DEFAULT 'synced',
  metadata jsonb NOT NULL DEFAULT '{}',
  last_synced_at timestamptz(3),
  created_by_user_id uuid,
  updated_by_user_id uuid,
  deleted_by_user_id uuid,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  deleted_at timestamptz(3),
  PRIMARY KEY (tenant_id, id)
);
-- One outside record per inside record and integration, and the other way round (live mappings).
CREATE UNIQUE INDEX integration_entity_mappings_internal_key
  ON integration_entity_mappings (tenant_id, tenant_integration_id, entity_type, internal_entity_id) WHERE deleted_at IS NULL;
CREATE UNIQUE INDEX integration_entity_mappings_external_key
  ON integration_entity_mappings (tenant_id, tenant_integration_id, entity_type, external_entity_id) WHERE deleted_at IS NULL;
CREATE INDEX integration_entity_mappings_created_idx ON integration_entity_mappings (tenant_id, created_at, id);
`))

/** A payable or receivable table and its allocations: the same columns, their own links. */
function settlementTables(table: string, singular: string, links: string, foreignKeys: string): string {
  return `
CREATE TABLE ${table} (
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  record_number integer NOT NULL,
  ${links}
  financial_account_id uuid,
  payment_method_id uuid REFERENCES payment_methods (id),
  financial_category_id uuid,
  reference_code text,
  amount numeric(20, 6) NOT NULL CHECK (amount > 0),
  discount_amount numeric(20, 6) NOT NULL DEFAULT 0,
  surcharge_amount numeric(20, 6) NOT NULL DEFAULT 0,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'partial', 'paid', 'cancelled')),
  issue_date date,
  due_date date NOT NULL,
  paid_at date,
  installment_group_id uuid,
  installment_number integer,
  installment_count integer,
  description text,
  notes text,
  metadata jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  deleted_at timestamptz(3),
  search_vector tsvector GENERATED ALWAYS AS (
    to_tsvector('erp_search', coalesce(reference_code, '') || ' ' || coalesce(description, '') || ' ' || coalesce(notes, ''))
  ) STORED,
  payload_vector tsvector GENERATED ALWAYS AS (jsonb_to_tsvector('erp_search', metadata, '["string", "numeric"]')) STORED,
  PRIMARY KEY (tenant_id, id),
  ${foreignKeys.trim()}
  FOREIGN KEY (tenant_id, financial_account_id) REFERENCES financial_accounts (tenant_id, id),
  FOREIGN KEY (tenant_id, financial_category_id) REFERENCES financial_categories (tenant_id, id)
);
CREATE UNIQUE INDEX ${table}_record_number_key ON ${table} (tenant_id, record_number);
CREATE INDEX ${table}_due_idx ON ${table} (tenant_id, due_date, id);
CREATE INDEX ${table}_status_idx ON ${table} (tenant_id, status, due_date);
CREATE INDEX ${table}_group_idx ON ${table} (tenant_id, installment_group_id);
CREATE INDEX ${table}_created_idx ON ${table} (tenant_id, created_at, id);
CREATE INDEX ${table}_search_idx ON ${table} USING gin (search_vector);
CREATE INDEX ${table}_payload_idx ON ${table} USING gin (payload_vector);

CREATE TABLE ${singular}_allocations (
  tenant_id uuid NOT NULL,
  ${singular}_id uuid NOT NULL,
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  financial_transaction_id uuid NOT NULL,
  allocated_amount numeric(20, 6) NOT NULL CHECK (allocated_amount > 0),
  notes text,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, ${singular}_id, id),
  FOREIGN KEY (tenant_id, ${singular}_id) REFERENCES ${table} (tenant_id, id),
  FOREIGN KEY (tenant_id, financial_transaction_id) REFERENCES financial_transactions (tenant_id, id)
);
CREATE INDEX ${singular}_allocations_transaction_idx ON ${singular}_allocations (tenant_id, financial_transaction_id);
`
}
