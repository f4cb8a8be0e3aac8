import { NodeHttpServer } from "@effect/platform-node"
import { defineResource, id, products, text, timestamps } from "@erp/core"
import { Effect, Layer, ManagedRuntime } from "effect"
import { HttpRouter, HttpServer, HttpServerResponse } from "effect/http"
import { createServer } from "node:http"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { startTestHost, type TestHost, type TestTenant } from "../../../../test/support/host.js"
import { storeKinds, testStore } from "../../../../test/support/stores.js"
import { withHostConcerns } from "../../src/middleware.js"

/** A resource whose table no migration makes: every read of it is a defect, the one way to force a 500 from outside. */
const broken = defineResource({
  name: "broken-things",
  singular: "broken-thing",
  title: "Broken thing",
  description: "Declared over a table that does not exist.",
  notFoundCode: "BROKEN_THING_NOT_FOUND",
  table: "no_such_table_for_a_500",
  fields: { id: id(), name: text(50), ...timestamps() },
  defaultSort: { field: "created_at", order: "asc" }
})

/** A resource whose totals throw: a defect with no error underneath it, only where it was thrown. */
const throwing = defineResource({
  name: "throwing-things",
  singular: "throwing-thing",
  title: "Throwing thing",
  description: "Its computed fields throw.",
  notFoundCode: "THROWING_THING_NOT_FOUND",
  table: "no_such_table_either",
  fields: { id: id(), name: text(50), ...timestamps() },
  defaultSort: { field: "created_at", order: "asc" },
  writes: { example: { name: "x" } },
  compute: () => {
    throw new RangeError("a total out of range")
  }
})

const stderrLines = () => {
  const lines: Array<string> = []
  const spy = vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
    lines.push(...String(chunk).split("\n").filter((line) => line !== ""))
    return true
  })
  return { lines, restore: () => spy.mockRestore() }
}

describe.each(storeKinds)("a 5xx on %s", (kind) => {
  let host: TestHost
  let tenant: TestTenant

  beforeAll(async () => {
    host = await startTestHost(testStore(kind), { resources: [products, broken, throwing] })
    tenant = await host.createTenant()
  })
  afterAll(() => host?.close())

  it("is answered with the spec's body and the request id, and logged as exactly one structured line", async () => {
    const log = stderrLines()
    let response: Response
    try {
      response = await fetch(`${host.url}/broken-things?limit=5`, { headers: { authorization: `Bearer ${tenant.token}`, "x-request-id": "req-forced-500" } })
      await response.clone().text()
    } finally {
      log.restore()
    }
    expect(response.status).toBe(500)
    expect(response.headers.get("x-request-id")).toBe("req-forced-500")
    const body = (await response.json()) as Record<string, unknown>
    expect(body).toEqual({
      status_code: 500,
      message: "Internal server error (request id req-forced-500)",
      error: "Internal Server Error",
      code: "INTERNAL_ERROR",
      request_id: "req-forced-500"
    })
    // Nothing internal leaks: no SQL, no table name.
    expect(JSON.stringify(body)).not.toMatch(/no_such_table|SELECT|relation/i)
    const ours = log.lines.filter((line) => line.includes("req-forced-500"))
    expect(ours).toHaveLength(1)
    expect(JSON.parse(ours[0])).toMatchObject({
      level: "error",
      status: 500,
      request_id: "req-forced-500",
      route: "GET /broken-things",
      tenant_id: tenant.id,
      error: "SqlError",
      cause: expect.stringMatching(/no_such_table_for_a_500/)
    })
  })

  it("answers and logs a failed read by id alike, whether its credential was checked in the store or known in memory", async () => {
    const path = "/broken-things/00000000-0000-4000-8000-000000000001"
    const log = stderrLines()
    const answers: Array<{ status: number; body: unknown }> = []
    try {
      // The first read checks the key in the store; the second finds it known (on PostgreSQL, answered without a fiber).
      for (const requestId of ["req-by-id-1", "req-by-id-2"]) {
        const response = await fetch(host.url + path, { headers: { authorization: `Bearer ${tenant.token}`, "x-request-id": requestId } })
        answers.push({ status: response.status, body: await response.json() })
      }
    } finally {
      log.restore()
    }
    for (const [index, answer] of answers.entries()) {
      const requestId = `req-by-id-${index + 1}`
      expect(answer).toEqual({ status: 500, body: { status_code: 500, message: `Internal server error (request id ${requestId})`, error: "Internal Server Error", code: "INTERNAL_ERROR", request_id: requestId } })
      const ours = log.lines.filter((line) => line.includes(requestId))
      expect(ours).toHaveLength(1)
      expect(JSON.parse(ours[0])).toMatchObject({ status: 500, route: `GET ${path}`, tenant_id: tenant.id, error: "SqlError", cause: expect.stringMatching(/no_such_table_for_a_500/) })
    }
  })

  it("logs a defect with no error underneath it with where it was thrown", async () => {
    const log = stderrLines()
    let response: Response
    try {
      response = await fetch(`${host.url}/throwing-things`, {
        method: "POST",
        headers: { authorization: `Bearer ${tenant.token}`, "content-type": "application/json", "x-request-id": "req-thrown" },
        body: JSON.stringify({ name: "x" })
      })
      await response.clone().text()
    } finally {
      log.restore()
    }
    expect(response.status).toBe(500)
    const ours = log.lines.filter((line) => line.includes("req-thrown"))
    expect(ours).toHaveLength(1)
    expect(JSON.parse(ours[0])).toMatchObject({ status: 500, route: "POST /throwing-things", error: "RangeError", message: "a total out of range", cause: expect.stringMatching(/^at .*server-errors\.test\.ts/) })
  })

  it("leaves 4xx answers unlogged", async () => {
    const log = stderrLines()
    try {
      const response = await fetch(`${host.url}/products?name[nope]=1`, { headers: { authorization: `Bearer ${tenant.token}` } })
      expect(response.status).toBe(400)
    } finally {
      log.restore()
    }
    expect(log.lines.filter((line) => line.includes('"request failed"'))).toEqual([])
  })
})

