import { type Actor, type ChildDraft, type Draft, salesOrders } from "@erp/core"
import type { Faker } from "@faker-js/faker"
import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"

/** Orders per statement: large enough that round trips vanish, small enough to report progress and keep each statement short. */
export const BULK_CHUNK = 5_000

const isPowerOfTwo = (value: number) => Number.isInteger(value) && value > 0 && (value & (value - 1)) === 0

export interface BulkProduct {
  readonly id: string
  readonly name: string
  readonly price: string
}

export interface BulkOrders {
  readonly tenantId: string
  readonly actor: Actor
  readonly faker: Faker
  readonly customers: ReadonlyArray<{ readonly id: string }>
  readonly catalog: ReadonlyArray<BulkProduct>
  readonly count: number
  readonly date: () => string
  readonly onBatch: (orders: number, items: number) => void
}

interface OrderRow {
  readonly id: string
  readonly status: string
  readonly orderDate: string
  readonly customerId: string
  readonly amounts: Record<string, unknown>
  readonly items: ReadonlyArray<{ readonly id: string; readonly product: BulkProduct; readonly quantity: string; readonly subtotal: unknown; readonly total: unknown; readonly repeats: unknown }>
}

/** The values the declaration's own `compute` gives an order of these items: the same totals as a create through the API. */
const computed = (items: ReadonlyArray<{ product: BulkProduct; quantity: string }>) => {
  const children: ReadonlyArray<ChildDraft> = items.map((item) => ({
    id: undefined,
    current: undefined,
    values: { product_id: item.product.id, quantity: item.quantity, unit_price: item.product.price, discount_amount: "0" }
  }))
  const draft: Draft = { operation: "create", current: undefined, input: {}, values: { discount_amount: null, discount_rate: null }, children: { items: children } }
  return salesOrders.compute!(draft)
}

/** `count` different products: a few draws, where `arrayElements` would shuffle the whole catalog for every order. */
const pickProducts = (faker: Faker, catalog: ReadonlyArray<BulkProduct>, count: number) => {
  const chosen = new Set<number>()
  while (chosen.size < count) chosen.add(faker.number.int({ min: 0, max: catalog.length - 1 }))
  return [...chosen].map((index) => catalog[index])
}

const makeOrder = (options: BulkOrders): OrderRow => {
  const { faker } = options
  const picked = pickProducts(faker, options.catalog, faker.number.int({ min: 1, max: Math.min(4, options.catalog.length) }))
  const items = picked.map((product) => ({ product, quantity: String(faker.number.int({ min: 1, max: 20 })) }))
  const { values = {}, children = {} } = computed(items)
  return {
    id: faker.string.uuid(),
    status: faker.helpers.weightedArrayElement([{ weight: 8, value: "confirmed" }, { weight: 2, value: "draft" }]),
    orderDate: options.date(),
    customerId: faker.helpers.arrayElement(options.customers).id,
    amounts: values,
    items: items.map((item, index) => ({ id: faker.string.uuid(), ...item, subtotal: children.items?.[index]?.subtotal, total: children.items?.[index]?.total, repeats: children.items?.[index]?.repeats_product }))
  }
}

/**
 * Sales orders with their items as a create through the API writes them (numbers from the
 * tenant's gapless sequence, totals from the declaration's `compute`, one
 * `sales-orders.create` event each), `BULK_CHUNK` orders in one transaction of three
 * array-parameter statements instead of a dozen statements per order.
 */
export const writeBulkOrders = (options: BulkOrders) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    for (let done = 0; done < options.count; ) {
      const size = Math.min(BULK_CHUNK, options.count - done)
      const orders = Array.from({ length: size }, () => makeOrder(options))
      const items = orders.flatMap((order) => order.items.map((item, position) => ({ order, item, position })))
      yield* sql.withTransaction(Effect.gen(function* () {
        // A chunk of this size may rightly run longer than a request's statement limit.
        yield* sql`SET LOCAL statement_timeout = 0`
        const [reserved] = yield* sql<{ last: number }>`INSERT INTO record_sequences (tenant_id, name, last_value)
          VALUES (${options.tenantId}::uuid, ${salesOrders.name}, ${size})
          ON CONFLICT (tenant_id, name) DO UPDATE SET last_value = record_sequences.last_value + ${size}
          RETURNING last_value AS last`
        const first = Number(reserved.last) - size + 1
        yield* sql.unsafe(
          `INSERT INTO sales_orders (tenant_id, id, record_number, status, order_date, customer_id, operation_type, product_type,
             subtotal, items_discount, total_discount, total, items_quantity)
           SELECT $1::uuid, o.id, $2::int + o.n::int - 1, o.status, o.order_date, o.customer_id, 'sale', 'goods', o.subtotal, o.items_discount, o.total_discount, o.total, o.items_quantity
           FROM unnest($3::uuid[], $4::text[], $5::date[], $6::uuid[], $7::numeric[], $8::numeric[], $9::numeric[], $10::numeric[], $11::numeric[])
             WITH ORDINALITY AS o(id, status, order_date, customer_id, subtotal, items_discount, total_discount, total, items_quantity, n)`,
          [
            options.tenantId,
            first,
            orders.map((order) => order.id),
            orders.map((order) => order.status),
            orders.map((order) => order.orderDate),
            orders.map((order) => order.customerId),
            orders.map((order) => String(order.amounts.subtotal)),
            orders.map((order) => String(order.amounts.items_discount)),
            orders.map((order) => String(order.amounts.total_discount)),
            orders.map((order) => String(order.amounts.total)),
            orders.map((order) => String(order.amounts.items_quantity))
          ]
        )
        yield* sql.unsafe(
          `INSERT INTO sales_order_items (tenant_id, sales_order_id, id, product_id, item_description, quantity, unit_price, discount_amount, subtotal, total, position, repeats_product)
           SELECT $1::uuid, i.order_id, i.id, i.product_id, i.description, i.quantity, i.unit_price, 0, i.subtotal, i.total, i.position, i.repeats_product
           FROM unnest($2::uuid[], $3::uuid[], $4::uuid[], $5::text[], $6::numeric[], $7::numeric[], $8::numeric[], $9::numeric[], $10::int[], $11::boolean[])
             AS i(order_id, id, product_id, description, quantity, unit_price, subtotal, total, position, repeats_product)`,
          [
            options.tenantId,
            items.map(({ order }) => order.id),
            items.map(({ item }) => item.id),
            items.map(({ item }) => item.product.id),
            items.map(({ item }) => item.product.name),
            items.map(({ item }) => item.quantity),
            items.map(({ item }) => item.product.price),
            items.map(({ item }) => String(item.subtotal)),
            items.map(({ item }) => String(item.total)),
            items.map(({ position }) => position),
            items.map(({ item }) => item.repeats === true)
          ]
        )
        yield* sql.unsafe(
          `INSERT INTO events (tenant_id, type, resource, resource_id, action, actor_kind, actor_id)
           SELECT $1::uuid, $2, $3, o.id, 'create', $4, $5 FROM unnest($6::text[]) AS o(id)`,
          [options.tenantId, `${salesOrders.name}.create`, salesOrders.name, options.actor.kind, options.actor.id, orders.map((order) => order.id)]
        )
      }))
      done += size
      options.onBatch(size, items.length)
      // The foreign-key checks' plans follow the tables' statistics: taken while the tables were
      // nearly empty, they scan instead of seeking, and each chunk costs more than the last.
      if (isPowerOfTwo(done / BULK_CHUNK)) yield* sql`ANALYZE sales_orders, sales_order_items, products, customers`
    }
  })
