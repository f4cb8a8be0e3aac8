import { Effect, Schema } from "effect"
import { children } from "../engine/children.js"
import { column, id, timestamps } from "../engine/field.js"
import { type AnyResource, type Computed, type Draft, defineResource, type RecordType, type WriteContext } from "../engine/resource.js"
import { customers } from "./customers.js"
import { date, freeText, metadata, money, Problems, text } from "./common.js"
import { amountValues, customerFields, discountFields, discountRules, documentAmounts, fullProduct, itemFields, itemsQuantity } from "./sales-documents.js"
import { describeItems } from "./item-descriptions.js"

/** The tenant's today, for a SQL expression over a row `r` of a tenant table. */
export const TENANT_TODAY_SQL = "(SELECT (now() AT TIME ZONE t.time_zone)::date FROM tenants t WHERE t.id = r.tenant_id)"

/** Stored pending, read expired once `valid_until` has passed in the tenant's time zone. */
const STATUS_SQL = `(CASE WHEN r.status = 'pending' AND r.valid_until < ${TENANT_TODAY_SQL} THEN 'expired' ELSE r.status END)`

export const QUOTE_STATUSES = ["pending", "approved", "rejected", "expired", "converted"] as const

const compute = (draft: Draft<typeof quoteFields>): Computed<typeof quoteFields> => {
  const amounts = documentAmounts(draft)
  return { values: amountValues(amounts, false), children: { items: amounts.items } }
}

const rules = (draft: Draft<typeof quoteFields>, context: WriteContext) =>
  Effect.gen(function* () {
    const problems = new Problems()
    const next: Draft<typeof quoteFields> = discountRules(yield* describeItems(draft, context), problems)
    const { quote_date, valid_until } = next.values
    if (quote_date && valid_until && String(valid_until) < String(quote_date)) problems.add("valid_until", "is before quote_date")
    if (problems.any) return yield* problems.fail("The quote cannot be saved")
    return next
  })

/** The fields of a quote, named so that its rules take a draft keyed by them. */
const quoteFields = {
  id: id(),
  record_number: column({ type: "integer", output: Schema.Int, input: false, filter: { sortable: true }, description: "Per-tenant sequence, set on create" }),
  reference_code: text(100, { nullable: true, filter: { sortable: true } }),
  product_type: text(40, { nullable: true, description: "goods, service or another label of the tenant's" }),
  status: column({
    type: "text",
    output: Schema.Literals(QUOTE_STATUSES),
    read: Schema.Literals(QUOTE_STATUSES),
    inputSchema: Schema.Literals(["pending", "approved", "rejected"]),
    select: STATUS_SQL,
    filter: { sortable: true, description: "pending, approved, rejected, expired (pending past valid_until in the tenant's time zone) or converted" },
    description: "pending (initial), approved, rejected; expired is read once valid_until has passed; converted when a sales order is made from it",
    normalize: (value) => (value === "expired" ? "pending" : value)
  }),
  ...customerFields(),
  quote_date: date({ nullable: true, filter: { sortable: true } }),
  valid_until: date({ nullable: true, filter: { sortable: true } }),
  salesperson_name: text(255, { nullable: true }),
  estimated_delivery_date: date({ nullable: true, filter: { sortable: true } }),
  description: freeText(5000, {}),
  items: children({
    table: "quote_items",
    parentKey: "quote_id",
    fields: itemFields("quote_id", fullProduct(), { ...timestamps() }),
    identifier: "QuoteItem",
    maxItems: 500,
    softDelete: true,
    description: "On PATCH, the complete new list: items with an id are kept and changed, new ones added, missing ones removed"
  }),
  subtotal: money({ input: false }),
  ...discountFields(),
  total_discount: money({ input: false }),
  total: money({ input: false, filter: { sortable: true } }),
  items_quantity: itemsQuantity(),
  metadata: metadata(),
  ...timestamps()
}

export const quotes = defineResource({
  name: "quotes",
  singular: "quote",
  title: "Quote",
  description: "Quotes (proposals) to customers: items, discounts and totals; a quote becomes a sales order once (POST /sales-orders with quote_id).",
  notFoundCode: "QUOTE_NOT_FOUND",
  events: true,
  table: "quotes",
  fields: quoteFields,
  defaultSort: { field: "record_number", order: "asc" },
  search: { payload: true },
  writes: {
    example: {
      customer_id: "00000000-0000-4000-8000-000000000000",
      product_type: "goods",
      quote_date: "2024-01-10",
      valid_until: "2099-12-31",
      items: [{ item_description: "Café em grãos 1 kg", quantity: "10", unit_price: "52.50" }],
      discount_rate: "5"
    },
    references: { customer_id: (): AnyResource => customers }
  },
  numbering: { field: "record_number" },
  // The embed keeps the four fields of the 2026-08 change; the full customer is asked for.
  expandable: ["customer"],
  status: {
    field: "status",
    initial: "pending",
    states: {
      pending: { editable: "all" },
      approved: { editable: "all" },
      rejected: { editable: ["status", "metadata", "description"] },
      // An expired quote can be renewed: a later valid_until makes it pending again.
      expired: { editable: "all" },
      converted: { editable: ["metadata"] }
    },
    transitions: {
      pending: ["approved", "rejected"],
      approved: ["pending", "rejected"],
      rejected: ["pending"],
      expired: ["rejected"],
      converted: []
    }
  },
  rules,
  compute
})

export type Quote = RecordType<typeof quotes>
