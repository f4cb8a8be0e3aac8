import { addDays, ALL_PERMISSIONS, layerCore, parsePermissionSpecs, Tenancy, todayIn } from "@erp/core"
import { Effect, ManagedRuntime, Result } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { storeKinds, testStore } from "../../../test/support/stores.js"
import { connectClient, keyPrincipal, type TestClient } from "./support.js"

/** The reports as an agent calls them: one read-only tool each, answering the route's JSON (validated by the client against the output schema). */
describe.each(storeKinds)("MCP report tools on %s", (kind) => {
  const runtime = ManagedRuntime.make(layerCore(testStore(kind)))
  let client: TestClient
  let withoutReports: TestClient

  beforeAll(async () => {
    const tenant = await runtime.runPromise(Effect.flatMap(Tenancy, (tenancy) => tenancy.createTenant({ name: "Reports over MCP", countryCode: "BR" })))
    const key = (permissions: Parameters<Tenancy["Service"]["createApiKey"]>[0]["permissions"]) =>
      runtime.runPromise(Effect.flatMap(Tenancy, (tenancy) => tenancy.createApiKey({ tenantId: tenant.id, name: "mcp reports", permissions })))
    client = await connectClient(runtime, keyPrincipal((await key(ALL_PERMISSIONS)).token))
    withoutReports = await connectClient(runtime, keyPrincipal((await key(Result.getOrThrow(parsePermissionSpecs(["receivables:*"])))).token))
  })
  afterAll(async () => {
    await client?.close()
    await withoutReports?.close()
    await runtime.dispose()
  })

  it("lists a read-only tool per report, each argument described", async () => {
    const { tools } = await client.client.listTools()
    const reports = tools.filter((tool) => tool.name.startsWith("report_"))
    expect(reports.map((tool) => tool.name)).toEqual(["report_receivables_aging", "report_payables_aging", "report_cash_flow", "report_income_statement", "report_sales"])
    for (const tool of reports) {
      expect(tool.annotations?.readOnlyHint).toBe(true)
      for (const property of Object.values(tool.inputSchema.properties ?? {})) expect(property).toHaveProperty("description")
    }
  })

  it("answers the aging and cash flow an agent asks for, and the spec's 400 and 403", async () => {
    const today = todayIn("America/Sao_Paulo")
    const customer = await client.ok("create_customer", { legal_name: "Acme" })
    await client.ok("create_receivable", { customer_id: customer.id, amount: "120.5", due_date: addDays(today, -45) })
    const aging = await client.ok("report_receivables_aging", {})
    expect(aging.rows).toEqual([expect.objectContaining({ customer_id: customer.id, name: "Acme", total: "120.500000", count: 1 })])
    expect(aging.rows[0].amounts["31-60"]).toBe("120.500000")
    const flow = await client.ok("report_cash_flow", { from: addDays(today, -60), to: today, interval: "month" })
    expect(flow.periods.at(-1).closing).toBe("120.500000")

    const wrong = await client.refused("report_cash_flow", { interval: "year" }, 400)
    expect(wrong.details.fields).toHaveProperty("interval")
    expect((await client.refused("report_sales", { group_by: 3 }, 400)).details.fields).toHaveProperty("group_by")
    expect((await withoutReports.refused("report_receivables_aging", {}, 403)).message).toContain("reports:read")
  })
})
