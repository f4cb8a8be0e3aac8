/**
 * How much demo data a seed makes, apart from the code that makes it (the fake-data
 * library is loaded only when a seed runs, not for every command's help).
 */

/** Above this many orders per tenant, the rest of them are written in batched SQL. */
export const BULK_THRESHOLD = 2_000

/** How many records of each kind a tenant gets. */
export interface DemoCounts {
  readonly customers: number
  readonly suppliers: number
  readonly products: number
  readonly orders: number
  readonly payables: number
}

export const SCALES: Readonly<Record<"small" | "medium" | "large", DemoCounts>> = {
  small: { customers: 20, suppliers: 6, products: 25, orders: 20, payables: 12 },
  medium: { customers: 200, suppliers: 40, products: 250, orders: 400, payables: 200 },
  large: { customers: 2000, suppliers: 300, products: 2500, orders: 5000, payables: 2000 }
}

/** Orders per tenant that go through the whole chain (quote, order, invoice, receivable, payment) when the rest are bulk-written. */
export const CHAIN_ORDERS_IN_BULK = 200

/** How many orders of a tenant go through the services, and how many are written in batched SQL. */
export const orderSplit = (orders: number) =>
  orders > BULK_THRESHOLD ? { chain: CHAIN_ORDERS_IN_BULK, bulk: orders - CHAIN_ORDERS_IN_BULK } : { chain: orders, bulk: 0 }

/** About how many records a seed writes (for the progress bar): paid orders and settled payables add a transaction each. */
export const expectedRecords = (options: { readonly tenants: number; readonly counts: DemoCounts }) => {
  const { chain, bulk } = orderSplit(options.counts.orders)
  const perTenant = 5 + options.counts.customers + options.counts.suppliers + options.counts.products + chain * 4.7 + bulk + options.counts.payables * 1.7
  return Math.round(options.tenants * perTenant)
}

