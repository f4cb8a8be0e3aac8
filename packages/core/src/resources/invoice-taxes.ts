import BigNumber from "bignumber.js"
import { Effect, Schema } from "effect"
import { randomUUID } from "node:crypto"
import { id, stored, timestamp } from "../engine/field.js"
import type { FilterNode } from "../engine/filter.js"
import { type ChildDraft, type Draft, defineResource, type Row, type WriteContext } from "../engine/resource.js"
import { decimal, formatDecimal } from "../money/decimal.js"
import { TaxEngine, type ProductFiscalData, type TaxItem, type TaxRequest } from "../tax/engine.js"
import { asFiscalRule, fiscalRulesBr } from "./fiscal-rules-br.js"
import { products } from "./products.js"
import { amountOf, documentAmounts, storeOf } from "./sales-documents.js"

/** What an item's taxes were computed from, kept once and pointed at by `tax_resolution_id`. Written only by invoices. */
export const taxResolutions = defineResource({
  name: "tax-resolutions",
  singular: "tax-resolution",
  title: "Tax resolution",
  description: "The inputs an invoice item's taxes were computed from (internal).",
  notFoundCode: "TAX_RESOLUTION_NOT_FOUND",
  panelOnly: true,
  softDelete: false,
  table: "tax_resolutions",
  fields: {
    id: id(),
    provider: stored("text", Schema.String),
    inputs: stored("jsonb", Schema.Unknown),
    created_at: timestamp()
  },
  defaultSort: { field: "created_at", order: "asc" }
})

/** The product's fiscal keys a snapshot keeps (every key, null when unset), so a later change shows as a changed field. */
export const PRODUCT_FISCAL_KEYS = {
  br_data: ["ncm_code", "cest_code", "origin", "extipi", "ibs_cbs_cst", "ibs_cbs_classification", "ibs_cbs_operation_indicator_code", "ibs_cbs_is_personal_use"],
  us_data: ["hts_code", "tax_code", "sales_tax_category"]
} as const

/** Item fiscal fields that follow the product unless the request sends them. */
const FROM_PRODUCT = {
  br_data: ["ncm_code", "cest_code", "ibs_cbs_cst", "ibs_cbs_classification", "ibs_cbs_operation_indicator_code", "ibs_cbs_is_personal_use"],
  us_data: ["hts_code", "tax_code", "sales_tax_category"]
} as const

/** Header fields the taxes depend on: sending one recomputes them. */
export const TAX_INPUT_FIELDS = [
  "operation_type",
  "product_type",
  "customer_tax_type",
  "origin_state_code",
  "origin_country_code",
  "destination_state_code",
  "destination_country_code",
  "discount_amount",
  "discount_rate",
  "invoice_date"
] as const

const objectOf = (value: unknown): Row => (typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Row) : {})

const fiscalOf = (product: Row): ProductFiscalData => {
  const pick = (block: "br_data" | "us_data") =>
    Object.fromEntries(PRODUCT_FISCAL_KEYS[block].map((key) => [key, objectOf(product[block])[key] ?? null]))
  return { id: String(product.id), type: (product.type as string | null) ?? null, br_data: pick("br_data"), us_data: pick("us_data") }
}

const anyOf = (field: string, ids: ReadonlyArray<string>): FilterNode => ({
  kind: "group",
  logic: "or",
  conditions: ids.map((value) => ({ kind: "condition", field, op: "eq", value }))
})

/** The item's fiscal block with the product's values where the request did not send its own. */
const withProductFields = (item: ChildDraft, sent: Row | undefined, product: ProductFiscalData | undefined, block: "br_data" | "us_data"): Row => {
  const own = { ...objectOf(item.values[block]) }
  if (!product) return own
  const sentKeys = objectOf(sent?.[block])
  for (const key of FROM_PRODUCT[block]) {
    if (sentKeys[key] !== undefined) continue
    const value = product[block][key]
    if (value === null || value === undefined) delete own[key]
    else own[key] = value
  }
  return own
}

