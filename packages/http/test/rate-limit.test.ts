import { NodeHttpServer } from "@effect/platform-node"
import { layerRateLimiterMemory, type RateLimit } from "@erp/core"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, ManagedRuntime, Option } from "effect"
import { HttpRouter, HttpServer, HttpServerRequest, HttpServerResponse } from "effect/http"
import { randomUUID } from "node:crypto"
import { createServer } from "node:http"
import { afterAll, beforeAll } from "vitest"
import { clientAddress, clientLimitKey, rateLimitHeaders, tooManyRequests, withRateLimit } from "../src/rate-limit.js"

const RULE: RateLimit = { limit: 3, windowSeconds: 60 }

/** Each test names its own counter in `x-test-key`, so tests never share one. */
const keyOf = Effect.map(HttpServerRequest.HttpServerRequest, (request) => `test:${request.headers["x-test-key"]}`)

const app = Layer.mergeAll(
  HttpRouter.add("GET", "/limited", Effect.flatMap(keyOf, (key) => withRateLimit(key, RULE, Effect.succeed(HttpServerResponse.jsonUnsafe({ ok: true }))))),
  HttpRouter.add("GET", "/failing", Effect.flatMap(keyOf, (key) => withRateLimit(key, RULE, Effect.die("boom")))),
  HttpRouter.add("GET", "/whoami", (request) => Effect.succeed(HttpServerResponse.text(clientAddress(request))))
)

describe("rate-limited endpoints over HTTP", () => {
  let runtime: ManagedRuntime.ManagedRuntime<HttpServer.HttpServer, unknown>
  let url: string

  beforeAll(async () => {
    runtime = ManagedRuntime.make(
      HttpRouter.serve(app, { disableLogger: true, disableListenLog: true }).pipe(
        Layer.provide(layerRateLimiterMemory),
        Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" }))
      )
    )
    const address = await runtime.runPromise(Effect.map(HttpServer.HttpServer, (server) => server.address))
    if (address._tag === "UnixPathAddress") throw new Error("expected a TCP address")
    url = `http://127.0.0.1:${address.port}`
  })
  afterAll(() => runtime?.dispose())

  const call = (path: string, key: string) => fetch(url + path, { headers: { "x-test-key": key } })

  it("puts the RateLimit-* headers on allowed responses", async () => {
    const key = randomUUID()
    const first = await call("/limited", key)
    expect(first.status).toBe(200)
    expect(await first.json()).toEqual({ ok: true })
    expect(first.headers.get("RateLimit-Limit")).toBe("3")
    expect(first.headers.get("RateLimit-Remaining")).toBe("2")
    const reset = Number(first.headers.get("RateLimit-Reset"))
    expect(reset).toBeGreaterThanOrEqual(1)
    expect(reset).toBeLessThanOrEqual(60)
    expect(first.headers.get("Retry-After")).toBeNull()
    expect((await call("/limited", key)).headers.get("RateLimit-Remaining")).toBe("1")
  })

  it("answers 429 with the spec's body, Retry-After and the RateLimit-* headers once over the limit", async () => {
    const key = randomUUID()
    const allowed = []
    for (let i = 0; i < RULE.limit; i++) allowed.push((await call("/limited", key)).status)
    expect(allowed).toEqual([200, 200, 200])
    const refused = await call("/limited", key)
    expect(refused.status).toBe(429)
    expect(refused.headers.get("content-type")).toContain("application/json")
    const body = (await refused.json()) as { message: string }
    expect(body).toEqual({ status_code: 429, error: "Too Many Requests", code: "RATE_LIMITED", message: expect.stringMatching(/Retry in \d+ seconds?\.$/) })
    const retryAfter = Number(refused.headers.get("Retry-After"))
    expect(retryAfter).toBeGreaterThanOrEqual(1)
    expect(retryAfter).toBeLessThanOrEqual(60)
    expect(body.message).toContain(`Retry in ${retryAfter} second`)
    expect(refused.headers.get("RateLimit-Limit")).toBe("3")
    expect(refused.headers.get("RateLimit-Remaining")).toBe("0")
    expect(refused.headers.get("RateLimit-Reset")).toBe(String(retryAfter))
  })

  it("counts each key on its own", async () => {
    const busy = randomUUID()
    for (let i = 0; i <= RULE.limit; i++) await call("/limited", busy)
    expect((await call("/limited", busy)).status).toBe(429)
    expect((await call("/limited", randomUUID())).status).toBe(200)
  })

  it("keeps the RateLimit-* headers on a response rendered from a failure", async () => {
    const response = await call("/failing", randomUUID())
    expect(response.status).toBe(500)
    expect(response.headers.get("RateLimit-Remaining")).toBe("2")
  })

  it("keys callers by the socket address", async () => {
    const response = await fetch(url + "/whoami", { headers: { "x-forwarded-for": "203.0.113.9" } })
    expect(await response.text()).toBe("127.0.0.1")
  })
})

