import { Effect, Option, Schema } from "effect"
import { CatalogLookup } from "../catalogs/lookup.js"
import { children } from "../engine/children.js"
import { compact } from "../engine/draft.js"
import { type AnySchema, column, expression, type Field, id, type ResourceRef, stored, timestamps } from "../engine/field.js"
import type { FieldType } from "../engine/fields.js"
import {
  type AnyResource,
  type Computed,
  type Draft,
  defineResource,
  type RecordType,
  type ResourceAction,
  type Row,
  type WriteContext
} from "../engine/resource.js"
import { unprocessable } from "../errors.js"
import { decimal } from "../money/decimal.js"
import { block, clearable, date, Digits, Email, freeText, money, Problems, reference, Text, text, WholeNumber } from "./common.js"
import { customers } from "./customers.js"
import { READINESS_SQL, TAXES_SQL, WARNINGS_SQL } from "./invoice-reads.js"
import { resolveInvoiceTaxes, TAX_INPUT_FIELDS } from "./invoice-taxes.js"
import { amountOf, copiedItem, customerFields, discountFields, discountRules, documentAmounts, itemFields, itemsQuantity, lockedReference, newChildren, round, storeOf } from "./sales-documents.js"
import { describeItems } from "./item-descriptions.js"
import { resourceNamed } from "../engine/registry.js"

export const INVOICE_STATUSES = ["draft", "issued", "cancelled"] as const

const nullable = Schema.NullOr

const isObject = (value: unknown): value is Row => typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * A country block stored with its record (jsonb) and answered with every key, the
 * record's id as `id` and `<owner>` (the block has no row of its own), and, for the
 * invoice's `br_data`, keys computed on read.
 */
const recordBlock = <Keys extends Schema.Struct.Fields>(spec: {
  readonly identifier: string
  readonly owner: string
  readonly keys: Keys
  readonly input: AnySchema
  readonly computed?: Readonly<Record<string, { readonly sql: string; readonly schema: AnySchema }>>
  readonly filters?: Readonly<Record<string, FieldType>>
}) => block({ ...spec, owner: { key: spec.owner }, answersId: true })

const Code = (max: number) => clearable(Text(max))

const ItemBrDataInput = Schema.Struct({
  ncm_code: clearable(Digits(8, "NCM code")),
  cest_code: clearable(Digits(7, "CEST code")),
  federal_service_code: Code(20),
  city_service_code: Code(20),
  nbs_code: Code(20),
  cnae_code: Code(20),
  ibs_cbs_cst: Code(3),
  ibs_cbs_classification: Code(6),
  ibs_cbs_operation_indicator_code: Code(6),
  ibs_cbs_is_personal_use: clearable(Schema.Boolean),
  cfop: clearable(Digits(4, "CFOP"))
}).annotate({ identifier: "InvoiceItemBrDataInput" })

const ItemUsDataInput = Schema.Struct({
  hts_code: Code(14),
  tax_code: Code(32),
  sales_tax_category: Code(64)
}).annotate({ identifier: "InvoiceItemUsDataInput" })

const keysOf = <K extends string>(names: ReadonlyArray<K>, schema: AnySchema = nullable(Schema.String)) =>
  Object.fromEntries(names.map((name) => [name, schema])) as Record<K, AnySchema>

const itemBrKeys = {
  ...keysOf(["ncm_code", "cest_code", "federal_service_code", "city_service_code", "nbs_code", "cnae_code", "ibs_cbs_cst", "ibs_cbs_classification", "ibs_cbs_operation_indicator_code"]),
  ibs_cbs_is_personal_use: nullable(Schema.Boolean),
  cfop: nullable(Schema.String)
}