/** Each item's share of the header discount, by its total; the last takes what rounding leaves. */
const discountShares = (draft: Draft): ReadonlyArray<BigNumber> => {
  const amounts = documentAmounts(draft)
  const header = decimal(amounts.header_discount)
  const totals = amounts.items.map((item) => decimal(item.total))
  const sum = totals.reduce((acc, value) => acc.plus(value), decimal(0))
  if (header.isZero() || sum.isZero()) return totals.map(() => decimal(0))
  let given = decimal(0)
  return totals.map((total, index) => {
    if (index === totals.length - 1) return header.minus(given)
    const share = decimal(formatDecimal(header.times(total).dividedBy(sum)))
    given = given.plus(share)
    return share
  })
}

/**
 * Computes the items' taxes with the tax engine, keeps a snapshot of each item's
 * inputs, and puts on every item its `taxes` (hidden, answered through the invoice's
 * `taxes[]`), its `tax_resolution_id` and its product-derived fiscal fields; the
 * invoice records the engine's name.
 */
export const resolveInvoiceTaxes = (draft: Draft, context: WriteContext) =>
  Effect.gen(function* () {
    const engine = yield* TaxEngine
    const store = storeOf(context)
    const items = draft.children.items ?? []
    const sentItems = (draft.input.items as ReadonlyArray<Row> | undefined) ?? []
    const productIds = [...new Set(items.map((item) => item.values.product_id).filter((value): value is string => typeof value === "string"))]
    const found = productIds.length === 0
      ? []
      : yield* store.findMany(products, anyOf("id", productIds), { limit: productIds.length, withDeleted: true })
    const byId = new Map(found.map((product) => [String(product.id), fiscalOf(product)]))
    const rules = yield* store.findMany(fiscalRulesBr, { kind: "condition", field: "is_active", op: "eq", value: true }, { limit: 1000 })
    const shares = discountShares(draft)
    const amounts = documentAmounts(draft)
    const v = draft.values
    const text = (name: string) => (typeof v[name] === "string" ? (v[name] as string) : null)
    const prepared = items.map((item, index) => {
      const product = typeof item.values.product_id === "string" ? byId.get(item.values.product_id) : undefined
      return {
        ...item,
        values: {
          ...item.values,
          br_data: withProductFields(item, sentItems[index], product, "br_data") as Row,
          us_data: withProductFields(item, sentItems[index], product, "us_data") as Row
        } as Row & { readonly br_data: Row; readonly us_data: Row },
        product
      }
    })
    const request: TaxRequest = {
      tenantCountry: context.tenantCountry,
      invoice: {
        invoice_date: text("invoice_date"),
        operation_type: text("operation_type"),
        product_type: text("product_type"),
        customer_tax_type: text("customer_tax_type"),
        origin_state_code: text("origin_state_code"),
        origin_country_code: text("origin_country_code"),
        destination_state_code: text("destination_state_code"),
        destination_country_code: text("destination_country_code")
      },
      items: prepared.map((item, index): TaxItem => ({
        index,
        amount: formatDecimal(decimal(amounts.items[index].total).minus(shares[index])),
        quantity: formatDecimal(amountOf(item.values.quantity)),
        unit_price: formatDecimal(amountOf(item.values.unit_price)),
        product: item.product ?? null,
        br_data: item.values.br_data,
        us_data: item.values.us_data
      })),
      fiscalRules: rules.map(asFiscalRule)
    }
    const result = yield* engine.resolve(request)
    const children = yield* Effect.forEach(prepared, (item, index) =>
      Effect.gen(function* () {
        const resolved = result.items[index] ?? { taxes: [], used: {} }
        const snapshot = yield* store.insert(taxResolutions, {
          provider: engine.name,
          inputs: { product: item.product ?? null, item: request.items[index], invoice: request.invoice, used: resolved.used }
        })
        const { product: _product, ...child } = item
        return {
          ...child,
          values: { ...child.values, tax_resolution_id: snapshot, taxes: resolved.taxes.map((tax) => ({ id: randomUUID(), ...tax })) }
        } satisfies ChildDraft
      }))
    return { ...draft, values: { ...draft.values, tax_engine_provider: engine.name }, children: { ...draft.children, items: children } }
  })
