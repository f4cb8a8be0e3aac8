import { ALL_PERMISSIONS, layerCore, Tenancy } from "@erp/core"
import { Effect, ManagedRuntime } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { storeKinds, testStore } from "../../../test/support/stores.js"
import { connectClient, keyPrincipal, type TestClient } from "./support.js"

/** Tool arguments pass the same rules as an HTTP body (issue 8): refusals, never a 500. */
describe.each(storeKinds)("MCP hostile arguments on %s", (kind) => {
  const runtime = ManagedRuntime.make(layerCore(testStore(kind)))
  let client: TestClient

  beforeAll(async () => {
    const { token } = await runtime.runPromise(Effect.gen(function* () {
      const tenancy = yield* Tenancy
      const tenant = yield* tenancy.createTenant({ name: "Agent", countryCode: "BR" })
      return yield* tenancy.createApiKey({ tenantId: tenant.id, name: "agent", permissions: ALL_PERMISSIONS })
    }))
    client = await connectClient(runtime, keyPrincipal(token))
  })
  afterAll(async () => {
    await client?.close()
    await runtime.dispose()
  })

  it("refuses prototype-named keys, NUL, lone surrogates and deep nesting as 400 naming the argument", async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ name: "a", constructor: 1 }, "constructor"],
      [{ name: "a", metadata: { toString: "x" } }, "metadata.toString"],
      [JSON.parse('{"name":"a","metadata":{"__proto__":{"x":1}}}'), "metadata"],
      [{ name: "a\u0000" }, "name"],
      [{ name: "a", tags: ["\ud800"] }, "tags.0"],
      [{ name: "a", metadata: JSON.parse(`${'{"a":'.repeat(40)}1${"}".repeat(40)}`) }, `metadata${".a".repeat(31)}`]
    ]
    for (const [args, field] of cases) {
      const body = await client.refused("create_product", args, 400)
      expect(body.code).toBe("INVALID_ARGUMENTS")
      expect(Object.keys(body.details.fields)).toEqual([field])
    }
    const filters = await client.refused("list_products", { filters: { name: "\u0000" } }, 400)
    expect(filters.message).toMatch(/NUL/)
  })

  it("answers 20,000 bad tags at once with one field named", async () => {
    const body = await client.refused("create_product", { name: "a", tags: Array.from({ length: 20_000 }, () => ({})) }, 400)
    expect(body.details.fields).toEqual({ tags: ["must have at most 1000 items"] })
  })
})
