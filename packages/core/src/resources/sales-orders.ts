import { Effect, Option, Schema } from "effect"
import { children } from "../engine/children.js"
import { type AnySchema, column, embedMany, expression, id, type ResourceRef, timestamps } from "../engine/field.js"
import {
  type ActionContext,
  type AnyResource,
  type Computed,
  type Draft,
  defineResource,
  type RecordType,
  type RemoveHookContext,
  type ResourceAction,
  type Row,
  type WriteContext,
  type WriteError,
  type WriteHookContext
} from "../engine/resource.js"
import { invalid, unprocessable } from "../errors.js"
import { formatDecimal } from "../money/decimal.js"
import { block, date, freeText, metadata, money, Problems, reference, text, Text, Uuid } from "./common.js"
import { customers } from "./customers.js"
import { InstallmentPlan, planProblem } from "./installments.js"
import { invoices } from "./invoices.js"
import { quotes } from "./quotes.js"
import { receivables } from "./receivables.js"
import { amountOf, amountValues, conflict, copiedItem, customerFields, discountFields, discountRules, documentAmounts, itemFields, itemsQuantity, lockedReference, newChildren, productSummary } from "./sales-documents.js"
import { describeItems } from "./item-descriptions.js"

export const SALES_ORDER_STATUSES = ["draft", "confirmed", "fulfilled", "cancelled"] as const

const ReceivableSummary = Schema.Struct({
  id: Schema.String,
  reference_code: Schema.NullOr(Schema.String),
  status: Schema.String,
  amount: Schema.String,
  due_date: Schema.String,
  paid_at: Schema.NullOr(Schema.String),
  payment_method_id: Schema.NullOr(Schema.String),
  financial_account_id: Schema.NullOr(Schema.String),
  installment_number: Schema.NullOr(Schema.Int),
  installment_count: Schema.NullOr(Schema.Int),
  description: Schema.NullOr(Schema.String)
}).annotate({ identifier: "SalesOrderReceivable" })

/** Receivables that still count: live and not cancelled. */
const ACTIVE_RECEIVABLES_SQL =
  "EXISTS (SELECT 1 FROM receivables x WHERE x.tenant_id = r.tenant_id AND x.sales_order_id = r.id AND x.deleted_at IS NULL AND x.status <> 'cancelled')"

/** Invoices that still count: live and not cancelled. */
const ACTIVE_INVOICE_SQL =
  "EXISTS (SELECT 1 FROM invoices i WHERE i.tenant_id = r.tenant_id AND i.sales_order_id = r.id AND i.deleted_at IS NULL AND i.status <> 'cancelled')"

const compute = (draft: Draft<typeof salesOrderFields>): Computed<typeof salesOrderFields> => {
  const amounts = documentAmounts(draft)
  return { values: amountValues(amounts, true), children: { items: amounts.items } }
}

/**
 * From a quote (`quote_id` on create): the quote must be pending or approved and not
 * converted yet (409); its customer, items, discount and descriptive fields are copied
 * unless the request sends its own.
 */
const fromQuote = (draft: Draft<typeof salesOrderFields>, context: WriteContext) =>
  Effect.gen(function* () {
    const quoteId = draft.input.quote_id as string | undefined
    if (draft.operation !== "create" || quoteId === undefined || quoteId === null) return draft
    const quote = yield* lockedReference(context, quotes, quoteId, "quote_id")
    if (quote.status === "converted") return yield* conflict("This quote was already converted into a sales order", "QUOTE_ALREADY_CONVERTED")
    if (quote.status !== "pending" && quote.status !== "approved") {
      return yield* Effect.fail(unprocessable(`The quote is ${String(quote.status)}`, { quote_id: [`is ${String(quote.status)}: only a pending or approved quote becomes an order`] }, "QUOTE_NOT_CONVERTIBLE"))
    }
    const values: Record<string, unknown> = { ...draft.values }
    for (const name of ["customer_id", "product_type", "salesperson_name", "description"] as const) {
      if (draft.input[name] === undefined && quote[name] !== null && quote[name] !== undefined) values[name] = quote[name]
    }
    if (draft.input.discount_amount === undefined && draft.input.discount_rate === undefined) {
      values.discount_amount = quote.discount_amount
      values.discount_rate = quote.discount_rate
    }
    const items = draft.input.items === undefined ? newChildren((quote.items as ReadonlyArray<Row>).map(copiedItem)) : draft.children.items ?? []
    return { ...draft, values, children: { ...draft.children, items } }
  })

