import { startServer } from "@erp/http"
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { storeKinds, testStore } from "../../test/support/stores.js"
import { placeOrder } from "../typed-client.js"

const run = promisify(execFile)

type Server = Awaited<ReturnType<typeof startServer>>

describe.each(storeKinds)("the typed client example against a live host on %s", (kind) => {
  let server: Server
  let token: string

  beforeAll(async () => {
    server = await startServer({ port: 0, store: testStore(kind), webhooks: false })
    const tenant = await server.tenants.create({ name: "Typed client", countryCode: "BR" })
    ;({ token } = await server.keys.create({ tenantId: tenant.id, name: "typed client", permissions: "all" }))
  })
  afterAll(() => server?.close())

  it("creates a customer, a product and an order, reads it back expanded, lists, and gets a typed 404", async () => {
    const result = await placeOrder(server.url, token)
    expect(result.total).toBe("69.970000")
    expect(result.order.items).toHaveLength(2)
    expect(result.customerWebsite).toBe("https://paoquente.example")
    expect(result.listed).toBe(1)
    expect(result.notFound).toBe("CUSTOMER_NOT_FOUND")
  })

  it("was compiled against the types of the document this host serves", async () => {
    // The build generates the types from the committed document; the host serves the one the code makes.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "erp-typed-"))
    try {
      const served = await fetch(`${server.url}/openapi.json`).then((response) => response.text())
      fs.writeFileSync(path.join(dir, "openapi.json"), served)
      await run(process.execPath, [
        "examples/node_modules/openapi-typescript/bin/cli.js",
        path.join(dir, "openapi.json"),
        "--output",
        path.join(dir, "erp-api.d.ts")
      ])
      expect(fs.readFileSync(path.join(dir, "erp-api.d.ts"), "utf8")).toBe(fs.readFileSync("examples/generated/erp-api.d.ts", "utf8"))
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  }, 60_000)
})