/**
 * A failure outside every route: the answer a route made cannot be written (Node refuses a
 * header with a line break). The platform answers 500 by itself; the line still says why.
 */
describe("a 5xx the platform answers by itself", () => {
  let runtime: ManagedRuntime.ManagedRuntime<HttpServer.HttpServer, unknown>
  let url: string

  beforeAll(async () => {
    const app = HttpRouter.add("GET", "/unwritable", Effect.succeed(HttpServerResponse.empty({ status: 303, headers: { location: "/somewhere\r\nset-cookie: injected=1" } })))
    runtime = ManagedRuntime.make(
      HttpRouter.serve(app, { middleware: withHostConcerns, disableLogger: true, disableListenLog: true }).pipe(
        Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" }))
      )
    )
    const address = await runtime.runPromise(Effect.map(HttpServer.HttpServer, (server) => server.address))
    if (address._tag === "UnixPathAddress") throw new Error("expected a TCP address")
    url = `http://127.0.0.1:${address.port}`
  })
  afterAll(() => runtime?.dispose())

  it("is logged once with the failure that made it", async () => {
    const log = stderrLines()
    try {
      const response = await fetch(`${url}/unwritable`, { headers: { "x-request-id": "req-unwritable" }, redirect: "manual" })
      expect(response.status).toBe(500)
      expect(response.headers.get("set-cookie")).toBeNull()
      // The platform's answer is written before the request ends, where its failure reaches the line.
      await vi.waitFor(() => expect(log.lines.filter((line) => line.includes("req-unwritable"))).toHaveLength(1))
    } finally {
      log.restore()
    }
    const ours = log.lines.filter((line) => line.includes("req-unwritable"))
    expect(ours).toHaveLength(1)
    expect(JSON.parse(ours[0])).toMatchObject({
      status: 500,
      route: "GET /unwritable",
      error: "TypeError",
      message: expect.stringContaining("ERR_INVALID_CHAR"),
      cause: expect.stringMatching(/^at /)
    })
  })
})

/**
 * Time limits need a statement that waits: a table locked from another session. The embedded
 * store runs one statement at a time in this process and cannot cut one (docs/limits.md, "The
 * embedded store"), so these run on PostgreSQL only.
 */