const rules = (draft: Draft<typeof salesOrderFields>, context: WriteContext) =>
  Effect.gen(function* () {
    const copied = yield* fromQuote(draft, context)
    if (copied.values.customer_id === undefined || copied.values.customer_id === null) {
      return yield* Effect.fail(invalid("Invalid request body: customer_id is required (or send quote_id)", "INVALID_BODY", { customer_id: ["is required"] }))
    }
    const problems = new Problems()
    const next: Draft<typeof salesOrderFields> = discountRules(yield* describeItems(copied, context), problems)
    if (next.values.order_date && next.values.delivery_date && String(next.values.delivery_date) < String(next.values.order_date)) {
      problems.add("delivery_date", "is before order_date")
    }
    if (problems.any) return yield* problems.fail("The sales order cannot be saved")
    return next
  })

/** The quote it came from becomes converted, in the same unit of work (its own `quotes.update`). */
const convertQuote = ({ operation, draft, store }: WriteHookContext<typeof salesOrderFields>) =>
  Effect.gen(function* () {
    const quoteId = draft.values.quote_id
    if (operation !== "create" || typeof quoteId !== "string") return
    yield* store.updateRecord(quotes, quoteId, {}, { status: "converted" })
  })

const ReceivablesPlan = Schema.Struct({
  ...InstallmentPlan.fields,
  payment_method_id: Schema.optionalKey(Schema.NullOr(Uuid)),
  financial_account_id: Schema.optionalKey(Schema.NullOr(Uuid)),
  description: Schema.optionalKey(Schema.NullOr(Text(500)))
}).annotate({ identifier: "SalesOrderReceivablesPlan" })

const ReceivablesInput = Schema.Struct({ installments: ReceivablesPlan }).annotate({ identifier: "SalesOrderReceivablesInput" })

const ReceivablesOutput = Schema.Struct({
  data: Schema.Array(Schema.suspend((): AnySchema => receivables.record))
}).annotate({ identifier: "SalesOrderReceivables", description: "The receivables created, in due date order" })

/** `POST /sales-orders/{id}/receivables`: the order's total split into installments, each a receivable pointing back at it. */
const generateReceivables: ResourceAction = {
  name: "receivables",
  method: "POST",
  path: "receivables",
  permission: "update",
  summary: "Generate the receivables of a sales order",
  description: "Splits the order's total into installments (to the cent, the remainder on the last), each a receivable with the order's " +
    "customer and sales_order_id. 422 for a cancelled order, a total of zero, or an order that already has active receivables (delete or cancel them first).",
  input: ReceivablesInput,
  example: { installments: { count: 3, first_due_date: "2026-09-10", interval_months: 1 } },
  output: ReceivablesOutput,
  successStatus: 201,
  run: (context: ActionContext, body) =>
    Effect.gen(function* () {
      const { installments } = body as typeof ReceivablesInput.Type
      const order = context.current
      const refuse = (field: string, reason: string, code: string) =>
        Effect.fail(unprocessable(`The receivables cannot be generated: ${field} ${reason}`, { [field]: [reason] }, code))
      if (order.status === "cancelled") return yield* refuse("status", "is cancelled", "SALES_ORDER_CANCELLED")
      if (order.has_active_receivables === true) return yield* refuse("receivables", "already exist: delete or cancel them first", "RECEIVABLES_EXIST")
      if (!amountOf(order.total).gt(0)) return yield* refuse("total", "is zero: nothing to receive", "NOTHING_TO_RECEIVE")
      const problem = planProblem(installments)
      if (problem) return yield* refuse("installments", problem, "INVALID_INSTALLMENTS")
      const { payment_method_id, financial_account_id, description, ...plan } = installments
      const created = yield* context.store.createRecord(receivables, {
        amount: formatDecimal(String(order.total)),
        customer_id: order.customer_id,
        sales_order_id: order.id,
        issue_date: order.order_date ?? undefined,
        reference_code: order.reference_code ?? undefined,
        description: description ?? `Sales order ${String(order.record_number)}`,
        ...(payment_method_id ? { payment_method_id } : {}),
        ...(financial_account_id ? { financial_account_id } : {}),
        installments: plan
      })
      return created
    })
}

