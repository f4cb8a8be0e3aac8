import { Tenancy } from "@erp/core"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestHost, type TestHost, type TestTenant } from "../../../test/support/host.js"
import { statementCounter } from "../../../test/support/statements.js"
import { storeKinds, testStore } from "../../../test/support/stores.js"

/**
 * Round trips to the store per request once a key is warm: the key's authentication and its
 * last use are served from memory, a cursor page needs no second query for `has_previous_page`.
 */
describe.each(storeKinds)("statements per request on %s", (kind) => {
  const counter = statementCounter()
  let host: TestHost
  let tenant: TestTenant
  let productId: string

  beforeAll(async () => {
    host = await startTestHost(testStore(kind), { tracer: counter.tracer })
    tenant = await host.createTenant()
    for (let index = 0; index < 5; index++) {
      const created = await host.request("POST", "/products", { token: tenant.token, body: { name: `Counted ${index}` } })
      expect(created.status).toBe(201)
      productId = created.body.id
    }
  })
  afterAll(() => host?.close())

  const counted = async (path: string) => {
    counter.take()
    const response = await host.request("GET", path, { token: tenant.token })
    expect(response.status).toBe(200)
    return { body: response.body, statements: counter.take() }
  }

  it("an authenticated GET of one record runs one statement once the key is warm", async () => {
    await counted(`/products/${productId}`)
    const { statements } = await counted(`/products/${productId}`)
    expect(statements).toHaveLength(1)
    expect(statements[0]).toMatch(/^SELECT .* FROM products/)
  })

  it("a list page and a cursor page each run one statement", async () => {
    const first = await counted("/products?limit=2")
    const { body, statements } = await counted("/products?limit=2")
    expect(statements).toHaveLength(1)
    expect(body.pagination.has_previous_page).toBe(false)
    const next = await counted(`/products?limit=2&cursor=${encodeURIComponent(first.body.pagination.next_cursor)}`)
    expect(next.statements).toHaveLength(1)
    expect(next.body.pagination).toMatchObject({ has_previous_page: true, has_next_page: true })
  })

  it("a POST of a record without children or hooks is one statement: the INSERT records its event, no transaction", async () => {
    await counted(`/products/${productId}`)
    counter.take()
    const created = await host.request("POST", "/products", { token: tenant.token, body: { name: "Counted write", sale_price: "3.50" } })
    expect(created.status).toBe(201)
    const statements = counter.take()
    expect(statements).toHaveLength(1)
    expect(statements[0]).toMatch(/^WITH written AS \(INSERT INTO products AS r .* RETURNING r\.id, \(SELECT row_to_json\(j\) FROM \(SELECT r\.id AS "id".*\), event AS \(INSERT INTO events .*\), deliveries AS \(INSERT INTO webhook_deliveries .*\) SELECT \* FROM written$/)
    const read = await host.request("GET", `/products/${created.body.id}`, { token: tenant.token })
    expect(read.body).toEqual(created.body)
    const events = await host.request("GET", `/events?resource_id=${created.body.id}`, { token: tenant.token })
    expect(events.body.data.map((event: { type: string }) => event.type)).toEqual(["products.create"])
  })

  it("a PATCH of such a record is two statements: the read, then the UPDATE (unless changed since) with its event", async () => {
    counter.take()
    const updated = await host.request("PATCH", `/products/${productId}`, { token: tenant.token, body: { name: "Counted, renamed" } })
    expect(updated.status).toBe(200)
    expect(updated.body.name).toBe("Counted, renamed")
    const statements = counter.take()
    expect(statements).toHaveLength(2)
    expect(statements[0]).toMatch(/^SELECT .* FROM products r /)
    expect(statements[0]).not.toMatch(/FOR UPDATE/)
    expect(statements[1]).toMatch(/^WITH written AS \(UPDATE products AS r .* AND r\.updated_at = .* RETURNING r\.id, \(SELECT row_to_json\(j\) FROM \(SELECT r\.id AS "id".*\), event AS \(INSERT INTO events .*\) SELECT \* FROM written$/)
    const read = await host.request("GET", `/products/${productId}`, { token: tenant.token })
    expect(read.body).toEqual(updated.body)
    const events = await host.request("GET", `/events?resource_id=${productId}&action=update`, { token: tenant.token })
    expect(events.body.data.map((event: { type: string }) => event.type)).toEqual(["products.update"])
  })

  it("a PATCH that changes nothing reads the record and writes nothing", async () => {
    counter.take()
    const same = await host.request("PATCH", `/products/${productId}`, { token: tenant.token, body: { name: "Counted, renamed" } })
    expect(same.status).toBe(200)
    expect(counter.take()).toHaveLength(1)
  })

  it("the key's first request reads it from the store and records its use; the next ones do not", async () => {
    const { token } = await host.createKey(tenant.id, [{ resource_code: "products", can_read: true, can_create: false, can_update: false, can_delete: false }])
    counter.take()
    expect((await host.request("GET", `/products/${productId}`, { token })).status).toBe(200)
    const cold = counter.take()
    expect(cold.filter((text) => /FROM api_key_ids l JOIN api_keys k/.test(text))).toHaveLength(1)
    expect(cold.filter((text) => /^UPDATE api_keys SET last_used_at/.test(text))).toHaveLength(1)
    expect((await host.request("GET", `/products/${productId}`, { token })).status).toBe(200)
    expect(counter.take().filter((text) => /api_keys/.test(text))).toEqual([])
  })

  it("a tenant's new rate limit, set through the host's own services, applies to its warm keys at once", async () => {
    const other = await host.createTenant("BR", { defaultRateLimit: true })
    const before = await host.request("GET", "/products?limit=1", { token: other.token })
    expect(before.headers.get("ratelimit-limit")).toBe("6000")
    await host.run(Effect.flatMap(Tenancy, (tenancy) => tenancy.setRateLimit(other.id, 1_200)))
    const after = await host.request("GET", "/products?limit=1", { token: other.token })
    expect(after.headers.get("ratelimit-limit")).toBe("1200")
  })

  it("a key revoked through the host's own services is refused on its next request, though it was warm", async () => {
    const { key, token } = await host.createKey(tenant.id, [{ resource_code: "products", can_read: true, can_create: false, can_update: false, can_delete: false }])
    expect((await host.request("GET", `/products/${productId}`, { token })).status).toBe(200)
    await host.revokeKey(key.id)
    const refused = await host.request("GET", `/products/${productId}`, { token })
    expect(refused.status).toBe(401)
    expect(refused.body.message).toContain("revoked")
  })
})
