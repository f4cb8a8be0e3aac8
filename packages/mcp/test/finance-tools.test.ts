import { ALL_PERMISSIONS, layerCore, Tenancy } from "@erp/core"
import { Effect, ManagedRuntime } from "effect"
import * as fs from "node:fs"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { storeKinds, testStore } from "../../../test/support/stores.js"
import { connectClient, keyPrincipal, type TestClient } from "./support.js"

/** The finance actions as an agent uses them: allocate, unallocate and cancel tools, and an OFX statement passed as text. */
describe.each(storeKinds)("MCP finance tools on %s", (kind) => {
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

  it("imports a statement given as text, then allocates, unallocates and cancels through the action tools", async () => {
    const { tools } = await client.client.listTools()
    const allocateTool = tools.find((tool) => tool.name === "allocate_payable")!
    expect(allocateTool.inputSchema.required).toEqual(["id", "financial_transaction_id", "allocated_amount"])
    expect(tools.find((tool) => tool.name === "unallocate_payable")!.inputSchema.required).toEqual(["id", "allocationId"])
    expect(tools.find((tool) => tool.name === "import_ofx_financial_account")!.inputSchema.required).toEqual(["id", "ofx"])

    const account = await client.ok("create_financial_account", { name: "Itaú", type: "checking" })
    const statement = new TextDecoder("windows-1252").decode(fs.readFileSync(new URL("../../../test/fixtures/ofx/itau-2024-01.ofx", import.meta.url)))
    expect(await client.ok("import_ofx_financial_account", { id: account.id, ofx: statement })).toMatchObject({ imported: 6, duplicates: 0 })
    expect(await client.ok("import_ofx_financial_account", { id: account.id, ofx: statement })).toMatchObject({ imported: 0, duplicates: 6 })
    const outgoing = (await client.ok("list_financial_transactions", { filters: { account_id: account.id, fitid: "20240105001" } })).data[0]
    expect(outgoing.memo).toBe("PIX ENVIADO TORREFAÇÃO SERRA AZUL")

    const payable = await client.ok("create_payable", { amount: "1250", due_date: "2031-01-10" })
    const allocation = await client.ok("allocate_payable", { id: payable.id, financial_transaction_id: outgoing.id, allocated_amount: "1250" })
    expect(allocation).toMatchObject({ payable_id: payable.id, allocated_amount: "1250.000000" })
    expect(await client.ok("get_payable", { id: payable.id })).toMatchObject({ status: "paid", paid_at: "2024-01-05" })
    expect((await client.refused("cancel_payable", { id: payable.id }, 422)).code).toBe("HAS_ALLOCATIONS")
    expect((await client.refused("allocate_payable", { id: payable.id, financial_transaction_id: outgoing.id }, 400)).details.fields).toHaveProperty("allocated_amount")
    expect(await client.ok("unallocate_payable", { id: payable.id, allocationId: allocation.id })).toEqual({ id: payable.id, done: true })
    expect(await client.ok("cancel_payable", { id: payable.id })).toMatchObject({ status: "cancelled" })
    expect((await client.refused("import_ofx_financial_account", { id: account.id, ofx: "nope" }, 422)).code).toBe("INVALID_OFX")
  })
})