describe.skipIf(!process.env.TEST_DATABASE_URL)("store time limits on PostgreSQL", () => {
  const url = process.env.TEST_DATABASE_URL!
  let locker: pg.Client

  beforeAll(async () => {
    locker = new pg.Client({ connectionString: url })
    await locker.connect()
  })
  afterAll(() => locker?.end())

  /** Holds products' lock while `run` runs: reads of products wait on it, others do not. */
  const withProductsLocked = async <A>(run: () => Promise<A>): Promise<A> => {
    await locker.query("BEGIN")
    await locker.query("LOCK TABLE products IN ACCESS EXCLUSIVE MODE")
    try {
      return await run()
    } finally {
      await locker.query("ROLLBACK")
    }
  }

  const get = (host: TestHost, tenant: TestTenant, path: string) =>
    fetch(host.url + path, { headers: { authorization: `Bearer ${tenant.token}` } }).then(async (response) => ({
      status: response.status,
      retryAfter: response.headers.get("retry-after"),
      body: (await response.json()) as { code?: string }
    }))

  it("cuts a statement at the timeout with 503 STATEMENT_TIMEOUT and Retry-After, while other tenants answer", async () => {
    const host = await startTestHost({ kind: "postgres", url, limits: { statementTimeoutMs: 400 } })
    try {
      const [slow, other] = [await host.createTenant(), await host.createTenant()]
      await withProductsLocked(async () => {
        const started = performance.now()
        const cut = get(host, slow, "/products?limit=1")
        const meanwhile = await get(host, other, "/customers?limit=1")
        expect(meanwhile.status).toBe(200)
        const answer = await cut
        expect(answer.status).toBe(503)
        expect(answer.body.code).toBe("STATEMENT_TIMEOUT")
        expect(answer.retryAfter).toBe("1")
        expect(performance.now() - started).toBeLessThan(5_000)
      })
    } finally {
      await host.close()
    }
  })

  it("waits a bounded time for a pool connection, then 503 STORE_BUSY", async () => {
    const host = await startTestHost({ kind: "postgres", url, limits: { poolSize: 1, poolWaitMs: 300, statementTimeoutMs: 3_000 } })
    try {
      const [holder, other] = [await host.createTenant(), await host.createTenant()]
      await withProductsLocked(async () => {
        const holding = get(host, holder, "/products?limit=1")
        await new Promise((resolve) => setTimeout(resolve, 200))
        const busy = await get(host, other, "/customers?limit=1")
        expect(busy.status).toBe(503)
        expect(busy.body.code).toBe("STORE_BUSY")
        expect(busy.retryAfter).toBe("1")
        await locker.query("ROLLBACK")
        await locker.query("BEGIN")
        expect((await holding).status).toBe(200)
      })
    } finally {
      await host.close()
    }
  })


  /** A product of a new tenant, read once so that its key is known in memory: the next read by id is answered without a fiber. */
  const warmRead = async (host: TestHost) => {
    const tenant = await host.createTenant()
    const created = await host.request("POST", "/products", { token: tenant.token, body: { name: "Read by id" } })
    const path = `/products/${created.body.id}`
    expect((await get(host, tenant, path)).status).toBe(200)
    return { tenant, path }
  }

  it.each([
    ["lists", false],
    ["reads by id", true]
  ])("gives each tenant a bounded number of turns (%s): the rest get 429 TOO_MANY_CONCURRENT_REQUESTS, other tenants none", async (_name, byId) => {
    const host = await startTestHost({ kind: "postgres", url, limits: { statementTimeoutMs: 3_000 } }, { tenantGate: { concurrency: 1, waitMs: 300 } })
    try {
      const { tenant: busy, path } = byId ? await warmRead(host) : { tenant: await host.createTenant(), path: "/products?limit=1" }
      const other = await host.createTenant()
      await withProductsLocked(async () => {
        const first = get(host, busy, path)
        await new Promise((resolve) => setTimeout(resolve, 100))
        const second = await get(host, busy, path)
        expect(second.status).toBe(429)
        expect(second.body.code).toBe("TOO_MANY_CONCURRENT_REQUESTS")
        expect(second.retryAfter).toBe("1")
        expect((await get(host, other, "/customers?limit=1")).status).toBe(200)
        await locker.query("ROLLBACK")
        await locker.query("BEGIN")
        expect((await first).status).toBe(200)
        // A request that waited its turn is answered once the turn ends.
        const [third, fourth] = await Promise.all([get(host, busy, path), get(host, busy, path)])
        expect([third.status, fourth.status]).toEqual([200, 200])
      })
    } finally {
      await host.close()
    }
  })

  it("cuts a read by id at the timeout with 503 STATEMENT_TIMEOUT", async () => {
    const host = await startTestHost({ kind: "postgres", url, limits: { statementTimeoutMs: 400 } })
    try {
      const { tenant, path } = await warmRead(host)
      await withProductsLocked(async () => {
        const answer = await get(host, tenant, path)
        expect(answer.status).toBe(503)
        expect(answer.body.code).toBe("STATEMENT_TIMEOUT")
        expect(answer.retryAfter).toBe("1")
      })
    } finally {
      await host.close()
    }
  })

  /**
   * These two find the host's session by its `application_name`. Behind a pooler in transaction
   * mode a server session may carry the name of whichever client used it last, and other files'
   * reads wait on the same lock, so there they are left to `pooler.test.ts`, which cancels a
   * statement it can tell apart.
   */
  const namesItsSessions = process.env.ERP_DB_POOLER !== "transaction"

  it.runIf(namesItsSessions)("gives a tenant's turn back and cancels the statement when the client of a read by id goes away", async () => {
    const host = await startTestHost({ kind: "postgres", url, limits: { statementTimeoutMs: 10_000 }, applicationName: "erp-abort-test" }, { tenantGate: { concurrency: 1, waitMs: 300 } })
    try {
      const { tenant, path } = await warmRead(host)
      await withProductsLocked(async () => {
        const client = new AbortController()
        const read = fetch(host.url + path, { headers: { authorization: `Bearer ${tenant.token}` }, signal: client.signal }).catch((error: Error) => error.name)
        const waiting = async () =>
          (await locker.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'erp-abort-test' AND wait_event_type = 'Lock'`)).rows[0].n as number
        for (let tries = 0; tries < 100 && (await waiting()) === 0; tries++) await new Promise((resolve) => setTimeout(resolve, 20))
        expect(await waiting()).toBe(1)
        client.abort()
        expect(await read).toBe("AbortError")
        // The tenant's one turn is free again while the table is still locked, and the statement no longer waits.
        expect((await get(host, tenant, "/customers?limit=1")).status).toBe(200)
        for (let tries = 0; tries < 100 && (await waiting()) > 0; tries++) await new Promise((resolve) => setTimeout(resolve, 20))
        expect(await waiting()).toBe(0)
      })
    } finally {
      await host.close()
    }
  })

  it.runIf(namesItsSessions).each([
    ["a list", false],
    ["a read by id", true]
  ])("retries %s once on a new connection when its connection dies under it", async (_name, byId) => {
    const host = await startTestHost({ kind: "postgres", url, limits: { statementTimeoutMs: 4_000 }, applicationName: "erp-retry-test" })
    try {
      const { tenant, path } = byId ? await warmRead(host) : { tenant: await host.createTenant(), path: "/products?limit=1" }
      await withProductsLocked(async () => {
        const read = get(host, tenant, path)
        // The read's session, waiting on the lock: killed as a crash or a failover would.
        let killed = 0
        for (let tries = 0; tries < 100 && killed === 0; tries++) {
          await new Promise((resolve) => setTimeout(resolve, 50))
          const { rows } = await locker.query<{ killed: boolean }>(
            `SELECT pg_terminate_backend(pid) AS killed FROM pg_stat_activity
             WHERE application_name = 'erp-retry-test' AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()`
          )
          killed = rows.filter((row) => row.killed).length
        }
        expect(killed).toBe(1)
        await locker.query("ROLLBACK")
        await locker.query("BEGIN")
        const answer = await read
        expect(answer.status, JSON.stringify(answer.body)).toBe(200)
      })
    } finally {
      await host.close()
    }
  })
})
