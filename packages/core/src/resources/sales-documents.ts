import BigNumber from "bignumber.js"
import { Effect, Option, Schema } from "effect"
import { type AnySchema, column, embedOne, type Field, type Fields, id, type ResourceRef, stored, timestamp } from "../engine/field.js"
import type { AnyResource, ChildDraft, Draft, Row, WriteContext } from "../engine/resource.js"
import { Conflict } from "../errors.js"
import { decimal, formatDecimal } from "../money/decimal.js"
import { money, Problems, reference, text } from "./common.js"
import { customers } from "./customers.js"
import { products } from "./products.js"

/**
 * What quotes, sales orders and invoices share: items with quantities, prices and
 * discounts, the customer embed, and one rounding rule for every amount.
 *
 * The rounding rule: every amount is computed exactly with bignumber.js and rounded
 * once, when it is stored, to six fractional digits, half to even (`formatDecimal`).
 * A percentage (`discount_rate`, a tax `rate`) is a percent: "10" is 10 %.
 */

/** Rounds to the six stored fractional digits (the one rule). */
export const round = (value: BigNumber.Value): string => formatDecimal(value)

export const amountOf = (value: unknown): BigNumber => decimal(value === null || value === undefined ? "0" : String(value))

/** `value` × `percent` / 100, exact until the rounding. */
export const percentOf = (value: BigNumber.Value, percent: BigNumber.Value): BigNumber =>
  new BigNumber(value).times(percent).dividedBy(100)

/** The customer as documents embed it (spec changelog 2026-08): four fields, no more. */
export const CustomerSummary = Schema.Struct({
  id: Schema.String,
  legal_name: Schema.String,
  trade_name: Schema.NullOr(Schema.String),
  tax_id: Schema.NullOr(Schema.String)
}).annotate({ identifier: "DocumentCustomer" })

export const customerFields = (required = true) => ({
  customer_id: reference((): ResourceRef => customers, { nullable: false, required, ...(required ? {} : { description: "Required unless the document is made from another (quote_id, sales_order_id)" }) }),
  customer: embedOne({ key: "customer_id", resource: () => customers, output: CustomerSummary, pick: ["id", "legal_name", "trade_name", "tax_id"] })
})

/** The product as sales order items embed it. */
export const ProductSummary = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  reference_code: Schema.NullOr(Schema.String),
  br_data: Schema.Unknown,
  us_data: Schema.Unknown
}).annotate({ identifier: "DocumentItemProduct" })

export const productSummary = () =>
  embedOne({ key: "product_id", resource: () => products, output: ProductSummary, pick: ["id", "name", "reference_code", "br_data", "us_data"] })

/** The full product record (quote items). */
export const fullProduct = () =>
  embedOne({ key: "product_id", resource: () => products, output: Schema.suspend((): AnySchema => products.record) })

/**
 * Stored for the sales report and never answered: whether an earlier item of the document names the
 * same product, so a product's documents are its items less these, counted in one parallel pass.
 */
const repeatsProduct = () => column<boolean>({ type: "boolean", output: Schema.Boolean, input: false, hidden: true })

/** Stored for the sales report and never answered: Σ the items' quantity, so groupings by document read no items. */
export const itemsQuantity = () => column<string>({ type: "numeric", output: Schema.String, input: false, hidden: true })

/** An item's fields, in answer order: its own key, the product, quantities, prices and the computed amounts. */
export const itemFields = <Extra extends Fields>(parentKey: string, product: Field<unknown, never> | undefined, extra: Extra) => ({
  id: id(),
  [parentKey]: stored("uuid", Schema.String),
  product_id: reference((): ResourceRef => products),
  item_description: text(1000, { description: "Required unless product_id is given: the product's name then" }),
  quantity: money({ required: true, description: "More than zero" }),
  unit_price: money({ required: true }),
  discount_amount: money({ description: "Taken off this item's subtotal" }),
  subtotal: money({ input: false, description: "quantity × unit_price" }),
  total: money({ input: false, description: "subtotal − discount_amount" }),
  position: stored("integer", Schema.Int),
  repeats_product: repeatsProduct(),
  ...extra,
  ...(product ? { product } : {}),
  created_at: timestamp(),
  updated_at: timestamp()
}) as Fields

/** Header discount fields: an amount or a percent rate, never both. */
export const discountFields = () => ({
  discount_amount: money({ nullable: true, description: "A discount on the whole document (send this or discount_rate)" }),
  discount_rate: money({ nullable: true, description: "A discount on the whole document, in percent of the items' total: \"10\" is 10 % (send this or discount_amount)" })
})

export type ItemAmounts = Readonly<{ subtotal: string; total: string; repeats_product: boolean }> & Row

export interface DocumentAmounts {
  readonly items: ReadonlyArray<ItemAmounts>
  readonly subtotal: string
  readonly items_discount: string
  /** The header discount as applied (the amount, or the rate of the items' total). */
  readonly header_discount: string
  readonly total_discount: string
  /** subtotal − total_discount (taxes added by invoices). */
  readonly total: string
  /** Σ item quantities. */
  readonly items_quantity: string
}

/**
 * Item subtotal = quantity × unit_price; item total = subtotal − its discount;
 * subtotal = Σ item subtotals; items_discount = Σ item discounts; the header discount
 * is discount_amount, or discount_rate % of the items' totals; total_discount =
 * items_discount + header discount; total = subtotal − total_discount.
 */
