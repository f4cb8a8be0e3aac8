import { allResources, type AnyResource, publicResources } from "@erp/core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { exampleBody } from "../../../../test/support/examples.js"
import { hostileRoutes } from "../../../../test/support/hostile.js"
import { startTestHost, type TestHost, type TestTenant } from "../../../../test/support/host.js"
import { adminAccessToken } from "../../../../test/support/oauth.js"
import { storeKinds, testStore } from "../../../../test/support/stores.js"

/**
 * The cross-tenant sweep (issue 8): every route of the OpenAPI document, called by one tenant
 * with another tenant's ids in paths, bodies, filters and cursors. Records come from each
 * resource's declared example, so a resource added later is swept without a line changed here.
 */
describe.each(storeKinds)("cross-tenant sweep on %s", (kind) => {
  let host: TestHost
  let owner: TestTenant
  let intruder: TestTenant
  /** The owner's records by resource, as created. */
  const owned = new Map<string, Array<Record<string, unknown>>>()
  /** Values only the owner's data has: ids, unique keys, cursors. */
  const secrets = new Set<string>()
  const cursors = new Map<string, string>()

  const writable = publicResources(allResources).filter((resource) => resource.write)

  const createAs = (tenant: TestTenant, remember: boolean) => async (resource: AnyResource, body: Record<string, unknown>): Promise<{ id: string }> => {
    const answer = await host.request("POST", `/${resource.name}`, { token: tenant.token, body })
    if (answer.status !== 201) throw new Error(`${resource.name}: ${answer.status} ${JSON.stringify(answer.body)}`)
    const records = (answer.body.data ?? [answer.body]) as Array<Record<string, unknown>>
    if (remember) {
      for (const record of records) {
        ;(owned.get(resource.name) ?? owned.set(resource.name, []).get(resource.name)!).push(record)
        secrets.add(String(record.id))
      }
      for (const field of resource.write?.exampleUnique ?? []) secrets.add(String(body[field]))
    }
    return records[0] as { id: string }
  }

  beforeAll(async () => {
    host = await startTestHost(testStore(kind))
    // Admin users' tokens: every resource a role reaches is swept, not just refused.
    const asAdmin = async (tenant: TestTenant): Promise<TestTenant> => ({ ...tenant, token: await adminAccessToken(host, tenant.id) })
    owner = await asAdmin(await host.createTenant())
    intruder = await asAdmin(await host.createTenant())
    // Two records of each resource (so lists have a next page and a cursor), and the intruder's own.
    for (const resource of writable) {
      for (let copy = 0; copy < 2; copy++) await createAs(owner, true)(resource, await exampleBody(resource, createAs(owner, true)))
      await createAs(intruder, false)(resource, await exampleBody(resource, createAs(intruder, false)))
    }
    for (const resource of publicResources(allResources)) {
      const page = await host.request("GET", `/${resource.name}?limit=1`, { token: owner.token })
      const cursor = page.body?.pagination?.next_cursor
      if (typeof cursor === "string") cursors.set(resource.name, cursor)
    }
  }, 180_000)
  afterAll(() => host?.close())

  it("leaks nothing of another tenant through any route, and changes none of its records", async () => {
    const leaks: Array<string> = []
    const refused: Record<number, number> = {}
    let requests = 0
    const ownerIds = [...owned.values()].flat().map((record) => String(record.id))
    const idsOf = (resource: AnyResource | undefined) => (resource ? owned.get(resource.name) ?? [] : []).map((record) => String(record.id))

    const send = async (method: string, path: string, body?: unknown, contentType?: string) => {
      requests++
      const response = await fetch(host.url + path, {
        method,
        headers: { authorization: `Bearer ${intruder.token}`, ...(body !== undefined ? { "content-type": contentType ?? "application/json" } : {}) },
        ...(body !== undefined ? { body: typeof body === "string" ? body : JSON.stringify(body) } : {})
      })
      const text = await response.text()
      refused[response.status] = (refused[response.status] ?? 0) + 1
      // A list echoes the filters sent (`meta`) and positions (`pagination`): what the caller sent is not a leak.
      // Anything else of a success, and anything an error says beyond the request, is.
      const sent = `${path} ${typeof body === "string" ? body : JSON.stringify(body ?? null)}`
      let shown = text
      if (response.status < 300 && text.startsWith("{")) {
        const { meta: _meta, pagination: _pagination, ...rest } = JSON.parse(text) as Record<string, unknown>
        shown = JSON.stringify(rest)
      }
      const seen = [...secrets].filter((secret) => shown.includes(secret) && (response.status < 300 || !sent.includes(secret)))
      if (seen.length > 0) leaks.push(`${method} ${path} -> ${response.status} shows ${seen.join(", ")}`)
      if (response.status >= 500) leaks.push(`${method} ${path} -> ${response.status}: ${text.slice(0, 200)}`)
      return { status: response.status, text }
    }

    for (const route of hostileRoutes().filter((candidate) => candidate.resource)) {
      const resource = route.resource!
      const targets = route.pathParams.length === 0 ? [route.template] : (idsOf(resource).length > 0 ? idsOf(resource) : ownerIds.slice(0, 3)).map((id) =>
        route.pathParams.reduce((path, name, index) => path.replace(`{${name}}`, index === 0 ? id : ownerIds[0]), route.template))
      for (const path of targets) {
        if (route.method === "GET") {
          await send("GET", path)
          if (route.pathParams.length === 0) {
            // Filters naming the owner's ids, on every filterable id field; the owner's cursor.
            for (const [field, spec] of Object.entries(resource.filters).filter(([, spec]) => spec.type === "uuid")) {
              for (const id of ownerIds.slice(0, 5)) {
                await send("GET", `${path}?${field}=${id}`)
                await send("GET", `${path}?filter=${encodeURIComponent(JSON.stringify({ f: field, op: spec.type === "uuid" ? "eq" : "eq", v: id }))}`)
              }
            }
            const cursor = cursors.get(resource.name)
            // A cursor carries a position, not a tenant: another tenant's walks its own records from there (or 400).
            if (cursor) expect([200, 400]).toContain((await send("GET", `${path}?cursor=${encodeURIComponent(cursor)}&limit=1`)).status)
          }
        } else if (route.method === "DELETE") {
          expect([400, 404], `DELETE ${path}`).toContain((await send("DELETE", path)).status)
        } else if (route.bodyType === "application/json" && resource.write) {
          // The intruder's own valid body, with every reference pointing at the owner's records.
          const body: Record<string, unknown> = { ...(resource.write.example as Record<string, unknown>) }
          for (const field of resource.write.exampleUnique ?? []) body[field] = crypto.randomUUID()
          const references = Object.entries(resource.fields).filter(([, field]) => (field as { reference?: unknown }).reference)
          for (const [name, field] of references) {
            const target = (field as { reference: { resource: () => AnyResource } }).reference.resource()
            const theirs = idsOf(target)[0]
            if (theirs) body[name] = theirs
          }
          const answer = await send(route.method, path, route.template.endsWith("}") || route.pathParams.length === 0 ? body : {})
          if (route.pathParams.length > 0) expect([400, 404, 422], `${route.method} ${path}`).toContain(answer.status)
          else if (references.some(([name]) => body[name] !== undefined && idsOf((resource.fields[name] as { reference: { resource: () => AnyResource } }).reference.resource()).includes(String(body[name])))) {
            expect([400, 422], `${route.method} ${path} with the owner's references`).toContain(answer.status)
          }
        } else {
          await send(route.method, path, route.bodyType === "application/json" ? {} : route.bodyType ? "x" : undefined, route.bodyType)
        }
      }
    }

    // The owner's records are as they were: nothing the intruder sent changed or deleted one.
    for (const [name, records] of owned) {
      for (const record of records) {
        const now = await host.request("GET", `/${name}/${String(record.id)}`, { token: owner.token })
        expect(now.status, `${name} ${String(record.id)}`).toBe(200)
        expect(now.body.updated_at ?? null, `${name} ${String(record.id)}`).toBe(record.updated_at ?? null)
      }
    }
    console.log(`cross-tenant (${kind}): ${requests} requests, ${ownerIds.length} records of ${owned.size} resources, statuses ${JSON.stringify(refused)}`)
    expect(leaks).toEqual([])
    expect(requests).toBeGreaterThan(100)
  }, 600_000)
})
