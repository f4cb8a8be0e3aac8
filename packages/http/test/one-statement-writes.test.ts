import { SqlClient } from "effect/sql"
import { products, ResourceRepository } from "@erp/core"
import { Effect, Option } from "effect"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestHost, type TestHost, type TestTenant } from "../../../test/support/host.js"
import { storeKinds, testStore } from "../../../test/support/stores.js"

/**
 * An update of a record without children or hooks reads it without a lock and writes only if
 * no other write came since; the one that finds the record changed runs again under the lock.
 * Racing writers must therefore behave as they did when every update locked the row first.
 */
describe.each(storeKinds)("updates without a lock on %s", (kind) => {
  let host: TestHost
  let tenant: TestTenant

  beforeAll(async () => {
    host = await startTestHost(testStore(kind))
    tenant = await host.createTenant()
  })
  afterAll(() => host?.close())

  const call = (method: string, path: string, body?: unknown, headers?: Record<string, string>) =>
    host.request(method, path, { token: tenant.token, ...(body !== undefined ? { body } : {}), ...(headers ? { headers } : {}) })

  const newProduct = async () => {
    const created = await call("POST", "/products", { name: `Raced ${randomUUID().slice(0, 8)}` })
    expect(created.status).toBe(201)
    return created
  }

  it("loses no metadata key when eight PATCHes each merge their own at once", async () => {
    const created = await newProduct()
    const keys = Array.from({ length: 8 }, (_, index) => `writer_${index}`)
    const answers = await Promise.all(keys.map((key) => call("PATCH", `/products/${created.body.id}`, { metadata: { [key]: "yes" } })))
    expect(answers.map((answer) => answer.status)).toEqual(keys.map(() => 200))
    const stored = await call("GET", `/products/${created.body.id}`)
    expect(Object.keys(stored.body.metadata).sort()).toEqual(keys)
    const events = await call("GET", `/events?resource_id=${created.body.id}&action=update`)
    expect(events.body.data).toHaveLength(8)
  })

  it("lets exactly one of eight PATCHes with the same If-Match win; the others get 412 and write nothing", async () => {
    const created = await newProduct()
    const etag = created.headers.get("etag")!
    const answers = await Promise.all(Array.from({ length: 8 }, (_, index) =>
      call("PATCH", `/products/${created.body.id}`, { name: `Writer ${index}` }, { "if-match": etag })))
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 412, 412, 412, 412, 412, 412, 412])
    const winner = answers.find((answer) => answer.status === 200)!
    const stored = await call("GET", `/products/${created.body.id}`)
    expect(stored.body.name).toBe(winner.body.name)
    expect(stored.headers.get("etag")).toBe(winner.headers.get("etag"))
    const events = await call("GET", `/events?resource_id=${created.body.id}&action=update`)
    expect(events.body.data).toHaveLength(1)
  })

  it("moves updated_at forward on every write, even several in one transaction (where now() does not move)", async () => {
    const created = await newProduct()
    const times = await host.run(Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const repo = yield* ResourceRepository
      const read = Effect.map(repo.findById(products, tenant.id, created.body.id), (row) => String(Option.getOrThrow(row).updated_at))
      return yield* sql.withTransaction(Effect.gen(function* () {
        const seen = [yield* read]
        for (let index = 0; index < 3; index++) {
          yield* repo.update(products, tenant.id, created.body.id, { description: `change ${index}` })
          seen.push(yield* read)
        }
        return seen
      }))
    }))
    expect([...times].sort()).toEqual(times)
    expect(new Set(times).size).toBe(times.length)
  })

  it("answers 404 for a record deleted before the update, and records nothing", async () => {
    const created = await newProduct()
    expect((await call("DELETE", `/products/${created.body.id}`)).status).toBe(204)
    const answer = await call("PATCH", `/products/${created.body.id}`, { name: "Too late" })
    expect(answer.status).toBe(404)
    const events = await call("GET", `/events?resource_id=${created.body.id}&action=update`)
    expect(events.body.data).toHaveLength(0)
  })
})