const TaxRecord = Schema.Struct({
  id: Schema.String,
  invoice_id: Schema.String,
  invoice_item_id: Schema.String,
  tax_code: Schema.String,
  tax_name: Schema.String,
  base_amount: Schema.String,
  rate: Schema.String,
  amount: Schema.String,
  jurisdiction: nullable(Schema.String),
  is_withheld: Schema.Boolean,
  is_included: Schema.Boolean,
  source: Schema.String,
  position: Schema.Int
}).annotate({ identifier: "InvoiceTax" })

const Warning = Schema.Struct({
  item_id: Schema.String,
  item_index: Schema.Int,
  code: Schema.String,
  message: Schema.String,
  tax_resolution_id: nullable(Schema.String),
  changed_fields: Schema.Array(Schema.Struct({ entity: Schema.String, field: Schema.String, snapshot_value: Schema.Unknown, current_value: Schema.Unknown }))
}).annotate({ identifier: "InvoiceWarning" })

const items = children({
  table: "invoice_items",
  parentKey: "invoice_id",
  fields: itemFields("invoice_id", undefined, {
    sales_order_item_id: column({ type: "uuid", output: Schema.String, nullable: true, input: false, description: "The sales order item it was copied from" }),
    po_number: text(60, { nullable: true, description: "The customer's purchase order number" }),
    tax_resolution_id: column({ type: "uuid", output: Schema.String, nullable: true, input: false, description: "The snapshot of the inputs its taxes were computed from" }),
    br_data: recordBlock({ identifier: "InvoiceItemBrData", owner: "invoice_item_id", keys: itemBrKeys, input: ItemBrDataInput }),
    us_data: recordBlock({ identifier: "InvoiceItemUsData", owner: "invoice_item_id", keys: keysOf(["hts_code", "tax_code", "sales_tax_category"]), input: ItemUsDataInput }),
    // The item's computed taxes, answered through the invoice's `taxes[]`.
    taxes: column({ type: "jsonb", output: Schema.Array(Schema.Unknown), input: false, hidden: true }) as Field<never, never>
  }),
  identifier: "InvoiceItem",
  maxItems: 500,
  description: "On PATCH, the complete new list (items with an id are kept). Frozen once issued."
})

const RECEIVER_TEXT = [
  "receiver_name",
  "receiver_federal_tax_number",
  "receiver_email",
  "receiver_phone",
  "receiver_address_street",
  "receiver_address_number",
  "receiver_address_district",
  "receiver_address_postal_code",
  "receiver_address_additional_information",
  "receiver_city_ibge_code",
  "receiver_city_name",
  "receiver_state_code",
  "receiver_municipal_registration",
  "receiver_state_registration"
] as const

const BR_TEXT = [
  "nfse_number",
  "nfse_series",
  "nfse_verification_code",
  "operation_nature",
  "fiscal_emission_date",
  "provider_status",
  "transmission_status",
  "taxation_type",
  "external_invoice_id",
  "cancel_justification",
  "cancel_processing_status",
  "cancel_processing_message",
  "processing_status",
  "processing_code",
  "processing_message",
  "submission_xml",
  "response_xml",
  "url",
  "cancel_access_key",
  ...RECEIVER_TEXT
] as const

const LONG = new Set(["submission_xml", "response_xml", "cancel_processing_message", "processing_message", "cancel_justification"])

const BrDataInput = Schema.Struct({
  ...Object.fromEntries(BR_TEXT.map((name) => [name, name === "receiver_email" ? clearable(Email) : Code(LONG.has(name) ? 1_000_000 : 500)])),
  receiver_state_registration_exempt: clearable(Schema.Boolean)
}).annotate({ identifier: "InvoiceBrDataInput" })

const Readiness = Schema.Struct({ ready: Schema.Boolean, blockers: Schema.Array(Schema.String) }).annotate({ identifier: "TransmissionReadiness" })

