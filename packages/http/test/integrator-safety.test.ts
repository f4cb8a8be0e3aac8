import { ALL_PERMISSIONS, IdempotencyKeys, type Principal, pruneIdempotencyKeys, Tenancy } from "@erp/core"
import { SqlClient } from "effect/sql"
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestHost, type TestHost, type TestTenant } from "../../../test/support/host.js"
import { storeKinds, testStore } from "../../../test/support/stores.js"
import { idempotent, requestFingerprint } from "../src/idempotency.js"
import { apiError } from "../src/errors.js"

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe.each(storeKinds)("idempotency keys, ETags and credential rate limits on %s", (kind) => {
  let host: TestHost
  let tenant: TestTenant
  let other: TestTenant

  beforeAll(async () => {
    host = await startTestHost(testStore(kind))
    tenant = await host.createTenant("BR", { defaultRateLimit: true })
    other = await host.createTenant("BR", { defaultRateLimit: true })
  })
  afterAll(() => host?.close())

  const call = (method: string, path: string, options: { body?: unknown; headers?: Record<string, string>; token?: string } = {}) =>
    host.request(method, path, { token: options.token ?? tenant.token, ...(options.body !== undefined ? { body: options.body } : {}), ...(options.headers ? { headers: options.headers } : {}) })

  const productsNamed = async (name: string, token = tenant.token) => {
    const page = await call("GET", `/products?name=${encodeURIComponent(name)}`, { token })
    expect(page.status).toBe(200)
    return page.body.data as ReadonlyArray<{ id: string }>
  }

  const newProduct = async () => {
    const created = await call("POST", "/products", { body: { name: `Product ${randomUUID().slice(0, 8)}` } })
    expect(created.status).toBe(201)
    return created
  }

  describe("Idempotency-Key", () => {
    it("runs a retried POST once and answers the retry with the first response, marked as replayed", async () => {
      const key = randomUUID()
      const name = `Idempotent ${randomUUID().slice(0, 8)}`
      const first = await call("POST", "/products", { body: { name }, headers: { "idempotency-key": key } })
      expect(first.status).toBe(201)
      expect(first.headers.get("idempotent-replayed")).toBeNull()
      // Same request, other spacing and key order: the same body.
      const retry = await call("POST", "/products", { body: JSON.stringify({ name }, null, 2), headers: { "idempotency-key": key } })
      expect(retry.status).toBe(201)
      expect(retry.headers.get("idempotent-replayed")).toBe("true")
      expect(retry.body).toEqual(first.body)
      expect(retry.headers.get("etag")).toBe(first.headers.get("etag"))
      expect(await productsNamed(name)).toHaveLength(1)
      // The kept answer is sealed at rest (an answer may carry a secret shown once).
      const [kept] = await host.run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql<{ response_body: string }>`SELECT response_body FROM idempotency_keys WHERE tenant_id = ${tenant.id}::uuid AND key = ${key}`))
      expect(kept.response_body).toMatch(/^erpsb1\./)
      expect(kept.response_body).not.toContain(name)
    })

    it("refuses the key with another body (422 IDEMPOTENCY_KEY_REUSED) and creates nothing", async () => {
      const key = randomUUID()
      const name = `Reused ${randomUUID().slice(0, 8)}`
      expect((await call("POST", "/products", { body: { name }, headers: { "idempotency-key": key } })).status).toBe(201)
      const other = `${name} bis`
      const refused = await call("POST", "/products", { body: { name: other }, headers: { "idempotency-key": key } })
      expect(refused.status).toBe(422)
      expect(refused.body).toMatchObject({ status_code: 422, error: "Unprocessable Entity", code: "IDEMPOTENCY_KEY_REUSED" })
      expect(await productsNamed(other)).toHaveLength(0)
    })

    it("answers 409 IDEMPOTENCY_KEY_IN_USE while the first request with the key is still running (on another host)", async () => {
      const key = randomUUID()
      const body = { name: `In use ${randomUUID().slice(0, 8)}` }
      const fingerprint = requestFingerprint("POST", "/products", body)
      // Another host has claimed the key and is running the request.
      const claim = await host.run(Effect.flatMap(IdempotencyKeys, (keys) => keys.claim(tenant.id, key, fingerprint)))
      expect(claim.kind).toBe("claimed")
      const busy = await call("POST", "/products", { body, headers: { "idempotency-key": key } })
      expect(busy.status).toBe(409)
      expect(busy.body).toMatchObject({ status_code: 409, code: "IDEMPOTENCY_KEY_IN_USE" })
      expect(await productsNamed(body.name)).toHaveLength(0)
      // That host finishes: the retry gets its answer.
      await host.run(Effect.flatMap(IdempotencyKeys, (keys) =>
        keys.complete(tenant.id, key, fingerprint, { status: 201, headers: { "content-type": "application/json" }, body: JSON.stringify({ from: "the other host" }) })))
      const replayed = await call("POST", "/products", { body, headers: { "idempotency-key": key } })
      expect(replayed.status).toBe(201)
      expect(replayed.headers.get("idempotent-replayed")).toBe("true")
      expect(replayed.body).toEqual({ from: "the other host" })
    })

    it("lets a retry take over a key whose host died mid-request once its lease is over", async () => {
      const key = randomUUID()
      const body = { name: `Abandoned ${randomUUID().slice(0, 8)}` }
      const fingerprint = requestFingerprint("POST", "/products", body)
      await host.run(Effect.flatMap(IdempotencyKeys, (keys) => keys.claim(tenant.id, key, fingerprint)))
      // The claiming host died; its lease (5 minutes) ran out.
      await host.run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql`UPDATE idempotency_keys SET locked_until = now() - interval '1 second' WHERE tenant_id = ${tenant.id}::uuid AND key = ${key}`))
      const retry = await call("POST", "/products", { body, headers: { "idempotency-key": key } })
      expect(retry.status).toBe(201)
      expect(retry.headers.get("idempotent-replayed")).toBeNull()
      expect(await productsNamed(body.name)).toHaveLength(1)
      // Another body cannot take an abandoned key over.
      const other = await call("POST", "/products", { body: { name: `${body.name} bis` }, headers: { "idempotency-key": key } })
      expect(other.status).toBe(422)
    })

    it("keeps nothing for a 5xx or a crash, so the retry runs the request again", async () => {
      const body = { name: "x" }
      const request = { method: "POST", url: "/products", headers: {} as Record<string, string> }
      for (const failure of [Effect.fail(apiError(500, "store gone")), Effect.die("host bug")]) {
        const key = randomUUID()
        request.headers = { "idempotency-key": key }
        const fingerprint = requestFingerprint("POST", "/products", body)
        const exit = await host.run(Effect.gen(function* () {
          const keys = yield* IdempotencyKeys
          const principal = { tenantId: tenant.id } as Principal
          return yield* Effect.exit(idempotent(keys, principal, request, body, failure))
        }))
        expect(exit._tag).toBe("Failure")
        const again = await host.run(Effect.flatMap(IdempotencyKeys, (keys) => keys.claim(tenant.id, key, fingerprint)))
        expect(again.kind).toBe("claimed")
      }
    })

    it("one of two concurrent requests with the same key runs; the other is told it is in use or gets the replay", async () => {
      const key = randomUUID()
      const body = { name: `Concurrent ${randomUUID().slice(0, 8)}` }
      const answers = await Promise.all([0, 1].map(() => call("POST", "/products", { body, headers: { "idempotency-key": key } })))
      const statuses = answers.map((answer) => answer.status).sort()
      expect([[201, 201], [201, 409]]).toContainEqual(statuses)
      expect(await productsNamed(body.name)).toHaveLength(1)
    })

    it("keeps a 4xx answer too, and replays it", async () => {
      const key = randomUUID()
      const first = await call("POST", "/products", { body: { name: "" }, headers: { "idempotency-key": key } })
      expect(first.status).toBeGreaterThanOrEqual(400)
      expect(first.status).toBeLessThan(500)
      const retry = await call("POST", "/products", { body: { name: "" }, headers: { "idempotency-key": key } })
      expect(retry.status).toBe(first.status)
      expect(retry.body).toEqual(first.body)
      expect(retry.headers.get("idempotent-replayed")).toBe("true")
    })

    it("replays a PATCH instead of applying it again", async () => {
      const { body: product } = await newProduct()
      const key = randomUUID()
      const first = await call("PATCH", `/products/${product.id}`, { body: { name: "First name" }, headers: { "idempotency-key": key } })
      expect(first.status).toBe(200)
      expect((await call("PATCH", `/products/${product.id}`, { body: { name: "Changed since" } })).status).toBe(200)
      const retry = await call("PATCH", `/products/${product.id}`, { body: { name: "First name" }, headers: { "idempotency-key": key } })
      expect(retry.status).toBe(200)
      expect(retry.headers.get("idempotent-replayed")).toBe("true")
      expect(retry.body).toEqual(first.body)
      expect((await call("GET", `/products/${product.id}`)).body.name).toBe("Changed since")
    })

    it("scopes keys per tenant", async () => {
      const key = randomUUID()
      expect((await call("POST", "/products", { body: { name: `Mine ${key}` }, headers: { "idempotency-key": key } })).status).toBe(201)
      const theirs = await call("POST", "/products", { token: other.token, body: { name: `Theirs ${key}` }, headers: { "idempotency-key": key } })
      expect(theirs.status).toBe(201)
      expect(theirs.headers.get("idempotent-replayed")).toBeNull()
      expect(theirs.body.name).toBe(`Theirs ${key}`)
    })

    it("refuses a malformed key with 400 and runs nothing", async () => {
      const name = `Bad key ${randomUUID().slice(0, 8)}`
      for (const key of ["x".repeat(256), "has space"]) {
        const refused = await call("POST", "/products", { body: { name }, headers: { "idempotency-key": key } })
        expect(refused.status).toBe(400)
        expect(refused.body).toMatchObject({ status_code: 400, code: "INVALID_IDEMPOTENCY_KEY" })
      }
      expect(await productsNamed(name)).toHaveLength(0)
    })

    it("covers actions: a retried cancel is replayed rather than refused as already cancelled; a stale If-Match cancels nothing", async () => {
      const dueDate = new Date(Date.now() + 10 * 86_400_000).toISOString().slice(0, 10)
      const created = await call("POST", "/payables", { body: { amount: "100", due_date: dueDate } })
      expect(created.status).toBe(201)
      const changed = await call("PATCH", `/payables/${created.body.id}`, { body: { notes: "newer" } })
      const stale = await call("POST", `/payables/${created.body.id}/cancel`, { headers: { "if-match": created.headers.get("etag")! } })
      expect(stale.status).toBe(412)
      expect((await call("GET", `/payables/${created.body.id}`)).body.status).not.toBe("cancelled")
      const key = randomUUID()
      const first = await call("POST", `/payables/${created.body.id}/cancel`, { headers: { "idempotency-key": key, "if-match": changed.headers.get("etag")! } })
      expect(first.status).toBe(200)
      expect(first.body.status).toBe("cancelled")
      expect(first.headers.get("etag")).toBe((await call("GET", `/payables/${created.body.id}`)).headers.get("etag"))
      const again = await call("POST", `/payables/${created.body.id}/cancel`, { headers: { "idempotency-key": key, "if-match": changed.headers.get("etag")! } })
      expect(again.status).toBe(200)
      expect(again.headers.get("idempotent-replayed")).toBe("true")
      expect(again.body).toEqual(first.body)
      // Without the key the same call runs again, and is refused.
      expect((await call("POST", `/payables/${created.body.id}/cancel`)).status).toBeGreaterThanOrEqual(400)
    })

    it("forgets expired keys: the retention job deletes them and the key runs anew", async () => {
      const key = randomUUID()
      const name = `Expiring ${randomUUID().slice(0, 8)}`
      expect((await call("POST", "/products", { body: { name }, headers: { "idempotency-key": key } })).status).toBe(201)
      await host.run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql`UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE tenant_id = ${tenant.id}::uuid AND key = ${key}`))
      expect(await host.run(pruneIdempotencyKeys)).toBeGreaterThanOrEqual(1)
      const left = await host.run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql<{ count: number }>`SELECT count(*)::int AS count FROM idempotency_keys WHERE tenant_id = ${tenant.id}::uuid AND key = ${key}`))
      expect(left[0].count).toBe(0)
      const again = await call("POST", "/products", { body: { name }, headers: { "idempotency-key": key } })
      expect(again.status).toBe(201)
      expect(again.headers.get("idempotent-replayed")).toBeNull()
      expect(await productsNamed(name)).toHaveLength(2)
    })
  })

  describe("ETag, If-Match and If-None-Match", () => {
    it("gives create, read and update answers a strong ETag that changes with every write", async () => {
      const created = await newProduct()
      const etag = created.headers.get("etag")
      expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/)
      const read = await call("GET", `/products/${created.body.id}`)
      expect(read.headers.get("etag")).toBe(etag)
      // Two writes in a row, as fast as the host allows: every one gets a new tag.
      const first = await call("PATCH", `/products/${created.body.id}`, { body: { description: "one" } })
      const second = await call("PATCH", `/products/${created.body.id}`, { body: { description: "two" } })
      const tags = [etag, first.headers.get("etag"), second.headers.get("etag")]
      expect(new Set(tags).size).toBe(3)
      expect((await call("GET", `/products/${created.body.id}`)).headers.get("etag")).toBe(second.headers.get("etag"))
    })

    it("answers 304 with no body when If-None-Match names the current tag, and the record once it changed", async () => {
      const created = await newProduct()
      const etag = created.headers.get("etag")!
      const fresh = await call("GET", `/products/${created.body.id}`, { headers: { "if-none-match": etag } })
      expect(fresh.status).toBe(304)
      expect(fresh.body).toBeUndefined()
      expect(fresh.headers.get("etag")).toBe(etag)
      await call("PATCH", `/products/${created.body.id}`, { body: { description: "changed" } })
      const stale = await call("GET", `/products/${created.body.id}`, { headers: { "if-none-match": etag } })
      expect(stale.status).toBe(200)
      expect(stale.body.description).toBe("changed")
    })

    it("of two integrations racing a PATCH with the same If-Match, one wins and the other gets 412", async () => {
      const created = await newProduct()
      const etag = created.headers.get("etag")!
      const answers = await Promise.all(["Integration A", "Integration B"].map((name) =>
        call("PATCH", `/products/${created.body.id}`, { body: { name }, headers: { "if-match": etag } })))
      expect(answers.map((answer) => answer.status).sort()).toEqual([200, 412])
      const winner = answers.find((answer) => answer.status === 200)!
      const loser = answers.find((answer) => answer.status === 412)!
      expect(loser.body).toMatchObject({ status_code: 412, error: "Precondition Failed", code: "PRECONDITION_FAILED" })
      const stored = await call("GET", `/products/${created.body.id}`)
      expect(stored.body.name).toBe(winner.body.name)
      expect(stored.headers.get("etag")).toBe(winner.headers.get("etag"))
    })

    it("refuses a DELETE with a stale If-Match (412, nothing deleted) and takes one with the current tag", async () => {
      const created = await newProduct()
      const stale = created.headers.get("etag")!
      const changed = await call("PATCH", `/products/${created.body.id}`, { body: { description: "newer" } })
      const refused = await call("DELETE", `/products/${created.body.id}`, { headers: { "if-match": stale } })
      expect(refused.status).toBe(412)
      expect(refused.body.code).toBe("PRECONDITION_FAILED")
      expect((await call("GET", `/products/${created.body.id}`)).status).toBe(200)
      expect((await call("DELETE", `/products/${created.body.id}`, { headers: { "if-match": changed.headers.get("etag")! } })).status).toBe(204)
      expect((await call("GET", `/products/${created.body.id}`)).status).toBe(404)
    })

    it("takes If-Match: * and a list naming the current tag; refuses a malformed one with 400", async () => {
      const created = await newProduct()
      const any = await call("PATCH", `/products/${created.body.id}`, { body: { description: "any" }, headers: { "if-match": "*" } })
      expect(any.status).toBe(200)
      const listed = await call("PATCH", `/products/${created.body.id}`, { body: { description: "listed" }, headers: { "if-match": `"old", ${any.headers.get("etag")}` } })
      expect(listed.status).toBe(200)
      const malformed = await call("PATCH", `/products/${created.body.id}`, { body: { description: "bad" }, headers: { "if-match": "not-quoted" } })
      expect(malformed.status).toBe(400)
      expect(malformed.body.code).toBe("INVALID_HEADER")
      expect((await call("GET", `/products/${created.body.id}`)).body.description).toBe("listed")
    })
  })

  describe("rate limits per credential", () => {
    /** Starts a burst early enough in the store's minute that the window does not turn over during it. */
    const awaitFreshWindow = async (token: string) => {
      const probe = await call("GET", "/products?limit=1", { token })
      const reset = Number(probe.headers.get("ratelimit-reset"))
      if (reset >= 10) return
      await sleep((reset + 1) * 1000)
      await call("GET", "/products?limit=1", { token })
    }

    it("puts RateLimit-* headers on every authenticated answer, defaulting to 6,000 a minute", async () => {
      const answer = await call("GET", "/products?limit=1")
      expect(answer.headers.get("ratelimit-limit")).toBe("6000")
      const remaining = Number(answer.headers.get("ratelimit-remaining"))
      expect(remaining).toBeGreaterThan(5000)
      expect(remaining).toBeLessThan(6000)
      const reset = Number(answer.headers.get("ratelimit-reset"))
      expect(reset).toBeGreaterThanOrEqual(1)
      expect(reset).toBeLessThanOrEqual(60)
      // Errors the handler answers are counted and carry them too.
      const missing = await call("GET", `/products/${randomUUID()}`)
      expect(missing.status).toBe(404)
      expect(missing.headers.get("ratelimit-limit")).toBe("6000")
    })

    it("answers 429 with Retry-After past a key's configured limit while another key of the tenant is unaffected", async () => {
      const limited = await host.createKey(tenant.id, ALL_PERMISSIONS, { name: "limited", rateLimitPerMinute: 5 })
      expect(limited.key.rate_limit_per_minute).toBe(5)
      const unaffected = await host.createKey(tenant.id, ALL_PERMISSIONS, { name: "unaffected" })
      await awaitFreshWindow(limited.token)
      // The probe took one of the 5.
      const statuses: Array<number> = []
      const remaining: Array<string | null> = []
      for (let i = 0; i < 4; i++) {
        const answer = await call("GET", "/products?limit=1", { token: limited.token })
        statuses.push(answer.status)
        remaining.push(answer.headers.get("ratelimit-remaining"))
      }
      expect(statuses).toEqual([200, 200, 200, 200])
      expect(remaining).toEqual(["3", "2", "1", "0"])
      const refused = await call("GET", "/products?limit=1", { token: limited.token })
      expect(refused.status).toBe(429)
      expect(refused.body).toMatchObject({ status_code: 429, error: "Too Many Requests", code: "RATE_LIMITED" })
      expect(refused.headers.get("ratelimit-limit")).toBe("5")
      expect(refused.headers.get("ratelimit-remaining")).toBe("0")
      const retryAfter = Number(refused.headers.get("retry-after"))
      expect(retryAfter).toBeGreaterThanOrEqual(1)
      expect(retryAfter).toBeLessThanOrEqual(60)
      expect(refused.headers.get("ratelimit-reset")).toBe(String(retryAfter))
      // Writes are refused as well, and change nothing.
      const name = `Limited ${randomUUID().slice(0, 8)}`
      expect((await call("POST", "/products", { token: limited.token, body: { name } })).status).toBe(429)
      const free = await call("GET", "/products?limit=1", { token: unaffected.token })
      expect(free.status).toBe(200)
      expect(free.headers.get("ratelimit-limit")).toBe("6000")
      expect(await productsNamed(name, unaffected.token)).toHaveLength(0)
    })

    it("counts a key's requests in the store, so a second host sharing it sees them", async () => {
      // Each PGlite host opens its own in-memory store: nothing to share.
      if (kind === "pglite") return
      const limited = await host.createKey(tenant.id, ALL_PERMISSIONS, { name: "shared", rateLimitPerMinute: 4 })
      const second = await startTestHost(testStore(kind))
      try {
        await awaitFreshWindow(limited.token)
        expect((await call("GET", "/products?limit=1", { token: limited.token })).status).toBe(200)
        const elsewhere = await second.request("GET", "/products?limit=1", { token: limited.token })
        expect(elsewhere.status).toBe(200)
        expect(elsewhere.headers.get("ratelimit-remaining")).toBe("1")
        expect((await second.request("GET", "/products?limit=1", { token: limited.token })).status).toBe(200)
        expect((await call("GET", "/products?limit=1", { token: limited.token })).status).toBe(429)
      } finally {
        await second.close()
      }
    })

    it("limits MCP over HTTP by the same credential", async () => {
      const limited = await host.createKey(tenant.id, ALL_PERMISSIONS, { name: "mcp limited", rateLimitPerMinute: 2 })
      const initialize = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "0" } } }
      const post = () => fetch(`${host.url}/`, {
        method: "POST",
        headers: { authorization: `Bearer ${limited.token}`, accept: "application/json, text/event-stream", "content-type": "application/json", "mcp-protocol-version": "2025-06-18" },
        body: JSON.stringify(initialize)
      })
      await awaitFreshWindow(limited.token)
      // The probe took one of the 2.
      const allowed = await post()
      expect(allowed.status).toBe(200)
      expect(allowed.headers.get("ratelimit-remaining")).toBe("0")
      await allowed.body?.cancel()
      const refused = await post()
      expect(refused.status).toBe(429)
      expect(refused.headers.get("retry-after")).toMatch(/^\d+$/)
      expect(await refused.json()).toMatchObject({ status_code: 429, code: "RATE_LIMITED" })
    })

    it("applies the tenant's limit to its keys without one of their own", async () => {
      const own = await host.createTenant("BR", { defaultRateLimit: true })
      await host.run(Effect.flatMap(Tenancy, (tenancy) => tenancy.setRateLimit(own.id, 2)))
      await awaitFreshWindow(own.token)
      expect((await call("GET", "/products?limit=1", { token: own.token })).status).toBe(200)
      const refused = await call("GET", "/products?limit=1", { token: own.token })
      expect(refused.status).toBe(429)
      expect(refused.headers.get("ratelimit-limit")).toBe("2")
      const invalid = await host.run(Effect.result(Effect.flatMap(Tenancy, (tenancy) => tenancy.setRateLimit(own.id, 0))))
      expect(invalid._tag).toBe("Failure")
    })
  })
})