/** The fields of a sales order, named so that its rules take a draft keyed by them. */
const salesOrderFields = {
  id: id(),
  record_number: column({ type: "integer", output: Schema.Int, input: false, filter: { sortable: true }, description: "Per-tenant sequence, set on create" }),
  reference_code: text(100, { nullable: true, filter: { sortable: true } }),
  operation_type: text(40, { nullable: true, description: "sale, or another label of the tenant's" }),
  product_type: text(40, { nullable: true, description: "goods, service or another label of the tenant's" }),
  status: column({
    type: "text",
    output: Schema.Literals(SALES_ORDER_STATUSES),
    read: Schema.Literals(SALES_ORDER_STATUSES),
    inputSchema: Schema.Literals(SALES_ORDER_STATUSES),
    filter: { sortable: true },
    description: "draft (initial), confirmed (items frozen), fulfilled, cancelled"
  }),
  order_date: date({ nullable: true, filter: { sortable: true } }),
  delivery_date: date({ nullable: true, filter: { sortable: true } }),
  ...customerFields(false),
  quote_id: reference((): ResourceRef => quotes, { input: "create", description: "Make the order from this quote: its customer and items are copied, and it becomes converted" }),
  salesperson_name: text(255, { nullable: true }),
  description: freeText(5000, {}),
  notes: freeText(5000, {}),
  items: children({
    table: "sales_order_items",
    parentKey: "sales_order_id",
    fields: itemFields("sales_order_id", productSummary(), {}),
    identifier: "SalesOrderItem",
    maxItems: 500,
    description: "On PATCH, the complete new list: items with an id are kept and changed, new ones added, missing ones removed. Frozen once confirmed."
  }),
  subtotal: money({ input: false }),
  items_discount: money({ input: false }),
  ...discountFields(),
  total_discount: money({ input: false }),
  total: money({ input: false }),
  items_quantity: itemsQuantity(),
  metadata: metadata(),
  br_data: block({
    identifier: "SalesOrderBrData",
    keys: { taxation_type: Schema.NullOr(Schema.String) },
    input: Schema.Struct({ taxation_type: Schema.optionalKey(Schema.NullOr(Text(60))) }).annotate({ identifier: "SalesOrderBrDataInput" })
  }),
  has_active_receivables: expression({
    sql: ACTIVE_RECEIVABLES_SQL,
    type: "boolean",
    output: Schema.Boolean,
    description: "It has live receivables that are not cancelled"
  }),
  receivables: embedMany({
    foreignKey: "sales_order_id",
    resource: () => receivables,
    output: ReceivableSummary,
    pick: ["id", "reference_code", "status", "amount", "due_date", "paid_at", "payment_method_id", "financial_account_id", "installment_number", "installment_count", "description"],
    description: "Its live receivables (POST /sales-orders/{id}/receivables)"
  }),
  ...timestamps()
}

export const salesOrders = defineResource({
  name: "sales-orders",
  singular: "sales-order",
  title: "Sales order",
  description: "Sales orders: items, discounts and totals, made directly or from a quote; their receivables; invoices made from them.",
  notFoundCode: "SALES_ORDER_NOT_FOUND",
  events: true,
  table: "sales_orders",
  fields: salesOrderFields,
  filters: {
    has_active_invoice: { type: "boolean", sql: ACTIVE_INVOICE_SQL, description: "It has a live invoice that is not cancelled" }
  },
  defaultSort: { field: "record_number", order: "asc" },
  search: { payload: true },
  writes: {
    example: {
      customer_id: "00000000-0000-4000-8000-000000000000",
      operation_type: "sale",
      product_type: "goods",
      order_date: "2024-01-15",
      items: [{ item_description: "Café em grãos 1 kg", quantity: "10", unit_price: "52.50", discount_amount: "2.50" }]
    },
    references: { customer_id: (): AnyResource => customers }
  },
  numbering: { field: "record_number" },
  expandable: ["customer", "items.product"],
  status: {
    field: "status",
    initial: "draft",
    states: {
      draft: { editable: "all" },
      confirmed: { editable: ["delivery_date", "salesperson_name", "description", "notes", "metadata", "br_data"] },
      fulfilled: { editable: ["notes", "metadata"] },
      cancelled: { editable: "none" }
    },
    transitions: {
      draft: ["confirmed", "cancelled"],
      confirmed: ["fulfilled", "cancelled"],
      fulfilled: [],
      cancelled: []
    }
  },
  rules,
  compute,
  afterWrite: convertQuote,
  afterWriteApplies: (operation, draft) => operation === "create" && typeof draft.values.quote_id === "string",
  actions: [generateReceivables],
  // An order that invoices or receivables still point at stays: cancel or delete those first.
  beforeRemove: ({ current, store }: RemoveHookContext<typeof salesOrderFields>): Effect.Effect<void, WriteError> =>
    Effect.gen(function* () {
      const invoice = yield* store.findOne(invoices, {
        kind: "group",
        logic: "and",
        conditions: [
          { kind: "condition", field: "sales_order_id", op: "eq", value: String(current.id) },
          { kind: "condition", field: "status", op: "neq", value: "cancelled" }
        ]
      })
      const problems = new Problems()
      if (Option.isSome(invoice)) problems.add("id", "has an invoice that is not cancelled")
      if (current.has_active_receivables === true) problems.add("id", "has receivables that are not cancelled")
      if (problems.any) return yield* problems.fail("This sales order is still invoiced or receivable", "SALES_ORDER_IN_USE")
    })
})

export type SalesOrder = RecordType<typeof salesOrders>