/** Geography fields matched against the catalogs (spec 422 case 1): stored as the catalog's codes. */
const resolveGeography = (draft: Draft<typeof invoiceFields>, context: WriteContext) =>
  Effect.gen(function* () {
    const catalogs = yield* CatalogLookup
    const problems = new Problems()
    const values: Record<string, unknown> = { ...draft.values }
    const br = isObject(values.br_data) ? { ...values.br_data } : {}
    const sentBr = isObject(draft.input.br_data) ? draft.input.br_data : {}
    const country = (field: "origin_country_code" | "destination_country_code") =>
      Effect.gen(function* () {
        const sent = draft.input[field]
        const text = typeof sent === "string" ? sent : typeof values[field] === "string" ? String(values[field]) : context.tenantCountry
        const found = yield* catalogs.matchCountries(text)
        if (found.length !== 1) {
          if (typeof sent === "string") problems.add(field, found.length === 0 ? "matches no country by ISO2, ISO3, numeric code or name" : "matches several countries: send the ISO2 code")
          return undefined
        }
        if (typeof sent === "string") values[field] = found[0].iso2
        return found[0]
      })
    const state = (field: string, countryField: string | undefined, sent: unknown, write: (code: string) => void, countryId: number | undefined) =>
      Effect.gen(function* () {
        if (typeof sent !== "string") return undefined
        const found = yield* catalogs.matchStates(sent, countryId ?? null)
        if (found.length === 1) {
          write(found[0].state_code)
          return found[0]
        }
        problems.add(field, found.length === 0
          ? `matches no state by code or name${countryField ? ` in ${countryField}` : ""}`
          : `matches several states (${found.map((entry) => `${entry.state_code} in ${entry.country_code}`).join(", ")})`)
        return undefined
      })
    const origin = yield* country("origin_country_code")
    const destination = yield* country("destination_country_code")
    yield* state("origin_state_code", "origin_country_code", draft.input.origin_state_code, (code) => (values.origin_state_code = code), origin?.id)
    yield* state("destination_state_code", "destination_country_code", draft.input.destination_state_code, (code) => (values.destination_state_code = code), destination?.id)
    const home = (yield* catalogs.matchCountries(context.tenantCountry))[0]
    const receiverState = yield* state("br_data.receiver_state_code", undefined, sentBr.receiver_state_code, (code) => (br.receiver_state_code = code), home?.id)
    const ibge = sentBr.receiver_city_ibge_code
    if (typeof ibge === "string") {
      const city = /^\d{1,9}$/.test(ibge.trim()) ? yield* catalogs.findCity(Number(ibge.trim())) : Option.none()
      if (Option.isNone(city)) problems.add("br_data.receiver_city_ibge_code", "matches no city by IBGE code")
      else {
        const cityState = yield* catalogs.findState(city.value.state_id)
        if (receiverState && receiverState.id !== city.value.state_id) problems.add("br_data.receiver_city_ibge_code", `is not in ${receiverState.state_code}`)
        else {
          br.receiver_city_ibge_code = String(city.value.id)
          if (sentBr.receiver_city_name === undefined) br.receiver_city_name = city.value.name
          if (sentBr.receiver_state_code === undefined && Option.isSome(cityState)) br.receiver_state_code = cityState.value.state_code
        }
      }
    }
    if (problems.any) return yield* problems.fail("The geography fields cannot be matched safely to the catalogs", "GEOGRAPHY_UNRESOLVED")
    return { ...draft, values: { ...values, br_data: br } }
  })

/**
 * On create, what the customer implies: `customer_tax_type` (exempt for a US customer with
 * `sales_tax_exempt`, else its type) and, for BR tenants, the receiver (name, tax id,
 * address, city and state, registrations). Fields sent win.
 */
