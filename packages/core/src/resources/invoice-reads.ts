/**
 * What an invoice reads from SQL on every read (never stored, so always current):
 * its taxes, the stale-tax warnings and the NFS-e/NF-e transmission readiness.
 */

/** The items' computed taxes as one list, each with its invoice, item and position. */
export const TAXES_SQL = `coalesce((SELECT jsonb_agg(x.tax ORDER BY x.n) FROM (
  SELECT t.tax || jsonb_build_object('invoice_id', i.invoice_id, 'invoice_item_id', i.id,
      'position', row_number() OVER (ORDER BY i.position, t.ord) - 1) AS tax,
    row_number() OVER (ORDER BY i.position, t.ord) AS n
  FROM invoice_items i, jsonb_array_elements(i.taxes) WITH ORDINALITY AS t(tax, ord)
  WHERE i.tenant_id = r.tenant_id AND i.invoice_id = r.id) x), '[]'::jsonb)`

const current = "coalesce(CASE b.block WHEN 'br_data' THEN p.br_data ELSE p.us_data END -> f.key, 'null'::jsonb)"

export const STALE_MESSAGE = "The product's fiscal data changed after this item's taxes were computed: POST /invoices/{id}/recalculate-taxes refreshes them"

/**
 * `stale_tax_resolution` for each item of a draft whose product's fiscal fields
 * (`br_data`, `us_data`) differ from the snapshot its taxes were computed from.
 */
export const WARNINGS_SQL = `(CASE WHEN r.status <> 'draft' THEN '[]'::jsonb ELSE coalesce((SELECT jsonb_agg(jsonb_build_object(
    'item_id', i.id, 'item_index', i.position, 'code', 'stale_tax_resolution',
    'message', '${STALE_MESSAGE.replace(/'/g, "''")}',
    'tax_resolution_id', i.tax_resolution_id, 'changed_fields', c.fields) ORDER BY i.position)
  FROM invoice_items i
  JOIN tax_resolutions s ON s.tenant_id = i.tenant_id AND s.id = i.tax_resolution_id
  JOIN products p ON p.tenant_id = i.tenant_id AND p.id = (s.inputs #>> '{product,id}')::uuid
  CROSS JOIN LATERAL (
    SELECT jsonb_agg(jsonb_build_object('entity', 'product', 'field', b.block || '.' || f.key,
        'snapshot_value', f.value, 'current_value', ${current}) ORDER BY b.block, f.key) AS fields
    FROM (VALUES ('br_data'), ('us_data')) AS b(block), jsonb_each(coalesce(s.inputs -> 'product' -> b.block, '{}'::jsonb)) AS f
    WHERE f.value IS DISTINCT FROM ${current}
  ) c
  WHERE i.tenant_id = r.tenant_id AND i.invoice_id = r.id AND c.fields IS NOT NULL), '[]'::jsonb) END)`

/** Stable blocker codes, in the order they are answered. */
export const READINESS_BLOCKERS = [
  "invoice_cancelled",
  "no_items",
  "wrong_item_count",
  "missing_receiver_name",
  "missing_receiver_federal_tax_number",
  "missing_receiver_city_ibge_code",
  "missing_receiver_state_code",
  "missing_origin_state_code",
  "missing_destination_state_code",
  "missing_item_ncm_code",
  "missing_item_cfop",
  "missing_item_city_service_code",
  "missing_item_federal_service_code",
  "missing_item_nbs_code"
] as const

const blank = (expression: string) => `coalesce(btrim(${expression}), '') = ''`
const items = "FROM invoice_items i WHERE i.tenant_id = r.tenant_id AND i.invoice_id = r.id"
const anyItem = (key: string) => `EXISTS (SELECT 1 ${items} AND ${blank(`i.br_data ->> '${key}'`)})`
const service = "r.product_type = 'service'"

const conditions: Record<(typeof READINESS_BLOCKERS)[number], string> = {
  invoice_cancelled: "r.status = 'cancelled'",
  no_items: `NOT EXISTS (SELECT 1 ${items})`,
  // An NFS-e carries exactly one service item.
  wrong_item_count: `${service} AND (SELECT count(*) ${items}) <> 1`,
  missing_receiver_name: blank("r.br_data ->> 'receiver_name'"),
  missing_receiver_federal_tax_number: blank("r.br_data ->> 'receiver_federal_tax_number'"),
  missing_receiver_city_ibge_code: blank("r.br_data ->> 'receiver_city_ibge_code'"),
  missing_receiver_state_code: blank("r.br_data ->> 'receiver_state_code'"),
  missing_origin_state_code: `NOT ${service} AND ${blank("r.origin_state_code")}`,
  missing_destination_state_code: `NOT ${service} AND ${blank("r.destination_state_code")}`,
  missing_item_ncm_code: `NOT ${service} AND ${anyItem("ncm_code")}`,
  missing_item_cfop: `NOT ${service} AND ${anyItem("cfop")}`,
  missing_item_city_service_code: `${service} AND ${anyItem("city_service_code")}`,
  missing_item_federal_service_code: `${service} AND ${anyItem("federal_service_code")}`,
  missing_item_nbs_code: `${service} AND ${anyItem("nbs_code")}`
}

/** `{ready, blockers[]}`: what a transmission (NFS-e for services, NF-e for goods) still lacks. */
export const READINESS_SQL = `(SELECT jsonb_build_object('ready', cardinality(x.blockers) = 0, 'blockers', to_jsonb(x.blockers)) FROM (
  SELECT array_remove(ARRAY[${READINESS_BLOCKERS.map((code) => `CASE WHEN ${conditions[code]} THEN '${code}' END`).join(",\n    ")}], NULL)::text[] AS blockers) x)`
