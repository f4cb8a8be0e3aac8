import { ALL_PERMISSIONS, layerCore, type StoreLocation, Tenancy } from "@erp/core"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { Effect, ManagedRuntime } from "effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { storeKinds, testDataDir, testStore } from "../../../test/support/stores.js"

/** The installed `erp` binary (it runs `dist/main.js`); `npm run build` must have run. */
const BIN = path.resolve("packages/cli/bin/erp.js")

/** Opens the store in this process, uses it, and closes it again: PGlite allows one process per folder. */
const withStore = async <A, E>(store: StoreLocation, effect: Effect.Effect<A, E, Tenancy>): Promise<A> => {
  const runtime = ManagedRuntime.make(layerCore(store))
  try {
    return await runtime.runPromise(effect)
  } finally {
    await runtime.dispose()
  }
}

/** Only the flags choose the store, whatever the developer's shell says. */
const childEnv: Record<string, string> = { ...(process.env as Record<string, string>), DATABASE_URL: "", ERP_DATA_DIR: "" }

const storeFlags = (store: StoreLocation) =>
  store.kind === "postgres" ? ["--database-url", store.url] : ["--data-dir", store.dataDir!]

const mcpArgs = (token: string, store: StoreLocation) => [BIN, "mcp", "--api-key", token, ...storeFlags(store)]

/** Runs `erp mcp` without a client: for keys it must refuse before serving anything. */
const runRefused = (token: string, store: StoreLocation) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, mcpArgs(token, store), { env: childEnv })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk) => (stdout += chunk))
    child.stderr.on("data", (chunk) => (stderr += chunk))
    child.on("close", (code) => resolve({ code, stdout, stderr }))
  })

const lockFile = (store: StoreLocation) => (store.kind === "pglite" ? path.join(store.dataDir!, "erp.lock") : undefined)

