import { ALL_PERMISSIONS, layerCore, Tenancy, TenantGate } from "@erp/core"
import { Deferred, Effect, ManagedRuntime } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { storeKinds, testStore } from "../../../test/support/stores.js"
import { connectClient, keyPrincipal } from "./support.js"

describe.each(storeKinds)("MCP calls take their tenant's turns in the store on %s", (kind) => {
  // One turn per tenant and almost no wait: concurrent calls of one tenant must be refused, not queued without bound.
  const runtime = ManagedRuntime.make(layerCore(testStore(kind), { tenantGate: { concurrency: 1, waitMs: 1 } }))
  afterAll(() => runtime.dispose())

  it("answers 429 TOO_MANY_CONCURRENT_REQUESTS to calls beyond the tenant's turns, as REST does", async () => {
    const { tenantId, token } = await runtime.runPromise(Effect.gen(function* () {
      const tenancy = yield* Tenancy
      const tenant = yield* tenancy.createTenant({ name: "Busy", countryCode: "BR" })
      return { tenantId: tenant.id, token: (yield* tenancy.createApiKey({ tenantId: tenant.id, name: "agent", permissions: ALL_PERMISSIONS })).token }
    }))
    const client = await connectClient(runtime, keyPrincipal(token))
    // The tenant's one turn is held here while the calls arrive (whether calls overlap by themselves
    // depends on the machine's timing): each waits its millisecond and is refused, as REST's are.
    const taken = await runtime.runPromise(Deferred.make<void>())
    const release = await runtime.runPromise(Deferred.make<void>())
    const holder = runtime.runPromise(Effect.flatMap(TenantGate, (gate) => gate.run(tenantId, Effect.andThen(Deferred.succeed(taken, undefined), Deferred.await(release)))))
    await runtime.runPromise(Deferred.await(taken))
    const results = await Promise.all(Array.from({ length: 4 }, () => client.call("list_countries", { limit: 100 })))
    await runtime.runPromise(Deferred.succeed(release, undefined))
    await holder
    expect(results.map((result) => result.isError)).toEqual([true, true, true, true])
    for (const result of results) expect(result.body).toMatchObject({ status_code: 429, code: "TOO_MANY_CONCURRENT_REQUESTS" })
    // The turn given back, the next call is answered.
    expect((await client.call("list_countries", { limit: 100 })).isError).toBe(false)
    await client.close()
  })
})
