import { type AnyResource, parsePermissionSpecs, publicResources, resources as registry } from "@erp/core"

/** What REST serves (panel-only resources have no route). */
const resources = publicResources(registry)
import { Result, Schema } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestHost, type TestHost, type TestTenant } from "../../../test/support/host.js"
import { exampleBody } from "../../../test/support/examples.js"
import { storeKinds, testStore } from "../../../test/support/stores.js"

const grants = (...specs: Array<string>) => Result.getOrThrow(parsePermissionSpecs(specs))
const MISSING = "00000000-0000-4000-8000-000000000000"

/** The same promises for every declared resource, driven by the registry. */
describe.each(storeKinds)("resource contract on %s", (kind) => {
  let host: TestHost
  let owner: TestTenant
  let stranger: TestTenant

  beforeAll(async () => {
    host = await startTestHost(testStore(kind))
    owner = await host.createTenant("BR")
    stranger = await host.createTenant("BR")
  })
  afterAll(() => host?.close())

  describe.each(resources.map((resource) => [resource.name, resource] as const))("%s", (name, resource: AnyResource) => {
    const post = async (target: AnyResource, token: string, body: Record<string, unknown>) => {
      const response = await host.request("POST", `/${target.name}`, { token, body })
      expect(response.status, JSON.stringify(response.body)).toBe(201)
      return response.body as { id: string }
    }
    const create = async (token: string) =>
      post(resource, token, await exampleBody(resource, (target, body) => post(target, token, body)))

    it("lists with the spec's envelope and the declared default sort", async () => {
      const response = await host.request("GET", `/${name}`, { token: owner.token })
      expect(response.status).toBe(200)
      expect(Object.keys(response.body).sort()).toEqual(["data", "meta", "pagination"])
      expect(Object.keys(response.body.pagination).sort()).toEqual(
        ["current_page_cursor", "current_query_cursor", "has_next_page", "has_previous_page", "limit", "next_cursor", "previous_cursor"]
      )
      expect(response.body.meta.sort).toEqual(resource.defaultSort)
    })

    it("creates from the declared example, answers 201 and reads it back", async () => {
      const record = await create(owner.token)
      const fetched = await host.request("GET", `/${name}/${record.id}`, { token: owner.token })
      expect(fetched.status).toBe(200)
      expect(fetched.body).toEqual(record)
    })

    it("tags the record alike whichever path answers it: create, read, a conditional update, its read", async () => {
      const body = await exampleBody(resource, (target, body) => post(target, owner.token, body))
      const created = await host.request("POST", `/${name}`, { token: owner.token, body })
      expect(created.status, JSON.stringify(created.body)).toBe(201)
      const path = `/${name}/${created.body.id}`
      const tag = created.headers.get("etag")!
      expect(tag).toMatch(/^"[\w-]{32}"$/)
      expect((await host.request("GET", path, { token: owner.token })).headers.get("etag")).toBe(tag)
      expect((await host.request("GET", path, { token: owner.token, headers: { "if-none-match": tag } })).status).toBe(304)
      const change = "metadata" in resource.fields ? { metadata: { tagged: true } } : {}
      const updated = await host.request("PATCH", path, { token: owner.token, body: change, headers: { "if-match": tag } })
      expect(updated.status, JSON.stringify(updated.body)).toBe(200)
      const read = await host.request("GET", path, { token: owner.token })
      expect(read.headers.get("etag")).toBe(updated.headers.get("etag"))
      if ("metadata" in resource.fields) {
        expect(read.headers.get("etag")).not.toBe(tag)
        expect((await host.request("PATCH", path, { token: owner.token, body: change, headers: { "if-match": tag } })).status).toBe(412)
      }
    })

    it("answers records that match the declared record schema exactly", async () => {
      await create(owner.token)
      const list = await host.request("GET", `/${name}?limit=5`, { token: owner.token })
      for (const record of list.body.data) {
        expect(() => Schema.decodeUnknownSync(resource.record, { onExcessProperty: "error" })(record)).not.toThrow()
      }
    })

    it("filters by every scalar field it answers, and the record's own value finds it", async () => {
      const record = (await create(owner.token)) as unknown as Record<string, unknown>
      const storedScalar = (field: string) => resource.columns[field] !== undefined && resource.columns[field] !== "jsonb"
      const scalar = Object.entries(record).filter(([field, value]) => (value === null ? storedScalar(field) : ["string", "number", "boolean"].includes(typeof value)))
      for (const [field, value] of scalar) {
        const filter = resource.filters[field]
        expect(filter, `${name}.${field} is not filterable`).toBeDefined()
        if (value === null) continue
        // An answered datetime is the stored one cut to milliseconds: the stored one is at or after it.
        const condition = filter.type === "datetime" ? `${field}[gte]=${encodeURIComponent(String(value))}` : `${field}=${encodeURIComponent(String(value))}`
        const list = await host.request("GET", `/${name}?${condition}&id=${record.id}`, { token: owner.token })
        expect(list.status, `${condition}: ${JSON.stringify(list.body)}`).toBe(200)
        expect(list.body.data.map((row: { id: string }) => row.id), condition).toEqual([record.id])
      }
    })

    it("hides another tenant's record behind 404 on every operation", async () => {
      const record = await create(owner.token)
      for (const [method, body] of [["GET"], ["PATCH", {}], ["DELETE"]] as const) {
        const response = await host.request(method, `/${name}/${record.id}`, { token: stranger.token, body })
        expect(response.status, method).toBe(404)
        expect(response.body).toMatchObject({ status_code: 404, error: "Not Found", code: resource.notFoundCode })
      }
      const list = await host.request("GET", `/${name}?id=${record.id}`, { token: stranger.token })
      expect(list.body.data).toEqual([])
      expect((await host.request("GET", `/${name}/${record.id}`, { token: owner.token })).status).toBe(200)
    })

    it("lets a read-only key read and refuses its writes with 403, changing nothing", async () => {
      const record = await create(owner.token)
      const { token } = await host.createKey(owner.id, grants(`${name}:read`))
      expect((await host.request("GET", `/${name}`, { token })).status).toBe(200)
      expect((await host.request("GET", `/${name}/${record.id}`, { token })).status).toBe(200)
      for (const [method, path, body] of [
        ["POST", `/${name}`, await exampleBody(resource, (target, body) => post(target, owner.token, body))],
        ["PATCH", `/${name}/${record.id}`, { metadata: { touched: true } }],
        ["DELETE", `/${name}/${record.id}`, undefined]
      ] as const) {
        const response = await host.request(method, path, { token, body })
        expect(response.status, method).toBe(403)
        expect(response.body).toMatchObject({ status_code: 403, error: "Forbidden" })
      }
      const after = await host.request("GET", `/${name}/${record.id}`, { token })
      expect(after.body).toEqual(record)
    })

    it("refuses a key granted only another resource with 403", async () => {
      const other = resources.find((candidate) => candidate.name !== name)?.name ?? "countries"
      const { token } = await host.createKey(owner.id, grants(`${other}:*`))
      const response = await host.request("GET", `/${name}`, { token })
      expect(response.status).toBe(403)
    })

    it("answers 400 for a malformed id, a non-boolean with_deleted and an unknown filter", async () => {
      const badId = await host.request("GET", `/${name}/not-a-uuid`, { token: owner.token })
      expect(badId.status).toBe(400)
      expect(badId.body.code).toBe("INVALID_ID")
      const badFlag = await host.request("GET", `/${name}/${MISSING}?with_deleted=maybe`, { token: owner.token })
      expect(badFlag.status).toBe(400)
      const badFilter = await host.request("GET", `/${name}?no_such_field=1`, { token: owner.token })
      expect(badFilter.status).toBe(400)
      expect(badFilter.body.message).toContain("no_such_field")
      expect((await host.request("PATCH", `/${name}/nope`, { token: owner.token, body: {} })).status).toBe(400)
      expect((await host.request("DELETE", `/${name}/nope`, { token: owner.token })).status).toBe(400)
    })

    it("soft-deletes: 204, then 404, visible with with_deleted=true", async () => {
      const record = await create(owner.token)
      const removed = await host.request("DELETE", `/${name}/${record.id}`, { token: owner.token })
      expect(removed.status).toBe(204)
      expect(removed.body).toBeUndefined()
      expect((await host.request("GET", `/${name}/${record.id}`, { token: owner.token })).status).toBe(404)
      const withDeleted = await host.request("GET", `/${name}/${record.id}?with_deleted=true`, { token: owner.token })
      expect(withDeleted.status).toBe(200)
      expect(withDeleted.body.deleted_at).toEqual(expect.any(String))
      const listed = await host.request("GET", `/${name}?id=${record.id}&with_deleted=true`, { token: owner.token })
      expect(listed.body.data.map((item: { id: string }) => item.id)).toEqual([record.id])
      expect((await host.request("GET", `/${name}?id=${record.id}`, { token: owner.token })).body.data).toEqual([])
    })

    it("answers 404 for an id that does not exist", async () => {
      const response = await host.request("GET", `/${name}/${MISSING}`, { token: owner.token })
      expect(response.status).toBe(404)
      expect(response.body.code).toBe(resource.notFoundCode)
    })
  })
})
