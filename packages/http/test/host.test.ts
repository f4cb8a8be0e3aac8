import { parsePermissionSpecs } from "@erp/core"
import { Result } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestHost, type TestHost, type TestTenant } from "../../../test/support/host.js"
import { storeKinds, testStore } from "../../../test/support/stores.js"

const grants = (...specs: Array<string>) => Result.getOrThrow(parsePermissionSpecs(specs))

describe.each(storeKinds)("host on %s", (kind) => {
  let host: TestHost
  let tenant: TestTenant

  beforeAll(async () => {
    host = await startTestHost(testStore(kind))
    tenant = await host.createTenant()
  })
  afterAll(() => host?.close())

  it("answers /health without credentials", async () => {
    const response = await host.request("GET", "/health")
    expect(response.status).toBe(200)
    expect(response.body).toEqual({ status: "ok", version: expect.any(String) })
  })

  it("puts an x-request-id on every response and keeps a sane one from the caller", async () => {
    const generated = await host.request("GET", "/health")
    expect(generated.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/)
    const echoed = await host.request("GET", "/products", { headers: { "x-request-id": "trace-123" } })
    expect(echoed.headers.get("x-request-id")).toBe("trace-123")
    const replaced = await host.request("GET", "/health", { headers: { "x-request-id": "bad id with spaces" } })
    expect(replaced.headers.get("x-request-id")).not.toBe("bad id with spaces")
  })

  it("accepts api-version v1 or none, and refuses others with the accepted versions", async () => {
    expect((await host.request("GET", "/products", { token: tenant.token, headers: { "api-version": "v1" } })).status).toBe(200)
    const refused = await host.request("GET", "/products", { token: tenant.token, headers: { "api-version": "2024-01-01" } })
    expect(refused.status).toBe(400)
    expect(refused.body).toMatchObject({ status_code: 400, error: "Bad Request", code: "INVALID_API_VERSION" })
    expect(refused.body.message).toContain("Invalid api-version")
    expect(refused.body.message).toContain("v1")
  })

  it("answers unknown routes with the spec's 404 body", async () => {
    const response = await host.request("GET", "/no-such-thing", { token: tenant.token })
    expect(response.status).toBe(404)
    expect(response.body).toMatchObject({ status_code: 404, error: "Not Found", message: expect.any(String) })
  })

  it("refuses bodies over 1 MiB with 413 and stores nothing", async () => {
    const response = await host.request("POST", "/products", { token: tenant.token, body: { name: "x".repeat(1_100_000) } })
    expect(response.status).toBe(413)
    expect(response.body).toMatchObject({ status_code: 413, error: "Payload Too Large" })
    const list = await host.request("GET", "/products?search=xxxx", { token: tenant.token })
    expect(list.body.data).toEqual([])
  })

  it("answers malformed JSON and non-object bodies with 400", async () => {
    const malformed = await host.request("POST", "/products", { token: tenant.token, body: "{not json" })
    expect(malformed.status).toBe(400)
    expect(malformed.body.code).toBe("INVALID_JSON")
    const array = await host.request("POST", "/products", { token: tenant.token, body: [1, 2] })
    expect(array.status).toBe(400)
    for (const blank of ["", "  \n"]) {
      const empty = await host.request("POST", "/products", { token: tenant.token, body: blank })
      expect(empty.status).toBe(400)
      expect(empty.body).toMatchObject({ status_code: 400, code: "INVALID_BODY" })
    }
  })

  it("reads a body as JSON whatever Content-Type it is sent with, as curl -d sends it", async () => {
    const response = await fetch(`${host.url}/products`, {
      method: "POST",
      headers: { authorization: `Bearer ${tenant.token}`, "content-type": "application/x-www-form-urlencoded" },
      body: JSON.stringify({ name: "Sent by curl -d" })
    })
    expect(response.status).toBe(201)
    expect(await response.json()).toMatchObject({ name: "Sent by curl -d" })
  })

  it("refuses a caller without credentials before reading its body", async () => {
    const response = await host.request("POST", "/products", { body: { name: "x".repeat(1_100_000) } })
    expect(response.status).toBe(401)
  })

  describe("authentication", () => {
    it("takes the token as Bearer or bare", async () => {
      expect((await host.request("GET", "/products", { headers: { authorization: `Bearer ${tenant.token}` } })).status).toBe(200)
      expect((await host.request("GET", "/products", { headers: { authorization: tenant.token } })).status).toBe(200)
    })

    it.each([
      ["missing", undefined],
      ["malformed", "Bearer not-a-key"],
      ["unknown", "Bearer sk_aaaaaaaaaaaaaaaa_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"]
    ])("answers a %s token with 401 and a WWW-Authenticate challenge", async (_, authorization) => {
      const response = await host.request("GET", "/products", { headers: authorization ? { authorization } : {} })
      expect(response.status).toBe(401)
      expect(response.body).toMatchObject({ status_code: 401, error: "Unauthorized" })
      expect(response.headers.get("www-authenticate")).toMatch(/^Bearer/)
    })

    it("refuses a right public id with a wrong secret", async () => {
      const forged = tenant.token.slice(0, -4) + (tenant.token.endsWith("AAAA") ? "BBBB" : "AAAA")
      expect((await host.request("GET", "/products", { token: forged })).status).toBe(401)
    })

    it("refuses an expired key with 401", async () => {
      const { token } = await host.createKey(tenant.id, grants("products:read"), { expiresAt: "2020-01-01" })
      const response = await host.request("GET", "/products", { token })
      expect(response.status).toBe(401)
      expect(response.body.message).toContain("expired")
    })

    it("accepts a key expiring in the future", async () => {
      const { token } = await host.createKey(tenant.id, grants("products:read"), { expiresAt: "2999-01-01" })
      expect((await host.request("GET", "/products", { token })).status).toBe(200)
    })

    it("refuses a revoked key with 401 from the moment it is revoked", async () => {
      const { key, token } = await host.createKey(tenant.id, grants("products:read"))
      expect((await host.request("GET", "/products", { token })).status).toBe(200)
      await host.revokeKey(key.id)
      const response = await host.request("GET", "/products", { token })
      expect(response.status).toBe(401)
      expect(response.body.message).toContain("revoked")
    })
  })
})
