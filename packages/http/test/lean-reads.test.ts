import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestHost, type TestHost, type TestTenant } from "../../../test/support/host.js"
import { storeKinds, testStore } from "../../../test/support/stores.js"

/**
 * `GET /<resource>/<id>` without a query string is answered around the router (`lean-reads.ts`);
 * with `?` (an empty query) the same request goes through it. Both must answer alike: status,
 * body and the fields a client reads, for every outcome a read of one record can have.
 */
describe.each(storeKinds)("reads of one record beside the router on %s", (kind) => {
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

  const answer = async (path: string, headers: Record<string, string>) => {
    const response = await fetch(host.url + path, { headers: { "x-request-id": "lean-check", ...headers } })
    return { status: response.status, body: await response.text(), headers: Object.fromEntries(COMPARED.map((name) => [name, response.headers.get(name)])) }
  }

  /** The lean answer and the router's, for the same request. */
  const both = async (path: string, headers: Record<string, string>) => {
    const lean = await answer(path, headers)
    const routed = await answer(`${path}?`, headers)
    expect(lean).toEqual(routed)
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
})
