/**
 * A typed client of the API in a few lines: `openapi-typescript` turns the OpenAPI document
 * into types (`npm run build` writes examples/generated/erp-api.d.ts from packages/http/openapi.json,
 * the document `/openapi.json` serves), and `openapi-fetch` makes calls whose paths, parameters,
 * bodies and answers are checked by the compiler. Point it at a running host:
 *
 *   npm run build && ERP_URL=http://localhost:3000 ERP_TOKEN=sk_… node examples/dist/typed-client.js
 */
import createClient from "openapi-fetch"
import type { components, paths } from "./generated/erp-api.js"

export type Customer = components["schemas"]["Customer"]
export type SalesOrder = components["schemas"]["SalesOrder"]

/** A client for one credential: every call carries `Authorization: Bearer <token>`. */
export const erpClient = (baseUrl: string, token: string) =>
  createClient<paths>({ baseUrl, headers: { authorization: `Bearer ${token}` } })

/** The spec's error body, as every 4xx and 5xx answers it (each status has its schema; they share these fields). */
type ErrorBody = Pick<components["schemas"]["BadRequest"], "message" | "code"> & { readonly status_code: number }

const fail = (what: string, error: ErrorBody | undefined): never => {
  throw new Error(`${what}: ${error ? `${error.status_code} ${error.code ?? ""} ${error.message}` : "no answer"}`)
}

/**
 * A customer, a product and a sales order of two items, then the order read back with the
 * full customer (`expand[]`), a filtered list, and a typed 404.
 */
export const placeOrder = async (baseUrl: string, token: string) => {
  const erp = erpClient(baseUrl, token)
  const customer = await erp.POST("/customers", { body: { legal_name: "Padaria Pão Quente Ltda", trade_name: "Pão Quente", website: "https://paoquente.example" } })
  if (!customer.data) return fail("create customer", customer.error)
  const product = await erp.POST("/products", { body: { name: "Espresso 1 kg", type: "goods", sale_price: "19.99" } })
  if (!product.data) return fail("create product", product.error)
  const created = await erp.POST("/sales-orders", {
    body: {
      customer_id: customer.data.id,
      items: [
        { product_id: product.data.id, item_description: "Espresso 1 kg", quantity: "3", unit_price: "19.99" },
        { item_description: "Delivery", quantity: "1", unit_price: "10" }
      ]
    }
  })
  if (!created.data) return fail("create sales order", created.error)
  const order = await erp.GET("/sales-orders/{id}", { params: { path: { id: created.data.id }, query: { "expand[]": ["customer"] } } })
  if (!order.data) return fail("get sales order", order.error)
  const listed = await erp.GET("/sales-orders", { params: { query: { limit: 10, sort: "record_number:desc" } } })
  if (!listed.data) return fail("list sales orders", listed.error)
  const missing = await erp.GET("/customers/{id}", { params: { path: { id: "00000000-0000-4000-8000-000000000000" } } })
  return {
    order: order.data,
    total: order.data.total,
    // With expand[]=customer this is the full record (the embed has four fields).
    customerWebsite: "website" in (order.data.customer ?? {}) ? (order.data.customer as Customer).website : undefined,
    listed: listed.data.data.length,
    notFound: missing.response.status === 404 ? missing.error?.code : undefined
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const url = process.env.ERP_URL ?? "http://localhost:3000"
  const token = process.env.ERP_TOKEN
  if (!token) {
    console.error("Set ERP_TOKEN to an API key (erp keys create --tenant T --name typed-client --all)")
    process.exitCode = 1
  } else {
    try {
      const result = await placeOrder(url, token)
      console.log(`sales order #${result.order.record_number}: total ${result.total}, customer website ${result.customerWebsite}, ${result.listed} listed, missing customer → ${result.notFound}`)
    } catch (error) {
      console.error(`Error: ${error instanceof Error ? error.message : String(error)}`)
      process.exitCode = 1
    }
  }
}
