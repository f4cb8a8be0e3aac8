import { asOperator, parsePermissionSpecs, ResourceEngine, resources, Tenancy } from "@erp/core"
import { Effect, Result } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestHost, type TestHost, type TestTenant } from "../../../test/support/host.js"
import { storeKinds, testStore } from "../../../test/support/stores.js"

const grants = (...specs: Array<string>) => Result.getOrThrow(parsePermissionSpecs(specs))

interface Event {
  readonly id: string
  readonly type: string
  readonly resource: string
  readonly resource_id: string
  readonly action: string
  readonly tenant_id: string
  readonly created_at: string
}

/** The change feed: exactly one event per write of a subscribable resource, and nothing else. */
describe.each(storeKinds)("GET /events on %s", (kind) => {
  let host: TestHost
  let tenant: TestTenant

  const feed = async (query = "", token = tenant.token): Promise<ReadonlyArray<Event>> => {
    const response = await host.request("GET", `/events?limit=100${query}`, { token })
    expect(response.status, JSON.stringify(response.body)).toBe(200)
    return response.body.data
  }
  const write = async (method: string, path: string, body?: unknown) => {
    const response = await host.request(method, path, { token: tenant.token, body })
    expect(response.status, JSON.stringify(response.body)).toBeLessThan(300)
    return response.body
  }

  beforeAll(async () => {
    host = await startTestHost(testStore(kind))
    tenant = await host.createTenant("BR")
  })
  afterAll(() => host?.close())

  it("records one event per create, PATCH, DELETE and restore of products, customers and suppliers, newest last", async () => {
    const bodies = { products: { name: "Espresso" }, customers: { legal_name: "Padaria" }, suppliers: { legal_name: "Torrefação" } } as const
    const expected: Array<string> = []
    for (const [resource, body] of Object.entries(bodies)) {
      const created = await write("POST", `/${resource}`, body)
      await write("PATCH", `/${resource}/${created.id}`, { metadata: { step: 2 } })
      await write("DELETE", `/${resource}/${created.id}`)
      const resourceDefinition = resources.find((candidate) => candidate.name === resource)!
      await host.run(Effect.flatMap(Tenancy, (tenancy) => tenancy.getTenant(tenant.id)).pipe(
        Effect.flatMap((owner) => Effect.flatMap(ResourceEngine, (engine) => engine.restore(resourceDefinition, asOperator(owner, "test"), created.id)))
      ))
      expected.push(...["create", "update", "delete", "restore"].map((action) => `${resource}.${action} ${created.id}`))
    }
    const events = await feed()
    expect(events.map((event) => `${event.type} ${event.resource_id}`)).toEqual(expected)
    expect(events[0]).toEqual({
      id: expect.any(String),
      type: "products.create",
      resource: "products",
      resource_id: expect.any(String),
      action: "create",
      tenant_id: tenant.id,
      created_at: expect.stringMatching(/Z$/)
    })
  })

  it("records nothing for reads, keys, catalogs, no-op updates and refused writes", async () => {
    const before = (await feed()).length
    const created = await write("POST", "/products", { name: "Quiet" })
    await host.request("GET", `/products/${created.id}`, { token: tenant.token })
    await host.request("GET", "/products", { token: tenant.token })
    await host.request("GET", "/countries/76", { token: tenant.token })
    await host.createKey(tenant.id, grants("products:read"))
    await write("PATCH", `/products/${created.id}`, {})
    expect((await host.request("POST", "/products", { token: tenant.token, body: { name: "" } })).status).toBe(400)
    expect((await host.request("PATCH", `/products/${created.id}`, { token: tenant.token, body: { unit_of_measurement_id: "00000000-0000-4000-8000-000000000000" } })).status).toBe(422)
    expect((await host.request("DELETE", "/products/00000000-0000-4000-8000-000000000000", { token: tenant.token })).status).toBe(404)
    const events = await feed()
    expect(events.length - before).toBe(1)
    expect(events.at(-1)).toMatchObject({ type: "products.create", resource_id: created.id })
  })

  it("filters by type, resource, resource_id and created_at, and pages with cursors", async () => {
    const owner = await host.createTenant("BR")
    const ids: Array<string> = []
    for (let i = 0; i < 3; i++) ids.push((await host.request("POST", "/customers", { token: owner.token, body: { legal_name: `C${i}` } })).body.id)
    await host.request("PATCH", `/customers/${ids[1]}`, { token: owner.token, body: { trade_name: "x" } })
    expect((await feed("&type=customers.update", owner.token)).map((event) => event.resource_id)).toEqual([ids[1]])
    expect(await feed(`&resource=customers&resource_id=${ids[0]}`, owner.token)).toHaveLength(1)
    expect(await feed("&created_at[gte]=2000-01-01&action=create", owner.token)).toHaveLength(3)
    const first = await host.request("GET", "/events?limit=2", { token: owner.token })
    const second = await host.request("GET", `/events?limit=2&cursor=${encodeURIComponent(first.body.pagination.next_cursor)}`, { token: owner.token })
    expect([...first.body.data, ...second.body.data].map((event: Event) => event.type)).toEqual([
      "customers.create", "customers.create", "customers.create", "customers.update"
    ])
    expect(second.body.pagination.has_next_page).toBe(false)
  })

  it("needs events:read: a key without it gets 403, another tenant never sees the events", async () => {
    const { token } = await host.createKey(tenant.id, grants("products:*"))
    expect((await host.request("GET", "/events", { token })).status).toBe(403)
    const reader = await host.createKey(tenant.id, grants("events:read"))
    expect((await host.request("GET", "/events?limit=1", { token: reader.token })).status).toBe(200)
    const stranger = await host.createTenant("BR")
    expect(await feed("", stranger.token)).toEqual([])
    const event = (await feed())[0]
    expect((await host.request("GET", `/events/${event.id}`, { token: stranger.token })).status).toBe(404)
    expect((await host.request("GET", `/events/${event.id}`, { token: tenant.token })).body).toEqual(event)
    expect([404, 405]).toContain((await host.request("DELETE", `/events/${event.id}`, { token: tenant.token })).status)
  })
})
