import { createClient, type ErpClient, ErpApiError, type ErpSchema } from "@erp/client"
import { makeErpClient, NotFound, withClientQuery } from "@erp/http"
import { Effect } from "effect"
import { FetchHttpClient } from "effect/http"
import { createServer, type IncomingHttpHeaders } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestHost, type TestHost, type TestTenant } from "../../../test/support/host.js"
import { testStore } from "../../../test/support/stores.js"

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

/** The client against the store the suite always has: what is tested here is the client, not the store. */
describe("@erp/client against a live host", () => {
  let host: TestHost
  let tenant: TestTenant
  let erp: ErpClient
  /** Every URL the client asked for, in order. */
  const requested: Array<string> = []
  const created: Array<string> = []

  beforeAll(async () => {
    host = await startTestHost(testStore("pglite"), { panel: false })
    tenant = await host.createTenant("BR")
    erp = createClient({
      baseUrl: host.url,
      token: tenant.token,
      fetch: (request) => {
        requested.push(`${request.method} ${request.url.slice(host.url.length)}`)
        return fetch(request)
      }
    })
    for (let index = 0; index < 250; index++) {
      const product = await erp.POST("/products", { body: { name: `Item ${String(index).padStart(3, "0")}`, type: "goods", sale_price: "1.50" } })
      created.push(product.id)
    }
  }, 120_000)
  afterAll(() => host?.close())

  it("walks all 250 records at limit 100 in three pages, each record once, following next_cursor", async () => {
    requested.length = 0
    const seen: Array<ErpSchema<"Product">> = []
    for await (const product of erp.paginate("/products", { query: { limit: 100 } })) seen.push(product)
    expect(seen.map((product) => product.id)).toEqual(created)
    expect(new Set(seen.map((product) => product.id)).size).toBe(250)
    expect(seen[0].name).toBe("Item 000")
    expect(requested).toHaveLength(3)
    expect(requested[0]).toBe("GET /products?limit=100")
    expect(requested[1]).toMatch(/^GET \/products\?limit=100&cursor=[^&]+$/)
    expect(requested[2]).toMatch(/^GET \/products\?limit=100&cursor=[^&]+$/)
    expect(requested[1]).not.toBe(requested[2])
  })

  it("keeps the query's search and sort on every page, and stops on the page without a next one", async () => {
    requested.length = 0
    const names: Array<string> = []
    for await (const product of erp.paginate("/products", { query: { limit: 2, search: "Item 24", sort: "name:desc" } })) names.push(product.name)
    expect(names).toEqual(["Item 249", "Item 248", "Item 247", "Item 246", "Item 245", "Item 244", "Item 243", "Item 242", "Item 241", "Item 240"])
    expect(requested).toHaveLength(5)
    for (const url of requested.slice(1)) expect(url).toMatch(/^GET \/products\?limit=2&search=Item%2024&sort=name%3Adesc&cursor=[^&]+$/)
  })

  it("throws a 422 as ErpApiError with the API's code and details.fields", async () => {
    const error = await erp.POST("/products", { body: { name: "Unknown unit", unit_of_measurement_id: "00000000-0000-4000-8000-000000000000" } }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ErpApiError)
    if (!(error instanceof ErpApiError)) return
    expect(error.status_code).toBe(422)
    expect(error.error).toBe("Unprocessable Entity")
    expect(error.code).toMatch(/^[A-Z_]+$/)
    expect(error.details.fields.unit_of_measurement_id?.length).toBeGreaterThan(0)
    expect(error.message.length).toBeGreaterThan(0)
    expect(error.request_id).toMatch(UUID)
  })

  it("creates, reads, updates and deletes a product, then a read of it throws a typed 404", async () => {
    const product = await erp.POST("/products", { body: { name: "Espresso 1 kg", type: "goods", sale_price: "19.99", tags: ["coffee"] } })
    expect(product).toMatchObject({ name: "Espresso 1 kg", type: "goods", sale_price: "19.990000", tags: ["coffee"] })
    const read = await erp.GET("/products/{id}", { params: { path: { id: product.id } } })
    expect(read).toEqual(product)
    const updated = await erp.PATCH("/products/{id}", { params: { path: { id: product.id } }, body: { sale_price: "21.50" } })
    expect(updated.sale_price).toBe("21.500000")
    // The raw client answers the response too: the ETag, the rate-limit fields.
    const { data, response } = await erp.raw.GET("/products/{id}", { params: { path: { id: product.id } } })
    expect(data?.sale_price).toBe("21.500000")
    expect(response.headers.get("etag")).toBeTruthy()
    expect(await erp.DELETE("/products/{id}", { params: { path: { id: product.id } } })).toBeUndefined()
    const missing = await erp.GET("/products/{id}", { params: { path: { id: product.id } } }).catch((e: unknown) => e)
    expect(missing).toBeInstanceOf(ErpApiError)
    expect(missing).toMatchObject({ status_code: 404, code: "PRODUCT_NOT_FOUND" })
  })

  it("refuses a wrong credential with a 401 ErpApiError", async () => {
    const stranger = createClient({ baseUrl: host.url, token: "sk_nobody_nothing", retries: 0 })
    await expect(stranger.GET("/products")).rejects.toMatchObject({ status_code: 401, name: "ErpApiError" })
  })

  it("lists products through the Effect client of @erp/http, with a query and a declared error", async () => {
    const program = Effect.gen(function* () {
      const client = yield* makeErpClient({ baseUrl: host.url, token: tenant.token })
      const page = yield* client.products.list({ params: {}, payload: undefined }).pipe(withClientQuery({ limit: 5 }))
      const missing = yield* Effect.flip(client.products.get({ params: { id: "00000000-0000-4000-8000-000000000000" }, payload: undefined }))
      const health = yield* client.health.health()
      return { page, missing, health }
    })
    const { page, missing, health } = await Effect.runPromise(program.pipe(Effect.provide(FetchHttpClient.layer)))
    const { data, pagination } = page as { data: ReadonlyArray<{ id: string }>; pagination: { has_next_page: boolean } }
    expect(data.map((product) => product.id)).toEqual(created.slice(0, 5))
    expect(pagination.has_next_page).toBe(true)
    expect(missing).toBeInstanceOf(NotFound)
    expect(missing).toMatchObject({ status_code: 404, code: "PRODUCT_NOT_FOUND" })
    expect(health.status).toBe("ok")
  })
})