const fromCustomer = (draft: Draft<typeof invoiceFields>, context: WriteContext) =>
  Effect.gen(function* () {
    if (draft.operation !== "create" || typeof draft.values.customer_id !== "string") return draft
    const found = yield* storeOf(context).findById(customers, draft.values.customer_id)
    if (Option.isNone(found)) return draft
    const customer = found.value
    const exempt = isObject(customer.us_data) && customer.us_data.sales_tax_exempt === true
    const taxType = draft.values.customer_tax_type ?? (exempt ? "exempt" : customer.type ?? null)
    const typed = { ...draft, values: { ...draft.values, customer_tax_type: taxType } }
    if (context.tenantCountry !== "BR") return typed
    const br = isObject(customer.br_data) ? customer.br_data : {}
    const first = (list: unknown) => (Array.isArray(list) && typeof list[0] === "string" ? list[0] : null)
    const city = isObject(customer.city) ? customer.city : undefined
    const state = isObject(customer.state) ? customer.state : undefined
    const defaults: Row = compact({
      receiver_name: customer.legal_name,
      receiver_federal_tax_number: customer.tax_id,
      receiver_email: first(customer.emails),
      receiver_phone: first(customer.phones),
      receiver_address_street: customer.address_line1,
      receiver_address_number: br.address_number,
      receiver_address_district: br.address_district,
      receiver_address_postal_code: customer.postal_code,
      receiver_city_ibge_code: city ? String(city.id) : null,
      receiver_city_name: city?.name,
      receiver_state_code: state?.state_code,
      receiver_municipal_registration: br.im,
      receiver_state_registration: br.ie,
      receiver_state_registration_exempt: br.ie_exempt
    })
    const current = isObject(draft.values.br_data) ? draft.values.br_data : {}
    return { ...typed, values: { ...typed.values, br_data: { ...defaults, ...current } } }
  })

/** From a sales order (`sales_order_id` on create): its customer, operation, items and discount, unless the request sends its own. */
const fromSalesOrder = (draft: Draft<typeof invoiceFields>, context: WriteContext) =>
  Effect.gen(function* () {
    const orderId = draft.input.sales_order_id
    if (draft.operation !== "create" || typeof orderId !== "string") return draft
    const order = yield* lockedReference(context, resourceNamed("sales-orders"), orderId, "sales_order_id")
    if (order.status === "cancelled") {
      return yield* Effect.fail(unprocessable("The sales order is cancelled", { sales_order_id: ["is cancelled"] }, "SALES_ORDER_CANCELLED"))
    }
    const values: Record<string, unknown> = { ...draft.values }
    for (const name of ["customer_id", "operation_type", "product_type", "salesperson_name"] as const) {
      if (draft.input[name] === undefined && order[name] !== null && order[name] !== undefined) values[name] = order[name]
    }
    if (draft.input.discount_amount === undefined && draft.input.discount_rate === undefined) {
      values.discount_amount = order.discount_amount
      values.discount_rate = order.discount_rate
    }
    const copied = (order.items as ReadonlyArray<Row>).map((item) => ({ ...copiedItem(item), sales_order_item_id: item.id }))
    return { ...draft, values, children: { ...draft.children, items: draft.input.items === undefined ? newChildren(copied) : draft.children.items ?? [] } }
  })

const needsTaxes = (draft: Draft<typeof invoiceFields>) =>
  draft.operation === "create" || draft.input.items !== undefined || TAX_INPUT_FIELDS.some((name) => draft.input[name] !== undefined)

const rules = (draft: Draft<typeof invoiceFields>, context: WriteContext) =>
  Effect.gen(function* () {
    const copied = yield* fromSalesOrder(draft, context)
    if (copied.values.customer_id === undefined || copied.values.customer_id === null) {
      return yield* Effect.fail(unprocessable("An invoice needs a customer", { customer_id: ["is required (or send sales_order_id)"] }, "VALIDATION_FAILED"))
    }
    const problems = new Problems()
    const discounted = discountRules(yield* describeItems(copied, context), problems)
    if (problems.any) return yield* problems.fail("The invoice cannot be saved")
    const placed = yield* resolveGeography(yield* fromCustomer(discounted, context), context)
    return needsTaxes(placed) ? yield* resolveInvoiceTaxes(placed, context) : placed
  })

