import { Effect, Schema, SchemaIssue, SchemaTransformation } from "effect"
import { children } from "../engine/children.js"
import { column, embedMany, embedOne, id, inputOnly, type ResourceRef, stored, timestamp, timestamps, withInput } from "../engine/field.js"
import { type AnyResource, type Computed, type Draft, defineResource, type RecordType, type Row, type WriteContext, type WriteHookContext } from "../engine/resource.js"
import { unprocessable } from "../errors.js"
import { decimal, formatDecimal, NonNegativeDecimal } from "../money/decimal.js"
import { DateString, date, freeText, metadata, money, Problems, reference, Text, text, Uuid } from "./common.js"
import { financialCategories } from "./financial-categories.js"
import { InstallmentPlan, MAX_INSTALLMENTS } from "./installments.js"
import { describeItems } from "./item-descriptions.js"
import { payables } from "./payables.js"
import { products } from "./products.js"
import { suppliers } from "./suppliers.js"

/** The NF-e access key's check digit: modulo 11 over the first 43 digits, weights 2 to 9 from the right. */
export const accessKeyCheckDigit = (first43: string): number => {
  let sum = 0
  for (let index = 0; index < 43; index++) sum += Number(first43[42 - index]) * (2 + (index % 8))
  const rest = sum % 11
  return rest < 2 ? 0 : 11 - rest
}

/** A 44-digit NF-e access key (spaces and dots dropped) whose check digit is right. */
export const AccessKey = Schema.String.annotate({ description: "NF-e access key: 44 digits (spaces and dots are dropped); the check digit is verified" }).pipe(
  Schema.decodeTo(
    Schema.String,
    SchemaTransformation.transformEffect({
      decode: (text: string) => {
        const digits = text.replace(/[\s.]/g, "")
        if (!/^\d{44}$/.test(digits)) return Effect.fail(new SchemaIssue.InvalidValue({ message: "must be an NF-e access key of 44 digits" }, text))
        return accessKeyCheckDigit(digits.slice(0, 43)) === Number(digits[43])
          ? Effect.succeed(digits)
          : Effect.fail(new SchemaIssue.InvalidValue({ message: "has a wrong check digit (the 44th digit)" }, text))
      },
      encode: (text: string) => Effect.succeed(text)
    })
  )
)

const PlanItem = Schema.Struct({
  amount: NonNegativeDecimal,
  due_date: DateString,
  description: Schema.optionalKey(Schema.NullOr(Text(500))),
  financial_account_id: Schema.optionalKey(Schema.NullOr(Uuid)),
  payment_method_id: Schema.optionalKey(Schema.NullOr(Uuid)),
  reference_code: Schema.optionalKey(Schema.NullOr(Text(100)))
}).annotate({ identifier: "PurchaseInvoicePayablePlan" })

const PayablesPlan = Schema.Array(PlanItem).check(
  Schema.isMinLength(1, { message: "must have at least 1 item" }),
  Schema.isMaxLength(MAX_INSTALLMENTS, { message: `must have at most ${MAX_INSTALLMENTS} items` })
).annotate({
  description: "The payables of this invoice (their amounts add up to total). On PATCH, replaces the invoice's unsettled payables."
})

const PayableSummary = Schema.Struct({
  id: Schema.String,
  record_number: Schema.Int,
  status: Schema.String,
  amount: Schema.String,
  due_date: Schema.String,
  paid_at: Schema.NullOr(Schema.String),
  installment_number: Schema.NullOr(Schema.Int),
  installment_count: Schema.NullOr(Schema.Int)
}).annotate({ identifier: "PurchaseInvoicePayable" })

const SupplierSummary = Schema.Struct({
  id: Schema.String,
  legal_name: Schema.String,
  trade_name: Schema.NullOr(Schema.String),
  tax_id: Schema.NullOr(Schema.String)
}).annotate({ identifier: "PurchaseInvoiceSupplier" })

const itemFields = {
  id: id(),
  purchase_invoice_id: stored("uuid", Schema.String),
  product_id: reference((): ResourceRef => products),
  item_description: text(1000, { aliases: ["description"], description: "Required unless product_id is given: the product's name then. Also accepted as description (deprecated)" }),
  quantity: money({ required: true }),
  unit_price: money({ required: true }),
  discount_amount: money({}),
  subtotal: money({ input: false }),
  total: money({ input: false }),
  position: stored("integer", Schema.Int),
  created_at: timestamp(),
  updated_at: timestamp()
}

const amount = (value: unknown) => decimal(value === null || value === undefined ? "0" : String(value))