describe("rate-limit helpers", () => {
  const request = (headers: Record<string, string>, remoteAddress?: string) => {
    const base = HttpServerRequest.fromWeb(new Request("http://localhost/oauth/authorize", { headers }))
    return remoteAddress === undefined ? base : base.modify({ remoteAddress: Option.some(remoteAddress) })
  }

  it("takes the client address from the socket, X-Forwarded-For's last entry (the trusted proxy's) only when the proxy is trusted", () => {
    const forwarded = { "x-forwarded-for": "198.51.100.1, 203.0.113.9" }
    expect(clientAddress(request(forwarded, "10.0.0.2"))).toBe("10.0.0.2")
    expect(clientAddress(request(forwarded, "10.0.0.2"), true)).toBe("203.0.113.9")
    expect(clientAddress(request({ "x-forwarded-for": "203.0.113.9:5060" }, "10.0.0.2"), true)).toBe("203.0.113.9")
    expect(clientAddress(request({ "x-forwarded-for": "[2001:DB8::1]:443" }, "10.0.0.2"), true)).toBe("2001:db8::1")
    expect(clientAddress(request({}, "10.0.0.2"), true)).toBe("10.0.0.2")
    expect(clientAddress(request({ "x-forwarded-for": "198.51.100.1, " }, "10.0.0.2"), true)).toBe("10.0.0.2")
    expect(clientAddress(request({}, "::ffff:192.0.2.7"))).toBe("192.0.2.7")
    expect(clientAddress(request({}, "::ffff:c000:207"))).toBe("192.0.2.7")
    expect(clientAddress(request({ "x-forwarded-for": " " }), true)).toBe("unknown")
    expect(clientAddress(request({}))).toBe("unknown")
  })

  it("keys IPv6 callers by their /64, IPv4 ones (mapped or not) by their address", () => {
    expect(clientLimitKey(request({}, "2001:db8:a:b:1:2:3:4"))).toBe("2001:db8:a:b::/64")
    expect(clientLimitKey(request({}, "2001:0DB8:000a:000b::ffff"))).toBe("2001:db8:a:b::/64")
    expect(clientLimitKey(request({}, "fe80::1%eth0"))).toBe("fe80::/64")
    expect(clientLimitKey(request({}, "::1"))).toBe("::/64")
    expect(clientLimitKey(request({}, "::ffff:192.0.2.7"))).toBe("192.0.2.7")
    expect(clientLimitKey(request({}, "192.0.2.7"))).toBe("192.0.2.7")
    expect(clientLimitKey(request({ "x-forwarded-for": "2001:db8:a:b::9" }, "10.0.0.2"), true)).toBe("2001:db8:a:b::/64")
    expect(clientLimitKey(request({ "x-forwarded-for": "not an address" }, "10.0.0.2"), true)).toBe("not an address")
  })

  it("builds the headers and the 429 from a decision", () => {
    const decision = { allowed: false, limit: 20, remaining: 0, resetSeconds: 1 }
    expect(rateLimitHeaders(decision)).toEqual({ "ratelimit-limit": "20", "ratelimit-remaining": "0", "ratelimit-reset": "1" })
    const response = tooManyRequests(decision, "Too many authorization requests from this address")
    expect(response.status).toBe(429)
    expect(response.body._tag === "Uint8Array" && JSON.parse(new TextDecoder().decode(response.body.body))).toEqual({
      status_code: 429,
      error: "Too Many Requests",
      code: "RATE_LIMITED",
      message: "Too many authorization requests from this address. Retry in 1 second."
    })
    expect(response.headers["retry-after"]).toBe("1")
    expect(response.headers["ratelimit-reset"]).toBe("1")
  })
})