interface StoredTax {
  readonly amount: string
  readonly is_withheld: boolean
  readonly is_included: boolean
}

/**
 * The document's amounts (as for orders) plus taxes: total_tax = Σ item taxes;
 * total = subtotal − total_discount + the taxes not already inside the prices;
 * withheld_total = Σ withheld taxes; net_receivable_total = total − withheld_total.
 */
const compute = (draft: Draft<typeof invoiceFields>): Computed<typeof invoiceFields> => {
  const amounts = documentAmounts(draft)
  const taxes = (draft.children.items ?? []).flatMap((item) => (item.values.taxes as ReadonlyArray<StoredTax> | undefined) ?? [])
  const sum = (list: ReadonlyArray<StoredTax>) => list.reduce((acc, tax) => acc.plus(amountOf(tax.amount)), decimal(0))
  const total = decimal(amounts.total).plus(sum(taxes.filter((tax) => !tax.is_included)))
  const withheld = sum(taxes.filter((tax) => tax.is_withheld))
  return {
    values: {
      subtotal: amounts.subtotal,
      items_discount: amounts.items_discount,
      total_discount: amounts.total_discount,
      total_tax: round(sum(taxes)),
      withheld_total: round(withheld),
      net_receivable_total: round(total.minus(withheld)),
      total: round(total),
      items_quantity: amounts.items_quantity
    },
    children: { items: amounts.items }
  }
}

const recalculateTaxes: ResourceAction = {
  name: "recalculate_taxes",
  method: "POST",
  path: "recalculate-taxes",
  permission: "update",
  summary: "Recalculate an invoice's taxes",
  description: "Computes the taxes again from the products' current fiscal data and the tenant's fiscal rules, refreshing each item's " +
    "snapshot (tax_resolution_id) and so clearing stale_tax_resolution warnings. Answers the invoice. 422 once issued (items and totals are frozen).",
  output: Schema.suspend((): AnySchema => invoices.record),
  run: (context) =>
    context.store.updateRecord(context.resource, String(context.current.id), {
      items: ((context.current.items as ReadonlyArray<Row> | undefined) ?? []).map((item) => ({ id: item.id }))
    })
}

