import * as SqlClient from "effect/sql/SqlClient"
import { Effect } from "effect"

/**
 * What the sales report reads instead of walking items: each document's Σ item quantity, and on each
 * item whether an earlier item of its document names the same product (a product's documents are
 * then its items less these). Documents written before this have both filled in here.
 */
const documents = [
  ["quotes", "quote_items", "quote_id"],
  ["sales_orders", "sales_order_items", "sales_order_id"],
  ["invoices", "invoice_items", "invoice_id"]
] as const

// The backfill reads every item once; on a large store it rightly outlasts a request's statement limit.
export default Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe("SET LOCAL statement_timeout = 0;" + documents.map(([table, items, key]) => `
ALTER TABLE ${table} ADD COLUMN items_quantity numeric(20, 6) NOT NULL DEFAULT 0;
ALTER TABLE ${items} ADD COLUMN repeats_product boolean NOT NULL DEFAULT false;
UPDATE ${table} d SET items_quantity = s.quantity
  FROM (SELECT tenant_id, ${key}, sum(quantity) AS quantity FROM ${items} GROUP BY 1, 2) s
  WHERE d.tenant_id = s.tenant_id AND d.id = s.${key};
UPDATE ${items} i SET repeats_product = true
  FROM (SELECT tenant_id, id, row_number() OVER (PARTITION BY tenant_id, ${key}, product_id ORDER BY position, id) AS n FROM ${items}) o
  WHERE i.tenant_id = o.tenant_id AND i.id = o.id AND o.n > 1;
`).join("")))
