import { base, en, en_US, Faker, pt_BR } from "@faker-js/faker"
import {
  type AnyResource,
  customers,
  decimal,
  financialAccounts,
  financialCategories,
  financialTransactions,
  fiscalRulesBr,
  invoices,
  operatorPrincipal,
  payables,
  type Principal,
  products,
  quotes,
  receivables,
  ResourceEngine,
  type Row,
  salesOrders,
  suppliers,
  Tenancy
} from "@erp/core"
import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { CliFailure } from "../runtime.js"
import { writeBulkOrders } from "./bulk-orders.js"
import { type DemoCounts, orderSplit } from "./scales.js"

export { type DemoCounts, SCALES } from "./scales.js"
import { type CatalogCity, citiesOf, GOODS } from "./catalog.js"
import { cnpj, cpf, ein } from "./tax-ids.js"

export type Country = "BR" | "US"

export interface DemoOptions {
  readonly tenants: number
  readonly counts: DemoCounts
  readonly seed: number
  readonly country: Country | "mixed"
  /** Called after records are written (one, or a batch of `count`), with the kind being written. */
  readonly onRecord: (stage: string, count?: number) => void
}

export interface DemoTenant {
  readonly id: string
  readonly name: string
  readonly country: Country
  readonly records: Record<string, number>
}

/** Demo data lives in the first half of 2026, whatever day it is seeded: the same seed gives the same records. */
const PERIOD = { from: "2026-01-05T12:00:00Z", to: "2026-06-30T12:00:00Z" }

const day = (date: Date) => date.toISOString().slice(0, 10)
const addDays = (date: string, days: number) => day(new Date(Date.parse(`${date}T12:00:00Z`) + days * 86_400_000))
const money = (value: number) => value.toFixed(2)
/** Half of an amount in cents, rounded down to a cent: decimal arithmetic, never floats. */
const half = (amount: string) => decimal(amount).div(2).decimalPlaces(2, 1).toFixed(2)

const describe = (error: unknown) => {
  const { message, fields } = error as { message?: string; fields?: Readonly<Record<string, ReadonlyArray<string>>> }
  const detail = fields ? ` (${Object.entries(fields).map(([name, reasons]) => `${name} ${reasons.join(", ")}`).join("; ")})` : ""
  return `${message ?? String(error)}${detail}`
}