/** The fields of an invoice, named so that its rules take a draft keyed by them. */
const invoiceFields = {
  id: id(),
  reference_code: text(60, { nullable: true, filter: { sortable: true } }),
  series: text(10, { nullable: true }),
  status: column({
    type: "text",
    output: Schema.Literals(INVOICE_STATUSES),
    read: Schema.Literals(INVOICE_STATUSES),
    inputSchema: Schema.Literals(INVOICE_STATUSES),
    filter: { sortable: true },
    description: "draft (initial), issued (items and totals frozen), cancelled"
  }),
  operation_type: text(40, { nullable: true }),
  product_type: text(40, { nullable: true, description: "goods (NF-e) or service (NFS-e: exactly one item)" }),
  ...customerFields(false),
  invoice_date: date({ required: true, filter: { sortable: true } }),
  origin_state_code: text(100, { nullable: true, description: "State code or name, matched in origin_country_code (else the tenant's country)" }),
  origin_country_code: text(100, { nullable: true, description: "ISO2, ISO3, numeric code or name; stored as ISO2" }),
  destination_state_code: text(100, { nullable: true, description: "State code or name, matched in destination_country_code (else the tenant's country)" }),
  destination_country_code: text(100, { nullable: true, description: "ISO2, ISO3, numeric code or name; stored as ISO2" }),
  customer_tax_type: text(40, { nullable: true, description: "individual, company, exempt (no US sales tax) or another label" }),
  salesperson_name: text(255, { nullable: true }),
  fiscal_notes: freeText(5000, {}),
  internal_notes: freeText(5000, {}),
  ...discountFields(),
  tax_engine_provider: column({ type: "text", output: Schema.String, nullable: true, input: false, filter: true, description: "The tax engine that computed the taxes" }),
  sales_order_id: reference((): ResourceRef => resourceNamed("sales-orders"), { input: "create", description: "Make the invoice from this sales order: its customer and items are copied" }),
  items,
  taxes: expression({ sql: TAXES_SQL, type: "jsonb", output: Schema.Array(TaxRecord), description: "The items' taxes, computed by the tax engine" }),
  subtotal: money({ input: false }),
  items_discount: money({ input: false }),
  total_discount: money({ input: false }),
  total_tax: money({ input: false, description: "Σ of the taxes (included in the prices or not)" }),
  withheld_total: money({ input: false, description: "Σ of the withheld taxes" }),
  net_receivable_total: money({ input: false, description: "total − withheld_total: what the customer pays" }),
  total: money({ input: false, filter: { sortable: true }, description: "subtotal − total_discount + taxes not included in the prices" }),
  items_quantity: itemsQuantity(),
  br_data: recordBlock({
    identifier: "InvoiceBrData",
    owner: "invoice_id",
    keys: { ...keysOf(BR_TEXT), receiver_state_registration_exempt: nullable(Schema.Boolean) },
    input: BrDataInput,
    computed: { transmission_readiness: { sql: READINESS_SQL, schema: Readiness } },
    filters: { transmission_status: "string", processing_status: "string", nfse_number: "string", external_invoice_id: "string" }
  }),
  us_data: recordBlock({
    identifier: "InvoiceUsData",
    owner: "invoice_id",
    keys: { net_terms: nullable(Schema.Int) },
    input: Schema.Struct({ net_terms: clearable(WholeNumber.check(Schema.isBetween({ minimum: 0, maximum: 3650 }, { message: "must be a whole number of days from 0 to 3650" }))) })
      .annotate({ identifier: "InvoiceUsDataInput" })
  }),
  warnings: expression({ sql: WARNINGS_SQL, type: "jsonb", output: Schema.Array(Warning), description: "stale_tax_resolution: a product's fiscal data changed after an item's taxes were computed" }),
  deleted_by_user_id: stored("uuid", Schema.String, { nullable: true }),
  ...timestamps()
}

export const invoices = defineResource({
  name: "invoices",
  singular: "invoice",
  title: "Invoice",
  description: "Invoices to customers (NF-e, NFS-e, US invoices): items with fiscal data, taxes from the tax engine, totals, transmission readiness.",
  notFoundCode: "INVOICE_NOT_FOUND",
  events: true,
  table: "invoices",
  fields: invoiceFields,
  defaultSort: { field: "invoice_date", order: "desc" },
  expandable: ["customer"],
  search: { payload: false },
  writes: {
    example: {
      customer_id: "00000000-0000-4000-8000-000000000000",
      reference_code: "NF-1001",
      product_type: "goods",
      invoice_date: "2024-01-15",
      items: [{ item_description: "Café em grãos 1 kg", quantity: "10", unit_price: "52.50", br_data: { cfop: "5102" } }]
    },
    references: { customer_id: (): AnyResource => customers }
  },
  status: {
    field: "status",
    initial: "draft",
    states: {
      draft: { editable: "all" },
      // Providers write their results back (numbers, statuses, XML, URL); items and totals stay as issued.
      issued: { editable: ["br_data", "us_data", "internal_notes"] },
      cancelled: { editable: ["br_data", "internal_notes"] }
    },
    transitions: { draft: ["issued", "cancelled"], issued: ["cancelled"], cancelled: [] }
  },
  stamps: { deleted: "deleted_by_user_id" },
  rules,
  compute,
  actions: [recalculateTaxes],
  beforeRemove: ({ current }) =>
    current.status === "draft"
      ? Effect.void
      : Effect.fail(unprocessable(`An ${String(current.status)} invoice cannot be deleted: only a draft can`, { status: [`is ${String(current.status)}`] }, "INVOICE_NOT_DRAFT"))
})

export type Invoice = RecordType<typeof invoices>
