import { ALL_PERMISSIONS, layerCore, Tenancy } from "@erp/core"
import { Effect, ManagedRuntime } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { storeKinds, testStore } from "../../../test/support/stores.js"
import { connectClient, keyPrincipal } from "./support.js"

describe.each(storeKinds)("MCP calls take their tenant's turns in the store on %s", (kind) => {
  // One turn per tenant and almost no wait: concurrent calls of one tenant must be refused, not queued without bound.
  const runtime = ManagedRuntime.make(layerCore(testStore(kind), { tenantGate: { concurrency: 1, waitMs: 1 } }))
  afterAll(() => runtime.dispose())

  it("answers 429 TOO_MANY_CONCURRENT_REQUESTS to calls beyond the tenant's turns, as REST does", async () => {
    const token = await runtime.runPromise(Effect.gen(function* () {
      const tenancy = yield* Tenancy
      const tenant = yield* tenancy.createTenant({ name: "Busy", countryCode: "BR" })
      return (yield* tenancy.createApiKey({ tenantId: tenant.id, name: "agent", permissions: ALL_PERMISSIONS })).token
    }))
    const client = await connectClient(runtime, keyPrincipal(token))
    const results = await Promise.all(Array.from({ length: 8 }, () => client.call("list_countries", { limit: 100 })))
    const refused = results.filter((result) => result.isError)
    expect(refused.length).toBeGreaterThan(0)
    expect(refused.length).toBeLessThan(8)
    for (const result of refused) expect(result.body).toMatchObject({ status_code: 429, code: "TOO_MANY_CONCURRENT_REQUESTS" })
    await client.close()
  })
})
