import { ensureDemoTenant } from "@erp/core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { storeKinds, testStore } from "../../test/support/stores.js"
import { PREFIX, startHost } from "../fetch-handler.js"

describe.each(storeKinds)("embedding the fetch handler in node:http on %s", (kind) => {
  let host: Awaited<ReturnType<typeof startHost>>
  let token: string

  beforeAll(async () => {
    host = await startHost(0, { store: testStore(kind) })
    const demo = kind === "pglite" ? await host.erp.core.runPromise(ensureDemoTenant()) : undefined
    token = demo?.token ?? ""
  })
  afterAll(() => host?.close())

  it("serves the app's own routes beside the API", async () => {
    const response = await fetch(`${host.url}/`)
    expect(await response.text()).toBe("my app\n")
  })

  it("serves /health and the error contract under the prefix", async () => {
    const health = await fetch(`${host.url}${PREFIX}/health`)
    expect(health.status).toBe(200)
    expect(health.headers.get("x-request-id")).toBeTruthy()
    const unauthorized = await fetch(`${host.url}${PREFIX}/products`)
    expect(unauthorized.status).toBe(401)
    expect(await unauthorized.json()).toMatchObject({ status_code: 401, error: "Unauthorized" })
  })

  it.runIf(kind === "pglite")("creates and reads a product through the embedded handler", async () => {
    const created = await fetch(`${host.url}${PREFIX}/products`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "Embedded", sale_price: "1.25" })
    })
    expect(created.status).toBe(201)
    const product = (await created.json()) as { id: string }
    const fetched = await fetch(`${host.url}${PREFIX}/products/${product.id}`, { headers: { authorization: token } })
    expect(await fetched.json()).toMatchObject({ name: "Embedded", sale_price: "1.250000" })
  })
})