/** Each item: quantity × unit price, less its discount; the invoice: items, less its discount, plus freight and other charges. */
const totals = (draft: Draft<typeof purchaseInvoiceFields>): Computed<typeof purchaseInvoiceFields> => {
  const items = (draft.children.items ?? []).map((item) => {
    const subtotal = amount(item.values.quantity).times(amount(item.values.unit_price))
    return { subtotal: formatDecimal(subtotal), total: formatDecimal(subtotal.minus(amount(item.values.discount_amount))) }
  })
  const itemsTotal = items.reduce((sum, item) => sum.plus(item.total), decimal(0))
  const total = itemsTotal.minus(amount(draft.values.discount_amount)).plus(amount(draft.values.freight_amount)).plus(amount(draft.values.other_amount))
  return { values: { items_total: formatDecimal(itemsTotal), total: formatDecimal(total) }, children: { items } }
}

const rules = (given: Draft<typeof purchaseInvoiceFields>, context: WriteContext) =>
  Effect.gen(function* () {
    const draft = yield* describeItems(given, context)
    const problems = new Problems()
    ;(draft.children.items ?? []).forEach((item, index) => {
      if (amount(item.values.discount_amount).gt(amount(item.values.quantity).times(amount(item.values.unit_price)))) {
        problems.add(`items.${index}.discount_amount`, "is more than the item's quantity times unit_price")
      }
    })
    if (draft.values.entry_date && draft.values.issue_date && String(draft.values.entry_date) < String(draft.values.issue_date)) {
      problems.add("entry_date", "is before issue_date")
    }
    if (draft.input.payables !== undefined && draft.input.installments !== undefined) problems.add("installments", "send payables or installments, not both")
    if (problems.any) return yield* problems.fail("The purchase invoice cannot be saved")
    return draft
  })

const refuse = (field: string, reason: string, code: string, message: string) => Effect.fail(unprocessable(message, { [field]: [reason] }, code))

type PlanItem = typeof PlanItem.Type

/**
 * The snapshot rule (spec 422 case 2): the invoice's payables add up to its total. A
 * request that brings `payables` or `installments` replaces the unsettled payables
 * with the new plan, which must add up; a total that changes without one is refused
 * while the invoice has payables.
 */
const keepPayablesInStep = ({ operation, id, draft, store }: WriteHookContext<typeof purchaseInvoiceFields>) =>
  Effect.gen(function* () {
    const target = payables
    const total = decimal(String(draft.values.total))
    const existing = ((draft.current?.payables as ReadonlyArray<Row> | undefined) ?? []).filter((payable) => payable.status !== "cancelled")
    const plan = draft.input.payables as ReadonlyArray<PlanItem> | undefined
    const installments = draft.input.installments as InstallmentPlan | undefined
    if (plan === undefined && installments === undefined) {
      const before = draft.current === undefined ? undefined : String(draft.current.total)
      if (operation === "update" && existing.length > 0 && before !== String(draft.values.total)) {
        const sum = existing.reduce((acc, payable) => acc.plus(String(payable.amount)), decimal(0))
        return yield* refuse(
          "total",
          `would be ${formatDecimal(total)} while the invoice's payables add up to ${formatDecimal(sum)}: send payables (or installments) adding up to the new total`,
          "PAYABLES_OUT_OF_STEP",
          "The total would no longer match the invoice's payables"
        )
      }
      return false
    }
    if (plan !== undefined) {
      const sum = plan.reduce((acc, item) => acc.plus(item.amount), decimal(0))
      if (!sum.eq(total)) {
        return yield* refuse("payables", `add up to ${formatDecimal(sum)}; the invoice total is ${formatDecimal(total)}`, "PAYABLES_OUT_OF_STEP", "The payables do not add up to the invoice total")
      }
    }
    const settled = existing.filter((payable) => payable.status === "paid" || payable.status === "partial")
    if (settled.length > 0) {
      return yield* refuse(
        plan !== undefined ? "payables" : "installments",
        `would replace payables already settled (record numbers ${settled.map((payable) => payable.record_number).join(", ")}): remove their allocations first`,
        "PAYABLES_SETTLED",
        "Settled payables cannot be replaced"
      )
    }
    for (const payable of existing) yield* store.removeRecord(target, String(payable.id))
    const common = {
      supplier_id: draft.values.supplier_id,
      issue_date: draft.values.issue_date,
      ...(draft.values.financial_category_id ? { financial_category_id: draft.values.financial_category_id } : {}),
      ...(draft.values.reference_code ? { reference_code: draft.values.reference_code } : {}),
      description: `Purchase invoice ${String(draft.values.reference_code ?? "")}`.trim()
    }
    const link = { purchase_invoice_id: id }
    if (plan !== undefined) {
      for (const item of plan) {
        const given = Object.fromEntries(Object.entries(item).filter(([, value]) => value !== null && value !== undefined))
        yield* store.createRecord(target, { ...common, ...given }, link)
      }
    } else if (total.gt(0)) {
      yield* store.createRecord(target, { ...common, amount: formatDecimal(total), installments }, link)
    } else {
      return yield* refuse("installments", "need a total above zero", "PAYABLES_OUT_OF_STEP", "Nothing to split into installments")
    }
    return true
  })

