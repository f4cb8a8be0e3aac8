import { Effect, ManagedRuntime } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { storeKinds, testStore } from "../../../test/support/stores.js"
import { asOperator, customers, IdempotencyKeys, IdempotentWrite, layerCore, type Principal, ResourceEngine, Tenancy } from "../src/index.js"

/**
 * A host that stops between a write's commit and keeping its answer leaves the key without an
 * answer. The key says in the write's own transaction that the write committed, so neither the
 * request's own release nor a retry after the lease runs the write a second time.
 */
describe.each(storeKinds)("an idempotency key whose write committed without its answer, on %s", (kind) => {
  const runtime = ManagedRuntime.make(layerCore(testStore(kind)))
  let principal: Principal
  let tenantId: string

  beforeAll(async () => {
    const tenant = await runtime.runPromise(Effect.flatMap(Tenancy, (tenancy) => tenancy.createTenant({ name: "Commits", countryCode: "BR" })))
    tenantId = tenant.id
    principal = asOperator(tenant, "idempotency-test")
  })
  afterAll(() => runtime.dispose())

  /** Claims `key`, writes a customer under it (or not), gives the key up as a dying request does, and lets its lease run out. */
  const writeAndStop = (key: string, underKey: boolean) =>
    runtime.runPromise(Effect.gen(function* () {
      const keys = yield* IdempotencyKeys
      const engine = yield* ResourceEngine
      const sql = yield* SqlClient.SqlClient
      expect((yield* keys.claim(tenantId, key, "fingerprint")).kind).toBe("claimed")
      const write = engine.create(customers, principal, { legal_name: `Under ${key}` })
      const created = yield* (underKey ? Effect.provideService(write, IdempotentWrite, { tenantId, key, fingerprint: "fingerprint" }) : write)
      yield* keys.release(tenantId, key, "fingerprint")
      yield* sql`UPDATE idempotency_keys SET locked_until = now() - interval '1 second' WHERE tenant_id = ${tenantId}::uuid AND key = ${key}`
      return { created, claim: yield* keys.claim(tenantId, key, "fingerprint") }
    }))

  it("answers a retry that the write committed, naming its record, and never runs it again", async () => {
    const { created, claim } = await writeAndStop(randomUUID(), true)
    expect(claim).toEqual({ kind: "committed", record: { resource: "customers", id: String(created.id) } })
  })

  it("runs again a request whose write did not run under the key (the retry may fix it)", async () => {
    const { claim } = await writeAndStop(randomUUID(), false)
    expect(claim).toEqual({ kind: "claimed" })
  })
})
