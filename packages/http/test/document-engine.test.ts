import { OpenApi } from "effect/http-api"
import { SqlClient } from "effect/sql"
import { allResources } from "@erp/core"
import { makeApi } from "@erp/http"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { FIXTURE_TABLES, testOrders } from "../../../test/support/fixture-orders.js"
import { startTestHost, type TestHost, type TestTenant } from "../../../test/support/host.js"
import { storeKinds, testStore } from "../../../test/support/stores.js"

/**
 * The document engine end to end, through a resource declared only for tests:
 * its routes, its action and its constraint errors come from the declaration
 * alone, as every business document's will.
 */
describe.each(storeKinds)("document engine over HTTP on %s", (kind) => {
  let host: TestHost
  let tenant: TestTenant

  beforeAll(async () => {
    host = await startTestHost(testStore(kind), { resources: [...allResources, testOrders] })
    await host.run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(FIXTURE_TABLES)))
    tenant = await host.createTenant("BR")
  })
  afterAll(() => host?.close())

  const post = (body: unknown) => host.request("POST", "/test-orders", { token: tenant.token, body })

  it("creates a document with items, totals and a record number, and reads it back", async () => {
    const created = await post({ items: [{ description: "Widget", quantity: "2", unit_price: "10.25" }] })
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    expect(created.body).toMatchObject({ status: "draft", total: "20.500000", items: [{ description: "Widget", subtotal: "20.500000", position: 0 }] })
    expect((await host.request("GET", `/test-orders/${created.body.id}`, { token: tenant.token })).body).toEqual(created.body)
  })

  it("answers 422 naming the field for a foreign key the store refuses, 409 for a duplicate, 400 for a computed field", async () => {
    const foreign = await post({ product_ref: "00000000-0000-4000-8000-00000000abcd" })
    expect(foreign.status).toBe(422)
    expect(foreign.body).toMatchObject({ status_code: 422, code: "REFERENCE_NOT_FOUND", details: { fields: { product_ref: [expect.any(String)] } } })
    expect((await post({ code: "ONCE" })).status).toBe(201)
    expect((await post({ code: "ONCE" })).status).toBe(409)
    const computed = await post({ total: "1" })
    expect(computed.status).toBe(400)
    expect(computed.body.details.fields).toEqual({ total: ["is read-only: the server sets it"] })
  })

  it("serves a declared action as POST /<resource>/{id}/<action>, with its own body and answer", async () => {
    const created = await post({ items: [] })
    const path = `/test-orders/${created.body.id}/cancel`
    expect((await host.request("POST", path, { token: tenant.token, body: {} })).status).toBe(400)
    const cancelled = await host.request("POST", path, { token: tenant.token, body: { reason: "no stock" } })
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200)
    expect(cancelled.body).toEqual({ id: created.body.id, status: "cancelled", notes: "no stock" })
    expect((await host.request("POST", path, { token: tenant.token, body: { reason: "again" } })).status).toBe(422)
    const stranger = await host.createTenant("BR")
    expect((await host.request("POST", path, { token: stranger.token, body: { reason: "x" } })).status).toBe(404)
    const events = await host.request("GET", `/events?resource_id=${created.body.id}`, { token: tenant.token })
    expect(events.body.data.map((event: { type: string }) => event.type)).toEqual(["test-orders.create", "test-orders.update"])
  })

  it("documents the action in OpenAPI from the declaration", () => {
    const spec = OpenApi.fromApi(makeApi([testOrders]))
    const operation = spec.paths["/test-orders/{id}/cancel"]?.post
    expect(operation?.summary).toBe("Cancel a test order")
    expect(Object.keys(operation?.responses ?? {})).toEqual(expect.arrayContaining(["200", "400", "404", "422"]))
  })
})