/** The fields of a purchase invoice, named so that its rules take a draft keyed by them. */
const purchaseInvoiceFields = {
  id: id(),
  supplier_id: reference((): ResourceRef => suppliers, { nullable: false, required: true }),
  supplier: embedOne({ key: "supplier_id", resource: () => suppliers, output: SupplierSummary, pick: ["id", "legal_name", "trade_name", "tax_id"] }),
  reference_code: text(60, { nullable: true, filter: { sortable: true }, description: "The supplier's invoice number" }),
  series: text(10, { nullable: true }),
  access_key: column({ type: "text", output: Schema.String, inputSchema: AccessKey, nullable: true, filter: true, description: "NF-e access key (44 digits)" }),
  issue_date: date({ required: true, filter: { sortable: true } }),
  entry_date: date({ nullable: true, filter: { sortable: true }, description: "When the goods or services were received" }),
  items: children({ table: "purchase_invoice_items", parentKey: "purchase_invoice_id", fields: itemFields, identifier: "PurchaseInvoiceItem", maxItems: 500, required: true }),
  items_total: money({ input: false }),
  discount_amount: money({}),
  freight_amount: money({}),
  other_amount: money({ description: "Taxes and other charges added to the items (IPI, ICMS-ST, insurance)" }),
  total: money({ input: false, filter: { sortable: true } }),
  financial_category_id: reference((): ResourceRef => financialCategories),
  notes: freeText(2000, {}),
  payables: withInput(
    embedMany({ foreignKey: "purchase_invoice_id", resource: () => payables, output: PayableSummary, pick: ["id", "record_number", "status", "amount", "due_date", "paid_at", "installment_number", "installment_count"] }),
    PayablesPlan
  ),
  installments: inputOnly(InstallmentPlan),
  metadata: metadata(),
  ...timestamps()
}

export const purchaseInvoices = defineResource({
  name: "purchase-invoices",
  singular: "purchase-invoice",
  title: "Purchase invoice",
  description: "Invoices received from suppliers (NF-e de entrada, vendor bills): items, totals, and the payables that settle them.",
  notFoundCode: "PURCHASE_INVOICE_NOT_FOUND",
  events: true,
  table: "purchase_invoices",
  fields: purchaseInvoiceFields,
  defaultSort: { field: "issue_date", order: "desc" },
  expandable: ["supplier"],
  search: { payload: true },
  writes: {
    example: {
      supplier_id: "00000000-0000-4000-8000-000000000000",
      reference_code: "1234",
      series: "1",
      issue_date: "2024-01-10",
      items: [{ item_description: "Café em grãos 1 kg", quantity: "10", unit_price: "52.50" }],
      freight_amount: "25.00",
      payables: [{ amount: "300.00", due_date: "2024-02-10" }, { amount: "250.00", due_date: "2024-03-10" }]
    },
    references: { supplier_id: (): AnyResource => suppliers }
  },
  rules,
  compute: totals,
  afterWrite: keepPayablesInStep,
  // A create without payables or installments has no payables to keep in step.
  afterWriteApplies: (operation, draft) => operation === "update" || draft.input.payables !== undefined || draft.input.installments !== undefined,
  // Its unsettled payables leave with it; settled ones keep it (remove their allocations first).
  beforeRemove: ({ current, store }) =>
    Effect.gen(function* () {
      const linked = ((current.payables as ReadonlyArray<Row> | undefined) ?? []).filter((payable) => payable.status !== "cancelled")
      const settled = linked.filter((payable) => payable.status === "paid" || payable.status === "partial")
      if (settled.length > 0) {
        return yield* refuse("id", "has settled payables: remove their allocations first", "PAYABLES_SETTLED", "This purchase invoice has settled payables")
      }
      for (const payable of linked) yield* store.removeRecord(payables, String(payable.id))
    })
})

export type PurchaseInvoice = RecordType<typeof purchaseInvoices>