export const documentAmounts = (draft: Pick<Draft, "values" | "children">): DocumentAmounts => {
  const products = new Set<unknown>()
  const items = (draft.children.items ?? []).map((item) => {
    const subtotal = decimal(round(amountOf(item.values.quantity).times(amountOf(item.values.unit_price))))
    const product = item.values.product_id ?? null
    const repeats = products.has(product)
    products.add(product)
    return { subtotal, discount: amountOf(item.values.discount_amount), total: subtotal.minus(amountOf(item.values.discount_amount)), repeats }
  })
  const quantity = (draft.children.items ?? []).reduce((sum, item) => sum.plus(amountOf(item.values.quantity)), decimal(0))
  const subtotal = items.reduce((sum, item) => sum.plus(item.subtotal), decimal(0))
  const itemsDiscount = items.reduce((sum, item) => sum.plus(item.discount), decimal(0))
  const itemsTotal = subtotal.minus(itemsDiscount)
  const rate = draft.values.discount_rate
  const header = decimal(round(rate !== null && rate !== undefined ? percentOf(itemsTotal, String(rate)) : amountOf(draft.values.discount_amount)))
  const totalDiscount = itemsDiscount.plus(header)
  return {
    items: items.map((item) => ({ subtotal: round(item.subtotal), total: round(item.total), repeats_product: item.repeats })),
    subtotal: round(subtotal),
    items_discount: round(itemsDiscount),
    header_discount: round(header),
    total_discount: round(totalDiscount),
    total: round(subtotal.minus(totalDiscount)),
    items_quantity: round(quantity)
  }
}

/**
 * Discounts that make sense: `discount_amount` and `discount_rate` not both in one
 * request (the one sent replaces the other on PATCH), no item discount above its
 * subtotal, quantities above zero, a rate of at most 100 and a header discount no
 * larger than the items' total.
 */
export const discountRules = (draft: Draft, problems: Problems): Draft => {
  const input = draft.input
  const values: Record<string, unknown> = { ...draft.values }
  const sentAmount = input.discount_amount !== undefined && input.discount_amount !== null
  const sentRate = input.discount_rate !== undefined && input.discount_rate !== null
  if (sentAmount && sentRate) {
    problems.add("discount_amount", "send discount_amount or discount_rate, not both")
    problems.add("discount_rate", "send discount_amount or discount_rate, not both")
  }
  if (sentAmount && !sentRate) values.discount_rate = null
  if (sentRate && !sentAmount) values.discount_amount = null
  ;(draft.children.items ?? []).forEach((item, index) => {
    if (!amountOf(item.values.quantity).gt(0)) problems.add(`items.${index}.quantity`, "must be more than zero")
    if (amountOf(item.values.discount_amount).gt(amountOf(item.values.quantity).times(amountOf(item.values.unit_price)))) {
      problems.add(`items.${index}.discount_amount`, "is more than the item's quantity times unit_price")
    }
  })
  if (sentRate && amountOf(input.discount_rate).gt(100)) problems.add("discount_rate", "must be at most 100 (percent)")
  const next = { ...draft, values }
  if (!problems.any) {
    const amounts = documentAmounts(next)
    if (decimal(amounts.total).lt(0)) problems.add(sentRate ? "discount_rate" : "discount_amount", `is more than the items' total (${round(decimal(amounts.subtotal).minus(amounts.items_discount))})`)
  }
  return next
}

/** Header and item values `compute` sets for a document's amounts. */
export const amountValues = (amounts: DocumentAmounts, withItemsDiscount: boolean): Row => ({
  subtotal: amounts.subtotal,
  ...(withItemsDiscount ? { items_discount: amounts.items_discount } : {}),
  total_discount: amounts.total_discount,
  total: amounts.total,
  items_quantity: amounts.items_quantity
})

/** New children for a collection from plain input rows (items copied from another document). */
export const newChildren = (rows: ReadonlyArray<Row>): ReadonlyArray<ChildDraft> =>
  rows.map((values) => ({ id: undefined, current: undefined, values }))

/** The store a rule reads through; the engine always gives one inside a write. */
export const storeOf = (context: WriteContext) => {
  if (!context.store) throw new Error("A sales document rule runs inside a write's unit of work")
  return context.store
}

/** Reads a record of the tenant, locked for the rest of the write; 422 naming `field` when it does not exist. */
export const lockedReference = (context: WriteContext, resource: AnyResource, id: string, field: string) =>
  Effect.gen(function* () {
    const store = storeOf(context)
    const found = yield* store.findById(resource, id, { forUpdate: true })
    if (Option.isNone(found)) {
      const problems = new Problems()
      problems.add(field, `does not match any ${resource.title.toLowerCase()}`)
      return yield* problems.fail("A referenced record does not exist", "REFERENCE_NOT_FOUND")
    }
    // In READ COMMITTED the locking statement's snapshot predates the lock; read again to see what committed meanwhile.
    return Option.getOrThrow(yield* store.findById(resource, id))
  })

export const conflict = (message: string, code: string) => Effect.fail(new Conflict({ message, code }))

/** An item as copied onto another document: the fields both have. */
export const copiedItem = (item: Row): Row => ({
  ...(item.product_id ? { product_id: item.product_id } : {}),
  item_description: item.item_description,
  quantity: item.quantity,
  unit_price: item.unit_price,
  discount_amount: item.discount_amount
})