/** One tenant's data, written through the engine as its operator: every rule, number, tax and event as through the API. */
const seedTenant = (index: number, options: DemoOptions) =>
  Effect.gen(function* () {
    const country: Country = options.country === "mixed" ? (index % 2 === 0 ? "BR" : "US") : options.country
    const br = country === "BR"
    const faker = new Faker({ locale: br ? [pt_BR, en, base] : [en_US, en, base] })
    faker.seed(options.seed * 1000 + index)
    const tenancy = yield* Tenancy
    const engine = yield* ResourceEngine
    const tenant = yield* tenancy.createTenant({ name: `${faker.company.name()} (demo)`, countryCode: country })
    const principal: Principal = yield* operatorPrincipal(tenant.id, "seed")
    const records: Record<string, number> = {}

    const write = <A>(resource: AnyResource, effect: Effect.Effect<A, unknown>) =>
      effect.pipe(
        Effect.tap(() => Effect.sync(() => {
          records[resource.name] = (records[resource.name] ?? 0) + 1
          options.onRecord(resource.name)
        })),
        Effect.mapError((error) => new CliFailure(`Seeding ${resource.name} of tenant ${tenant.id} was refused: ${describe(error)}`))
      )
    const create = (resource: AnyResource, body: Row) => write(resource, engine.create(resource, principal, body))
    const update = (resource: AnyResource, id: unknown, body: Row) =>
      engine.update(resource, principal, String(id), body).pipe(Effect.mapError((error) => new CliFailure(`Updating ${resource.name} ${String(id)} was refused: ${describe(error)}`)))
    const allocate = (resource: AnyResource, id: unknown, body: Row) => {
      const action = resource.actions!.find((candidate) => candidate.name === "allocate")!
      return engine.action(resource, action, principal, String(id), {}, body).pipe(Effect.mapError((error) => new CliFailure(`Allocating to ${resource.name} ${String(id)} was refused: ${describe(error)}`)))
    }

    const cities = citiesOf(country).slice(0, 400)
    const city = (): CatalogCity => faker.helpers.arrayElement(cities)
    const date = () => day(faker.date.between(PERIOD))

    // Chart of accounts and where money sits.
    const income = yield* create(financialCategories, { name: br ? "Receitas de vendas" : "Sales revenue", type: "income", code: "1.01", position: 1 })
    const purchases = yield* create(financialCategories, { name: br ? "Compras de mercadorias" : "Cost of goods purchased", type: "expense", code: "2.01", position: 1 })
    const overhead = yield* create(financialCategories, { name: br ? "Despesas administrativas" : "Administrative expenses", type: "expense", code: "2.02", position: 2 })
    const bank = yield* create(financialAccounts, { name: br ? "Conta corrente principal" : "Main checking account", type: "checking", initial_balance: money(faker.number.int({ min: 20_000, max: 200_000 })), display_order: 1 })
    yield* create(financialAccounts, { name: br ? "Caixa" : "Petty cash", type: "cash", initial_balance: money(faker.number.int({ min: 200, max: 2_000 })), display_order: 2 })
    if (br) {
      // Taxes an invoice's items take in Brazil: ICMS in the price, PIS and COFINS on top of nothing (cumulative regime, in the price).
      yield* create(fiscalRulesBr, {
        name: "Venda de mercadorias",
        operation_type: "sale",
        taxes: [
          { tax_code: "ICMS", rate: "18", is_included: true },
          { tax_code: "PIS", rate: "0.65", is_included: true },
          { tax_code: "COFINS", rate: "3", is_included: true }
        ]
      })
    }

    const party = () => {
      const company = faker.datatype.boolean({ probability: br ? 0.6 : 0.8 })
      const place = city()
      const name = company ? faker.company.name() : faker.person.fullName()
      const taxId = br ? (company ? { tax_id: cnpj(faker), tax_id_type: "CNPJ" } : { tax_id: cpf(faker), tax_id_type: "CPF" }) : company ? { tax_id: ein(faker), tax_id_type: "EIN" } : {}
      return {
        legal_name: name,
        ...(company ? { trade_name: name.split(/[ ,]/)[0] } : {}),
        ...taxId,
        ...(company || br ? {} : { type: "individual" }),
        emails: [faker.internet.email({ firstName: name.split(" ")[0] }).toLowerCase()],
        phones: [faker.phone.number({ style: "international" })],
        address_line1: faker.location.streetAddress(),
        postal_code: faker.location.zipCode(),
        city_id: place.id
      }
    }

    // Each customer's state: where its invoices go (US sales tax is the destination state's).
    const customerIds: Array<{ readonly id: string; readonly state: string }> = []
    for (let n = 0; n < options.counts.customers; n++) {
      const body = party()
      customerIds.push({ id: String((yield* create(customers, body)).id), state: cities.find((candidate) => candidate.id === body.city_id)!.state_code })
    }
    const supplierIds: Array<string> = []
    for (let n = 0; n < options.counts.suppliers; n++) supplierIds.push(String((yield* create(suppliers, party())).id))

    const catalog: Array<{ id: string; name: string; price: string }> = []
    for (let n = 0; n < options.counts.products; n++) {
      const good = GOODS[n % GOODS.length]
      const variant = n < GOODS.length ? "" : ` ${faker.commerce.productAdjective()}`
      const name = `${br ? good.pt : good.en}${variant}`
      const price = money(faker.number.float({ min: good.price[0], max: good.price[1], fractionDigits: 2 }))
      const product = yield* create(products, {
        name,
        type: "goods",
        sale_price: price,
        reference_code: `SKU-${String(n + 1).padStart(5, "0")}`,
        tags: [faker.commerce.department().toLowerCase()],
        ...(br ? { br_data: { ncm_code: good.ncm, origin: "0" } } : { us_data: { hts_code: good.hts } })
      })
      catalog.push({ id: String(product.id), name, price })
    }

    // Quotes become sales orders, orders become invoices (taxes by the tax engine), invoices become receivables; most are paid.
    const split = orderSplit(options.counts.orders)
    for (let n = 0; n < split.chain && customerIds.length > 0 && catalog.length > 0; n++) {
      const quoteDate = date()
      const lines = faker.helpers.arrayElements(catalog, { min: 1, max: Math.min(4, catalog.length) })
      const customer = faker.helpers.arrayElement(customerIds)
      const quote = yield* create(quotes, {
        customer_id: customer.id,
        product_type: "goods",
        quote_date: quoteDate,
        valid_until: addDays(quoteDate, 30),
        status: "approved",
        items: lines.map((line) => ({ product_id: line.id, item_description: line.name, quantity: String(faker.number.int({ min: 1, max: 20 })), unit_price: line.price }))
      })
      const orderDate = addDays(quoteDate, faker.number.int({ min: 0, max: 10 }))
      const order = yield* create(salesOrders, { quote_id: quote.id, order_date: orderDate, operation_type: "sale" })
      yield* update(salesOrders, order.id, { status: "confirmed" })
      const invoiceDate = addDays(orderDate, faker.number.int({ min: 0, max: 5 }))
      const invoice = yield* create(invoices, { sales_order_id: order.id, invoice_date: invoiceDate, operation_type: "sale", destination_state_code: customer.state })
      const issued = yield* update(invoices, invoice.id, { status: "issued" })
      const amount = String(issued.net_receivable_total ?? issued.total)
      const receivable = yield* create(receivables, {
        customer_id: customer.id,
        sales_order_id: order.id,
        invoice_id: invoice.id,
        amount,
        issue_date: invoiceDate,
        due_date: addDays(invoiceDate, 30),
        financial_account_id: bank.id,
        financial_category_id: income.id,
        description: `${br ? "Pedido" : "Order"} ${String(order.record_number)}`
      })
      if (faker.datatype.boolean({ probability: 0.7 })) {
        const transaction = yield* create(financialTransactions, {
          account_id: bank.id,
          posted_at: addDays(invoiceDate, faker.number.int({ min: 1, max: 35 })),
          amount,
          name: br ? `PIX recebido ${String(order.record_number)}` : `ACH deposit ${String(order.record_number)}`
        })
        yield* allocate(receivables, receivable.id, { financial_transaction_id: transaction.id, allocated_amount: amount })
      }
    }

    // At scale, the volume is in sales orders with their items, written in batches as a create writes them.
    if (split.bulk > 0 && customerIds.length > 0 && catalog.length > 0) {
      yield* writeBulkOrders({
        tenantId: tenant.id,
        actor: principal.actor,
        faker,
        customers: customerIds,
        catalog,
        count: split.bulk,
        date,
        onBatch: (orders) => {
          records[salesOrders.name] = (records[salesOrders.name] ?? 0) + orders
          options.onRecord(salesOrders.name, orders)
        }
      }).pipe(Effect.orDie)
    }

    // Bills from suppliers, settled in full, in part, or still open.
    for (let n = 0; n < options.counts.payables && supplierIds.length > 0; n++) {
      const issueDate = date()
      const amount = money(faker.number.float({ min: 80, max: 9_000, fractionDigits: 2 }))
      const payable = yield* create(payables, {
        supplier_id: faker.helpers.arrayElement(supplierIds),
        amount,
        issue_date: issueDate,
        due_date: addDays(issueDate, faker.helpers.arrayElement([15, 30, 45])),
        financial_account_id: bank.id,
        financial_category_id: faker.datatype.boolean() ? purchases.id : overhead.id,
        description: br ? `NF ${faker.number.int({ min: 1000, max: 99999 })}` : `Bill ${faker.number.int({ min: 1000, max: 99999 })}`
      })
      const settled = faker.helpers.weightedArrayElement([{ weight: 5, value: "full" }, { weight: 2, value: "part" }, { weight: 3, value: "open" }])
      if (settled === "open") continue
      const paid = settled === "full" ? amount : half(amount)
      const transaction = yield* create(financialTransactions, {
        account_id: bank.id,
        posted_at: addDays(issueDate, faker.number.int({ min: 1, max: 40 })),
        amount: `-${paid}`,
        name: br ? `PIX enviado ${String(payable.description)}` : `Payment ${String(payable.description)}`
      })
      yield* allocate(payables, payable.id, { financial_transaction_id: transaction.id, allocated_amount: paid })
    }
    return { id: tenant.id, name: tenant.name, country, records } satisfies DemoTenant
  })

/** `erp seed demo`: tenants one after another, each through core's services. */
/**
 * Statistics for what the seed wrote, taken at once: PostgreSQL plans by them, and autovacuum
 * (off on some servers, and late after a bulk load) may not have taken them yet. Without them
 * the planner knows no better index for a table it has never sampled, and a page of a large
 * tenant's sales orders looks up each order's receivables by scanning the tenant's.
 */
const analyzed = Effect.flatMap(SqlClient.SqlClient, (sql) => sql`ANALYZE`)

export const seedDemo = (options: DemoOptions) =>
  Effect.tap(Effect.forEach(Array.from({ length: options.tenants }, (_, index) => index), (index) => seedTenant(index, options)), analyzed)