describe.each(storeKinds)("erp mcp over stdio on %s", (kind) => {
  let store: StoreLocation
  let tenantId: string
  let tenantName: string
  let token: string
  let revokedToken: string
  let userEmail: string
  let otherTenantId: string

  beforeAll(async () => {
    expect(fs.existsSync(BIN), "build the CLI first: npm run build").toBe(true)
    store = kind === "pglite" ? { kind: "pglite", dataDir: testDataDir() } : testStore(kind)
    tenantName = `Stdio ${randomUUID().slice(0, 8)}`
    await withStore(store, Effect.gen(function* () {
      const tenancy = yield* Tenancy
      const tenant = yield* tenancy.createTenant({ name: tenantName, countryCode: "BR" })
      tenantId = tenant.id
      token = (yield* tenancy.createApiKey({ tenantId, name: "agent", permissions: ALL_PERMISSIONS })).token
      const revoked = yield* tenancy.createApiKey({ tenantId, name: "old agent", permissions: ALL_PERMISSIONS })
      yield* tenancy.revokeApiKey(revoked.key.id)
      revokedToken = revoked.token
      // A user who is admin here and a read-only member of a second tenant.
      userEmail = `stdio-${randomUUID().slice(0, 8)}@example.com`
      const user = yield* tenancy.createUser({ email: userEmail, name: "Stdio User" })
      yield* tenancy.addMember({ tenantId, userId: user.id, role: "admin" })
      const other = yield* tenancy.createTenant({ name: `${tenantName} US`, countryCode: "US" })
      otherTenantId = other.id
      yield* tenancy.addMember({ tenantId: other.id, userId: user.id, role: "member", permissions: [{ resource_code: "products", can_read: true, can_create: false, can_update: false, can_delete: false }] })
    }))
  })

  afterAll(() => {
    if (store?.kind === "pglite") fs.rmSync(store.dataDir!, { recursive: true, force: true })
  })

  it("serves the tools to a client, stores what it writes, and lets go of the store when the client leaves", async () => {
    let log = ""
    const transport = new StdioClientTransport({ command: process.execPath, args: mcpArgs(token, store), env: childEnv, stderr: "pipe" })
    transport.stderr?.on("data", (chunk) => (log += chunk))
    const client = new Client({ name: "erp-stdio-test", version: "0.0.0" })
    // Anything but JSON-RPC on stdout surfaces here as a parse error.
    const transportErrors: Array<Error> = []
    client.onerror = (error) => transportErrors.push(error)
    await client.connect(transport)

    expect(client.getServerVersion()?.name).toBe("erp")
    const { tools } = await client.listTools()
    expect(tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(["list_tenants", "list_products", "create_product", "delete_customer"]))

    const tenants = await client.callTool({ name: "list_tenants", arguments: {} })
    expect(tenants.structuredContent).toEqual({ data: [{ id: tenantId, name: tenantName, country_code: "BR", role: null }] })

    const created = await client.callTool({ name: "create_product", arguments: { name: "Stdio chair", sale_price: "99.9" } })
    expect(created.isError).toBeFalsy()
    const product = created.structuredContent as { id: string; sale_price: string }
    expect(product.sale_price).toBe("99.900000")
    const listed = await client.callTool({ name: "list_products", arguments: { filters: { name: "Stdio chair" } } })
    expect((listed.structuredContent as { data: Array<{ id: string }> }).data.map((row) => row.id)).toEqual([product.id])

    const refused = await client.callTool({ name: "get_product", arguments: { id: "nope" } })
    expect(refused.isError).toBe(true)
    expect(JSON.parse((refused.content as Array<{ text: string }>)[0].text)).toMatchObject({ status_code: 400, code: "INVALID_ID" })

    await client.close()
    expect(transportErrors, log).toEqual([])
    const lock = lockFile(store)
    if (lock) expect(fs.existsSync(lock), `the folder is still locked after the client left: ${log}`).toBe(false)

    // A new session (a new process) finds what the first one stored.
    const again = new Client({ name: "erp-stdio-test", version: "0.0.0" })
    await again.connect(new StdioClientTransport({ command: process.execPath, args: mcpArgs(token, store), env: childEnv, stderr: "ignore" }))
    const persisted = await again.callTool({ name: "get_product", arguments: { id: product.id } })
    expect(persisted.structuredContent).toEqual(product)
    await again.close()
  }, 60_000)

  it("answers the calls a client sent before closing stdin, as a shell pipe does", async () => {
    const child = spawn(process.execPath, mcpArgs(token, store), { env: childEnv })
    let stdout = ""
    child.stdout.on("data", (chunk) => (stdout += chunk))
    const exited = new Promise<number | null>((resolve) => child.on("close", resolve))
    const message = (body: object) => `${JSON.stringify({ jsonrpc: "2.0", ...body })}\n`
    child.stdin.end(
      message({ id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "pipe", version: "1" } } }) +
      message({ method: "notifications/initialized" }) +
      message({ id: 2, method: "tools/call", params: { name: "create_product", arguments: { name: "Piped lamp" } } })
    )
    expect(await exited).toBe(0)
    const answers = stdout.trim().split("\n").map((line) => JSON.parse(line) as { id?: number; result?: { isError?: boolean; structuredContent?: { name?: string } } })
    const call = answers.find((answer) => answer.id === 2)
    expect(call?.result?.isError, stdout).toBeFalsy()
    expect(call?.result?.structuredContent?.name).toBe("Piped lamp")
  }, 60_000)

  it("starts from examples/mcp-client-config.json: our CLI by path, never npx (an unrelated npm package is named erp)", async () => {
    const config = JSON.parse(fs.readFileSync("examples/mcp-client-config.json", "utf8")) as {
      mcpServers: { erp: { command: string; args: Array<string>; env: Record<string, string> } }
    }
    const entry = config.mcpServers.erp
    expect(entry.command).toBe("node")
    expect(entry.args[0]).toMatch(/\/packages\/cli\/bin\/erp\.js$/)
    expect(JSON.stringify(config)).not.toMatch(/npx|npm exec/)
    // The entry as a user fills it in: this checkout's path, their key, their store.
    const args = [BIN, ...entry.args.slice(1), ...storeFlags(store)]
    // PostgreSQL needs the hosts' secret key: the entry names it for the user to fill in.
    expect(Object.keys(entry.env)).toEqual(expect.arrayContaining(["ERP_API_KEY", "DATABASE_URL", "ERP_SECRET_KEY"]))
    const env = { ...childEnv, ...entry.env, ERP_API_KEY: token, DATABASE_URL: store.kind === "postgres" ? store.url : "", ERP_SECRET_KEY: process.env.ERP_SECRET_KEY! }
    const client = new Client({ name: "erp-config-test", version: "0.0.0" })
    await client.connect(new StdioClientTransport({ command: process.execPath, args, env, stderr: "ignore" }))
    const tenants = await client.callTool({ name: "list_tenants", arguments: {} })
    expect(tenants.structuredContent).toEqual({ data: [{ id: tenantId, name: tenantName, country_code: "BR", role: null }] })
    await client.close()
  }, 60_000)

  it("serves a local user (--user) in each of their tenants, within each role", async () => {
    const client = new Client({ name: "erp-user-test", version: "0.0.0" })
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [BIN, "mcp", "--user", userEmail, ...storeFlags(store)], env: childEnv, stderr: "ignore" }))
    const text = (result: Awaited<ReturnType<typeof client.callTool>>) => JSON.parse((result.content as Array<{ text: string }>)[0].text)

    const tenants = (await client.callTool({ name: "list_tenants", arguments: {} })).structuredContent as { data: Array<{ id: string; role: string }> }
    expect(tenants.data.map(({ id, role }) => ({ id, role })).sort((a, b) => a.role.localeCompare(b.role)))
      .toEqual([{ id: tenantId, role: "admin" }, { id: otherTenantId, role: "member" }])
    const { tools } = await client.listTools()
    expect(tools.find((tool) => tool.name === "list_products")!.inputSchema.required).toContain("tenant_id")

    const unnamed = await client.callTool({ name: "list_products", arguments: {} })
    expect(unnamed.isError).toBe(true)
    expect(text(unnamed)).toMatchObject({ status_code: 400, code: "TENANT_REQUIRED" })
    const created = await client.callTool({ name: "create_product", arguments: { tenant_id: tenantId, name: "Made as a user" } })
    expect(created.isError, JSON.stringify(created.content)).toBeFalsy()
    // A member without the create permission is refused as over REST; reading is allowed.
    const denied = await client.callTool({ name: "create_product", arguments: { tenant_id: otherTenantId, name: "Not allowed" } })
    expect(text(denied)).toMatchObject({ status_code: 403, code: "PERMISSION_DENIED" })
    expect((await client.callTool({ name: "list_products", arguments: { tenant_id: otherTenantId } })).isError).toBeFalsy()
    // A tenant the user is not a member of does not exist for them.
    const stranger = await client.callTool({ name: "list_products", arguments: { tenant_id: randomUUID() } })
    expect(text(stranger)).toMatchObject({ status_code: 404, code: "TENANT_NOT_FOUND" })
    await client.close()
  }, 60_000)

  it("serves only the toolsets --toolsets (or ERP_MCP_TOOLSETS) names, and refuses another's tool by name", async () => {
    const client = new Client({ name: "erp-toolsets-test", version: "0.0.0" })
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [...mcpArgs(token, store), "--toolsets", "catalogs"], env: childEnv, stderr: "ignore" }))
    const names = (await client.listTools()).tools.map((tool) => tool.name)
    expect(names).toEqual(expect.arrayContaining(["list_tenants", "list_countries", "get_city"]))
    expect(names.filter((name) => !/tenants|banks?|payment_methods?|units?_of_measurement|countr|states?|cit(y|ies)/.test(name))).toEqual([])
    await expect(client.callTool({ name: "create_product", arguments: { name: "Not here" } })).rejects.toThrow(/not served here: it is in the sales, purchases toolsets/)
    await client.close()

    const fromEnv = new Client({ name: "erp-toolsets-test", version: "0.0.0" })
    await fromEnv.connect(new StdioClientTransport({ command: process.execPath, args: mcpArgs(token, store), env: { ...childEnv, ERP_MCP_TOOLSETS: "admin" }, stderr: "ignore" }))
    expect((await fromEnv.listTools()).tools.map((tool) => tool.name)).toContain("list_webhook_endpoints")
    expect((await fromEnv.listTools()).tools.map((tool) => tool.name)).not.toContain("list_products")
    await fromEnv.close()
  }, 60_000)

  it("refuses an unknown toolset before serving anything, naming the valid ones", async () => {
    const result = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [...mcpArgs(token, store), "--toolsets", "sales,billing"], { env: childEnv })
      let stdout = ""
      let stderr = ""
      child.stdout.on("data", (chunk) => (stdout += chunk))
      child.stderr.on("data", (chunk) => (stderr += chunk))
      child.on("close", (code) => resolve({ code, stdout, stderr }))
    })
    expect(result.code).not.toBe(0)
    expect(result.stderr).toMatch(/unknown MCP toolset "billing"; choose among sales, purchases, finance, catalogs, admin/)
    expect(result.stdout).toBe("")
  }, 60_000)

  it("refuses an unknown --user before serving anything", async () => {
    const result = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [BIN, "mcp", "--user", "nobody@example.com", ...storeFlags(store)], { env: childEnv })
      let stdout = ""
      let stderr = ""
      child.stdout.on("data", (chunk) => (stdout += chunk))
      child.stderr.on("data", (chunk) => (stderr += chunk))
      child.on("close", (code) => resolve({ code, stdout, stderr }))
    })
    expect(result.code).not.toBe(0)
    expect(result.stderr).toMatch(/No user nobody@example.com/)
    expect(result.stdout).toBe("")
  }, 60_000)

  it.each([
    ["revoked", () => revokedToken, /revoked/],
    ["malformed", () => "sk_not-a-key", /malformed/],
    ["unknown", () => "sk_aaaaaaaaaaaaaaaa_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", /not valid/]
  ])("exits non-zero with the reason on stderr for a %s key, and prints nothing on stdout", async (_, key, reason) => {
    const result = await runRefused(key(), store)
    expect(result.code).not.toBe(0)
    expect(result.stderr).toMatch(reason)
    expect(result.stderr).toMatch(/refused/)
    expect(result.stdout).toBe("")
    const lock = lockFile(store)
    if (lock) expect(fs.existsSync(lock)).toBe(false)
  }, 60_000)
})
