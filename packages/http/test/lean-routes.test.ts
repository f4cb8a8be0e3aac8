import { createFetchHandler } from "@erp/http"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestHost, type TestHost, type TestTenant } from "../../../test/support/host.js"
import { storeKinds, testStore } from "../../../test/support/stores.js"

/**
 * `GET /<resource>/<id>`, `POST /<resource>` and `PATCH /<resource>/<id>` without a query string
 * are answered around the router (`lean-routes.ts`): by the Node server before the platform sees
 * them (`node-direct.ts`), by the fetch handler beside the router. With `?` (an empty query) the
 * same request goes through the router. All must answer alike: status, body and the fields a
 * client reads, for every outcome such a request can have.
 */
describe.each(storeKinds)("the most frequent requests beside the router on %s", (kind) => {
  let host: TestHost
  let tenant: TestTenant
  let other: TestTenant
  let productId: string
  let otherProductId: string
  let countryId: string

  beforeAll(async () => {
    host = await startTestHost(testStore(kind))
    tenant = await host.createTenant()
    other = await host.createTenant()
    productId = (await host.request("POST", "/products", { token: tenant.token, body: { name: "Lean read", sale_price: "9.90", tags: ["a"] } })).body.id
    otherProductId = (await host.request("POST", "/products", { token: other.token, body: { name: "Not yours" } })).body.id
    countryId = String((await host.request("GET", "/countries?limit=1", { token: tenant.token })).body.data[0].id)
  })
  afterAll(() => host?.close())

  const COMPARED = ["content-type", "etag", "www-authenticate", "retry-after", "ratelimit-limit", "api-version", "x-request-id"]

  const answer = async (path: string, headers: Record<string, string>, method = "GET", body?: string) => {
    const response = await fetch(host.url + path, {
      method,
      headers: { "x-request-id": "lean-check", ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
      ...(body === undefined ? {} : { body })
    })
    return { status: response.status, body: await response.text(), headers: Object.fromEntries(COMPARED.map((name) => [name, response.headers.get(name)])) }
  }

  /** The lean answer and the router's, for the same request. */
  const both = async (path: string, headers: Record<string, string>, method = "GET", body?: string) => {
    const lean = await answer(path, headers, method, body)
    const routed = await answer(`${path}?`, headers, method, body)
    expect(lean).toEqual(routed)
    return lean
  }

  /** A write's answers: alike but for what each write makes anew (id, times, the ETag of its record). */
  const bothWrites = async (path: string, headers: Record<string, string>, method: string, body: string) => {
    const comparable = ({ status, body: text, headers: fields }: Awaited<ReturnType<typeof answer>>) => {
      const parsed = text ? JSON.parse(text) : undefined
      const { id: _id, created_at: _created, updated_at: _updated, ...rest } = parsed ?? {}
      return { status, body: status < 300 ? rest : parsed, headers: { ...fields, etag: fields.etag === null ? null : "present" } }
    }
    const lean = await answer(path, headers, method, body)
    const routed = await answer(`${path}?`, headers, method, body)
    expect(comparable(lean)).toEqual(comparable(routed))
    return lean
  }

  const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

  it("answers a record, its ETag and a 304 for If-None-Match as the router does", async () => {
    const found = await both(`/products/${productId}`, bearer(tenant.token))
    expect(found.status).toBe(200)
    expect(JSON.parse(found.body)).toMatchObject({ id: productId, name: "Lean read", sale_price: "9.900000" })
    expect(found.headers["x-request-id"]).toBe("lean-check")
    expect(found.headers["ratelimit-limit"]).not.toBeNull()
    const unchanged = await both(`/products/${productId}`, { ...bearer(tenant.token), "if-none-match": found.headers.etag! })
    expect(unchanged.status).toBe(304)
    expect((await both(`/products/${productId}`, { ...bearer(tenant.token), "if-none-match": "not a tag" })).status).toBe(400)
  })

  it("answers the same errors: missing, another tenant's, malformed ids, integer ids", async () => {
    expect((await both(`/products/${randomUUID()}`, bearer(tenant.token))).status).toBe(404)
    expect((await both(`/products/${otherProductId}`, bearer(tenant.token))).status).toBe(404)
    expect((await both("/products/not-a-uuid", bearer(tenant.token))).status).toBe(400)
    expect((await both(`/countries/${countryId}`, bearer(tenant.token))).status).toBe(200)
    expect((await both("/countries/abc", bearer(tenant.token))).status).toBe(400)
  })

  it("answers the same refusals: no permission, bad or missing credentials, the credential's limit", async () => {
    const readsCustomers = await host.createKey(tenant.id, [{ resource_code: "customers", can_read: true, can_create: false, can_update: false, can_delete: false }])
    expect((await both(`/products/${productId}`, bearer(readsCustomers.token))).status).toBe(403)
    const wrong = await both(`/products/${productId}`, bearer("sk_nothing_here"))
    expect(wrong.status).toBe(401)
    expect(wrong.headers["www-authenticate"]).toMatch(/^Bearer /)
    expect((await both(`/products/${productId}`, {})).status).toBe(401)
    const limited = await host.createKey(tenant.id, [{ resource_code: "*", can_read: true, can_create: false, can_update: false, can_delete: false }], { rateLimitPerMinute: 2 })
    const statuses: Array<number> = []
    for (let index = 0; index < 3; index++) statuses.push((await answer(`/products/${productId}`, bearer(limited.token))).status)
    expect(statuses).toEqual([200, 200, 429])
    const refused = await answer(`/products/${productId}`, bearer(limited.token))
    const refusedRouted = await answer(`/products/${productId}?`, bearer(limited.token))
    expect(refused.status).toBe(429)
    expect(refused.headers["retry-after"]).not.toBeNull()
    expect({ ...refused, headers: { ...refused.headers, "retry-after": null }, body: JSON.parse(refused.body).code }).toEqual({
      ...refusedRouted,
      headers: { ...refusedRouted.headers, "retry-after": null },
      body: JSON.parse(refusedRouted.body).code
    })
  })

  it("creates and updates as the router does, refusals included", async () => {
    const created = await bothWrites("/products", bearer(tenant.token), "POST", JSON.stringify({ name: "Lean create", sale_price: "1.50" }))
    expect(created.status).toBe(201)
    expect((await bothWrites("/products", bearer(tenant.token), "POST", JSON.stringify({ name: "x", id: randomUUID() }))).status).toBe(400)
    expect((await bothWrites("/products", bearer(tenant.token), "POST", "{not json")).status).toBe(400)
    expect((await bothWrites("/products", bearer(tenant.token), "POST", JSON.stringify({ name: "x", unit_of_measurement_id: randomUUID() }))).status).toBe(422)
    const id = JSON.parse(created.body).id
    const updated = await bothWrites(`/products/${id}`, bearer(tenant.token), "PATCH", JSON.stringify({ sale_price: "2.00" }))
    expect(updated.status).toBe(200)
    expect(JSON.parse(updated.body).sale_price).toBe("2.000000")
    expect((await bothWrites(`/products/${id}`, { ...bearer(tenant.token), "if-match": "\"stale\"" }, "PATCH", JSON.stringify({ name: "y" }))).status).toBe(412)
    expect((await bothWrites(`/products/${randomUUID()}`, bearer(tenant.token), "PATCH", JSON.stringify({ name: "y" }))).status).toBe(404)
    expect((await bothWrites(`/products/${otherProductId}`, bearer(tenant.token), "PATCH", JSON.stringify({ name: "y" }))).status).toBe(404)
    const readOnly = await host.createKey(tenant.id, [{ resource_code: "*", can_read: true, can_create: false, can_update: false, can_delete: false }])
    expect((await bothWrites("/products", bearer(readOnly.token), "POST", JSON.stringify({ name: "z" }))).status).toBe(403)
    expect((await bothWrites("/products", bearer("sk_nothing_here"), "POST", JSON.stringify({ name: "z" }))).status).toBe(401)
  })

  it("refuses an api-version it does not serve as the router does", async () => {
    const refused = await both(`/products/${productId}`, { ...bearer(tenant.token), "api-version": "1999-01-01" })
    expect(refused.status).toBe(400)
    expect(JSON.parse(refused.body).code).toBe("INVALID_API_VERSION")
  })

  it("answers alike through the fetch handler, beside its router", async () => {
    const erp = await createFetchHandler({ store: testStore(kind), webhooks: false })
    try {
      const created = await erp.tenants.create({ name: `Embedded ${randomUUID().slice(0, 8)}`, countryCode: "BR" })
      const { token } = await erp.keys.create({ tenantId: created.id, name: "embedded", permissions: "all" })
      const send = async (method: string, path: string, body?: unknown) => {
        const response = await erp.handler(new Request(`http://app.example${path}`, {
          method,
          headers: { ...bearer(token), "x-request-id": "lean-check", ...(body === undefined ? {} : { "content-type": "application/json" }) },
          ...(body === undefined ? {} : { body: JSON.stringify(body) })
        }))
        return { status: response.status, body: await response.text(), headers: Object.fromEntries(COMPARED.map((name) => [name, response.headers.get(name)])) }
      }
      const made = await send("POST", "/products", { name: "Embedded", sale_price: "3.00" })
      expect(made.status).toBe(201)
      const id = JSON.parse(made.body).id
      const lean = await send("GET", `/products/${id}`)
      expect(lean.status).toBe(200)
      expect(lean.headers.etag).toBe(made.headers.etag)
      expect(lean).toEqual(await send("GET", `/products/${id}?`))
      expect((await send("PATCH", `/products/${id}`, { sale_price: "4.00" })).status).toBe(200)
      expect((await send("GET", `/products/${randomUUID()}`)).status).toBe(404)
    } finally {
      await erp.dispose()
    }
  })
})
