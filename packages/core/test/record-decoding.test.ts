import { Cause, Effect, Exit, ManagedRuntime } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { storeKinds, testStore } from "../../../test/support/stores.js"
import { asOperator, layerCore, type Principal, products, ResourceEngine, Tenancy } from "../src/index.js"

/**
 * The repository decodes every record the store builds by the resource's stored-record schema:
 * what a client reads is what the declaration says, and a row it does not describe fails the
 * request as the store's defect instead of reaching the client.
 */
describe.each(storeKinds)("records decoded by their declaration on %s", (kind) => {
  const runtime = ManagedRuntime.make(layerCore(testStore(kind)))
  let principal: Principal

  beforeAll(async () => {
    const tenant = await runtime.runPromise(Effect.flatMap(Tenancy, (tenancy) => tenancy.createTenant({ name: "Decoding", countryCode: "BR" })))
    principal = asOperator(tenant, "decoding-test")
  })
  afterAll(() => runtime.dispose())

  it("answers a stored record in the declared form, and refuses one whose stored value the declaration does not describe", async () => {
    const created = await runtime.runPromise(Effect.flatMap(ResourceEngine, (engine) => engine.create(products, principal, { name: "Decoded", sale_price: "10.5", metadata: { color: "red" } })))
    expect(created.sale_price).toBe("10.500000")
    expect(created.metadata).toEqual({ color: "red" })

    // A metadata value that is not an object: the column takes any JSON, the declaration does not.
    await runtime.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) => sql`UPDATE products SET metadata = '[1, 2]'::jsonb WHERE id = ${String(created.id)}`))
    const exit = await runtime.runPromiseExit(Effect.flatMap(ResourceEngine, (engine) => engine.get(products, principal, String(created.id), [])))
    expect(Exit.isFailure(exit)).toBe(true)
    if (Exit.isFailure(exit)) {
      expect(Cause.hasDies(exit.cause)).toBe(true)
      expect(Cause.pretty(exit.cause)).toMatch(/metadata/)
    }
  })
})