interface Seen {
  readonly method: string
  readonly url: string
  readonly headers: IncomingHttpHeaders
  readonly body: string
  readonly at: number
}

interface Answer {
  readonly status: number
  readonly headers?: Record<string, string>
  readonly body?: unknown
}

/** A stand-in for the API that answers `answers` in turn (the last one again past the end), and notes every request. */
const fakeApi = async (answers: ReadonlyArray<Answer>) => {
  const seen: Array<Seen> = []
  const server = createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      seen.push({ method: request.method!, url: request.url!, headers: request.headers, body: Buffer.concat(chunks).toString(), at: performance.now() })
      const answer = answers[Math.min(seen.length, answers.length) - 1]
      const text = answer.body === undefined ? "" : typeof answer.body === "string" ? answer.body : JSON.stringify(answer.body)
      response.writeHead(answer.status, { ...(typeof answer.body === "string" ? { "content-type": "text/html" } : { "content-type": "application/json" }), ...answer.headers })
      response.end(text)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () => {
      server.closeAllConnections()
      return new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}

const rateLimited = { status_code: 429, error: "Too Many Requests", message: "Rate limit of this credential exceeded", code: "RATE_LIMITED" }
const storeBusy = { status_code: 503, error: "Service Unavailable", message: "The store is busy", code: "STORE_BUSY" }
const product = { id: "0b0f3f4e-6a39-4c55-9d1c-2f4b8f1a7c21", name: "Espresso 1 kg" }

describe("@erp/client retries (a fake API answering 429 and 503)", () => {
  it("retries a 429 with Retry-After: 1 after a second, sending the same Idempotency-Key and body", async () => {
    const api = await fakeApi([{ status: 429, headers: { "retry-after": "1" }, body: rateLimited }, { status: 201, body: product }])
    try {
      const erp = createClient({ baseUrl: api.url, token: "sk_test_token" })
      const started = performance.now()
      const created = await erp.POST("/products", { body: { name: "Espresso 1 kg" } })
      const elapsed = performance.now() - started
      expect(created).toEqual(product)
      expect(api.seen).toHaveLength(2)
      const [first, second] = api.seen
      expect(first.headers["idempotency-key"]).toMatch(UUID)
      expect(second.headers["idempotency-key"]).toBe(first.headers["idempotency-key"])
      expect(second.body).toBe(first.body)
      expect(JSON.parse(second.body)).toEqual({ name: "Espresso 1 kg" })
      expect(second.headers.authorization).toBe("Bearer sk_test_token")
      expect(second.headers["api-version"]).toBe("v1")
      expect(second.at - first.at).toBeGreaterThanOrEqual(990)
      expect(elapsed).toBeLessThan(1_800)
    } finally {
      await api.close()
    }
  })

  it("a new call gets a new key; the caller's own key is never replaced", async () => {
    const api = await fakeApi([{ status: 201, body: product }])
    try {
      const erp = createClient({ baseUrl: api.url, token: "t" })
      await erp.POST("/products", { body: { name: "a" } })
      await erp.POST("/products", { body: { name: "a" } })
      await erp.POST("/products", { body: { name: "a" }, params: { header: { "Idempotency-Key": "order-42-create" } } })
      const keys = api.seen.map((request) => request.headers["idempotency-key"])
      expect(keys[0]).toMatch(UUID)
      expect(keys[1]).toMatch(UUID)
      expect(keys[1]).not.toBe(keys[0])
      expect(keys[2]).toBe("order-42-create")
    } finally {
      await api.close()
    }
  })

  it("backs off with jitter on a 503 without Retry-After, then throws the last answer once the retries run out", async () => {
    const api = await fakeApi([{ status: 503, body: storeBusy }])
    try {
      const erp = createClient({ baseUrl: api.url, token: "t", retries: 2 })
      const error = await erp.GET("/products").catch((e: unknown) => e)
      expect(error).toBeInstanceOf(ErpApiError)
      expect(error).toMatchObject({ status_code: 503, code: "STORE_BUSY", message: "The store is busy" })
      expect(api.seen).toHaveLength(3)
      // A read changes nothing: no key.
      expect(api.seen.every((request) => request.headers["idempotency-key"] === undefined)).toBe(true)
      // 500 ms doubling, each wait between half the step and the step.
      const gaps = [api.seen[1].at - api.seen[0].at, api.seen[2].at - api.seen[1].at]
      expect(gaps[0]).toBeGreaterThanOrEqual(240)
      expect(gaps[0]).toBeLessThan(650)
      expect(gaps[1]).toBeGreaterThanOrEqual(490)
      expect(gaps[1]).toBeLessThan(1_150)
    } finally {
      await api.close()
    }
  })

  it("waits until a Retry-After HTTP date, and keeps the caller's key across the retry of a PATCH", async () => {
    const api = await fakeApi([
      { status: 503, headers: { "retry-after": new Date(Date.now() + 1_500).toUTCString() }, body: storeBusy },
      { status: 200, body: product }
    ])
    try {
      const erp = createClient({ baseUrl: api.url, token: "t" })
      const updated = await erp.PATCH("/products/{id}", { params: { path: { id: product.id } }, body: { name: "Espresso 1 kg" }, headers: { "Idempotency-Key": "rename-1" } })
      expect(updated).toEqual(product)
      expect(api.seen.map((request) => request.headers["idempotency-key"])).toEqual(["rename-1", "rename-1"])
      // The date has whole seconds: the wait is from 0.5 s to 1.5 s.
      const gap = api.seen[1].at - api.seen[0].at
      expect(gap).toBeGreaterThanOrEqual(400)
      expect(gap).toBeLessThan(1_800)
    } finally {
      await api.close()
    }
  })

  it("retries a DELETE with one key and answers undefined for its 204", async () => {
    const api = await fakeApi([{ status: 429, headers: { "retry-after": "0" }, body: rateLimited }, { status: 204 }])
    try {
      const erp = createClient({ baseUrl: api.url, token: "t" })
      expect(await erp.DELETE("/products/{id}", { params: { path: { id: product.id } } })).toBeUndefined()
      expect(api.seen.map((request) => request.method)).toEqual(["DELETE", "DELETE"])
      expect(api.seen[0].headers["idempotency-key"]).toMatch(UUID)
      expect(api.seen[1].headers["idempotency-key"]).toBe(api.seen[0].headers["idempotency-key"])
    } finally {
      await api.close()
    }
  })

  it("throws at once when Retry-After asks for longer than maxRetryWaitSeconds", async () => {
    const api = await fakeApi([{ status: 429, headers: { "retry-after": "120" }, body: rateLimited }, { status: 201, body: product }])
    try {
      const erp = createClient({ baseUrl: api.url, token: "t", maxRetryWaitSeconds: 30 })
      const started = performance.now()
      const error = await erp.POST("/products", { body: { name: "a" } }).catch((e: unknown) => e)
      expect(performance.now() - started).toBeLessThan(500)
      expect(error).toBeInstanceOf(ErpApiError)
      expect(error).toMatchObject({ status_code: 429, code: "RATE_LIMITED" })
      expect((error as ErpApiError).headers.get("retry-after")).toBe("120")
      expect(api.seen).toHaveLength(1)
    } finally {
      await api.close()
    }
  })

  it("with retries: 0 sends no key and throws the first 503; a body that is not JSON still gives status and text", async () => {
    const api = await fakeApi([{ status: 503, headers: { "retry-after": "0" }, body: "<html>Bad gateway</html>" }])
    try {
      const erp = createClient({ baseUrl: api.url, token: "t", retries: 0 })
      const error = await erp.POST("/products", { body: { name: "a" } }).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(ErpApiError)
      expect(error).toMatchObject({ status_code: 503, code: undefined, message: "<html>Bad gateway</html>", details: { fields: {} } })
      expect(api.seen).toHaveLength(1)
      expect(api.seen[0].headers["idempotency-key"]).toBeUndefined()
    } finally {
      await api.close()
    }
  })

  it("stops waiting when the call's signal aborts", async () => {
    const api = await fakeApi([{ status: 429, headers: { "retry-after": "5" }, body: rateLimited }])
    try {
      const erp = createClient({ baseUrl: api.url, token: "t" })
      const started = performance.now()
      const error = await erp.GET("/products", { signal: AbortSignal.timeout(200) }).catch((e: unknown) => e)
      expect(performance.now() - started).toBeLessThan(1_000)
      expect((error as Error).name).toBe("TimeoutError")
      expect(api.seen).toHaveLength(1)
    } finally {
      await api.close()
    }
  })
})

describe("@erp/client types", () => {
  it("are the document's: unknown paths, missing path parameters and wrong bodies do not compile", () => {
    const erp = createClient({ baseUrl: "http://127.0.0.1:1", token: "t" })
    const never = () => {
      // @ts-expect-error not a path of the API
      void erp.GET("/nowhere")
      // @ts-expect-error the id is required
      void erp.GET("/products/{id}", {})
      // @ts-expect-error a product's name is a string
      void erp.POST("/products", { body: { name: 42 } })
      // @ts-expect-error a record is not a list
      void erp.paginate("/products/{id}")
    }
    expect(typeof never).toBe("function")
  })
})
