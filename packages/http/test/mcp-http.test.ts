import { ALL_PERMISSIONS, DEFAULT_LIFETIMES } from "@erp/core"
import { createFetchHandler } from "@erp/http"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js"
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestHost, type TestHost, type TestTenant } from "../../../test/support/host.js"
import { createOAuthClient, createOAuthUser, driveAuthorization, type OAuthTestUser, obtainTokens, TEST_REDIRECT_URI } from "../../../test/support/oauth.js"
import { storeKinds, testStore } from "../../../test/support/stores.js"

/** What an MCP client application keeps: its registration, the PKCE verifier, the tokens; the authorization URL it would open. */
class MemoryOAuthProvider implements OAuthClientProvider {
  client: OAuthClientInformationMixed | undefined
  saved: OAuthTokens | undefined
  verifier = ""
  authorizationUrl: URL | undefined
  get redirectUrl() {
    return TEST_REDIRECT_URI
  }
  get clientMetadata(): OAuthClientMetadata {
    return { client_name: "MCP test agent", redirect_uris: [TEST_REDIRECT_URI], grant_types: ["authorization_code", "refresh_token"], response_types: ["code"], token_endpoint_auth_method: "none" }
  }
  clientInformation() {
    return this.client
  }
  saveClientInformation(information: OAuthClientInformationMixed) {
    this.client = information
  }
  tokens() {
    return this.saved
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier
  }
  codeVerifier() {
    return this.verifier
  }
}

const MCP_HEADERS = { accept: "application/json, text/event-stream", "content-type": "application/json", "mcp-protocol-version": "2025-06-18" }

const initialize = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "0" } } }
/** A JSON-RPC answer as read off the wire. */
interface RpcAnswer {
  readonly error?: { readonly code: number; readonly message: string }
  readonly result?: { readonly tools?: ReadonlyArray<unknown>; readonly isError?: boolean; readonly content?: ReadonlyArray<{ readonly text: string }> }
}
const rpc = async (response: Response) => (await response.json()) as RpcAnswer

const toolsList = { jsonrpc: "2.0", id: 2, method: "tools/list", params: {} }

describe.each(storeKinds)("MCP over Streamable HTTP on %s", (kind) => {
  let host: TestHost
  let first: TestTenant
  let second: TestTenant
  let ana: OAuthTestUser
  let bruno: OAuthTestUser

  beforeAll(async () => {
    // The SDK registers from 127.0.0.1, as every other suite's client does on the shared store: not this test's limit to meet.
    host = await startTestHost(testStore(kind), { oauth: { registrationsPerMinute: 1_000 } })
    first = await host.createTenant("BR")
    second = await host.createTenant("US")
    ana = await createOAuthUser(host, [{ tenantId: first.id, role: "admin" }, { tenantId: second.id, role: "member", permissions: ["products:read"] }])
    bruno = await createOAuthUser(host, [{ tenantId: first.id, role: "admin" }])
  })
  afterAll(() => host?.close())

  /** A JWT for the MCP resource (this server's URL), through the real authorization pages. */
  const jwtOf = async (user: OAuthTestUser) => (await obtainTokens(host.url, await createOAuthClient(host), user, { resource: host.url })).tokens.access_token

  const post = (body: unknown, headers: Record<string, string>) =>
    fetch(host.url, { method: "POST", headers: { ...MCP_HEADERS, ...headers }, body: JSON.stringify(body) })

  const openSession = async (token: string) => {
    const response = await post(initialize, { authorization: `Bearer ${token}` })
    expect(response.status).toBe(200)
    const sessionId = response.headers.get("mcp-session-id")
    expect(sessionId).toMatch(/^[A-Za-z0-9_-]{40,}$/)
    return sessionId!
  }

  it("connects an SDK client from nothing but the base URL: discovery, registration, sign-in, JWT; then works tenant by tenant", async () => {
    const provider = new MemoryOAuthProvider()
    const url = new URL(host.url)
    // No token yet: the 401's challenge leads the SDK to the metadata, registration and the authorization URL.
    await expect(new Client({ name: "agent", version: "1" }).connect(new StreamableHTTPClientTransport(url, { authProvider: provider })))
      .rejects.toBeInstanceOf(UnauthorizedError)
    expect(provider.client?.client_id).toBeTruthy()
    const authorization = provider.authorizationUrl!
    expect(authorization.searchParams.get("resource")).toMatch(new RegExp(`^${host.url}/?$`))
    expect(authorization.searchParams.get("code_challenge_method")).toBe("S256")

    const { redirect, consentHtml } = await driveAuthorization(authorization, ana)
    // The consent page says the token reaches every company of the user.
    expect(consentHtml).toContain(first.name)
    const code = redirect.searchParams.get("code")!
    const transport = new StreamableHTTPClientTransport(url, { authProvider: provider })
    await transport.finishAuth(code)
    expect(provider.saved?.access_token.split(".")).toHaveLength(3)

    const client = new Client({ name: "agent", version: "1" })
    await client.connect(transport)
    expect(transport.sessionId).toBeTruthy()

    const tenants = await client.callTool({ name: "list_tenants", arguments: {} })
    expect((tenants.structuredContent as { data: Array<{ id: string; role: string }> }).data.map(({ id, role }) => ({ id, role })))
      .toEqual(expect.arrayContaining([{ id: first.id, role: "admin" }, { id: second.id, role: "member" }]))

    const { tools } = await client.listTools()
    const listProducts = tools.find((tool) => tool.name === "list_products")!
    expect(listProducts.inputSchema.required).toContain("tenant_id")
    expect(listProducts.outputSchema).toBeDefined()
    expect(listProducts.annotations?.readOnlyHint).toBe(true)
    expect(tools.find((tool) => tool.name === "delete_product")!.annotations?.destructiveHint).toBe(true)

    const tag = `mcp-${randomUUID().slice(0, 8)}`
    for (const name of ["A", "B", "C"]) {
      const created = await client.callTool({ name: "create_product", arguments: { tenant_id: first.id, name: `${tag} ${name}`, sale_price: "1.5", tags: [tag] } })
      expect(created.isError, JSON.stringify(created.content)).toBeFalsy()
    }
    // Follow the cursor, as an agent does; structured results are validated by the SDK against each tool's outputSchema.
    const page = async (cursor?: string) =>
      (await client.callTool({ name: "list_products", arguments: { tenant_id: first.id, filters: { tags: tag }, sort: "name:asc", limit: 2, ...(cursor ? { cursor } : {}) } }))
        .structuredContent as { data: Array<{ name: string }>; pagination: { has_next_page: boolean; next_cursor: string | null } }
    const one = await page()
    expect(one.data.map((row) => row.name)).toEqual([`${tag} A`, `${tag} B`])
    const two = await page(one.pagination.next_cursor!)
    expect(two.data.map((row) => row.name)).toEqual([`${tag} C`])
    expect(two.pagination.has_next_page).toBe(false)

    // Within the role: a read-only member of the second tenant may read, not create.
    const denied = await client.callTool({ name: "create_product", arguments: { tenant_id: second.id, name: "nope" } })
    expect(denied.isError).toBe(true)
    expect(JSON.parse((denied.content as Array<{ text: string }>)[0].text)).toMatchObject({ status_code: 403, code: "PERMISSION_DENIED" })

    const resources = await client.listResources()
    expect(resources.resources.map((resource) => resource.uri)).toContain("erp://resources/products")
    const reference = await client.readResource({ uri: "erp://resources/products" })
    expect((reference.contents[0] as { text: string }).text).toContain("sale_price")
    const prompts = await client.listPrompts()
    expect(prompts.prompts.map((prompt) => prompt.name)).toContain("summarise_overdue_receivables")

    await transport.terminateSession()
    await client.close()
  })

  it("refuses a session presented with another user's JWT, with JSON-RPC error -32003", async () => {
    const sessionId = await openSession(await jwtOf(ana))
    const response = await post(toolsList, { authorization: `Bearer ${await jwtOf(bruno)}`, "mcp-session-id": sessionId })
    expect(response.status).toBe(403)
    expect((await rpc(response)).error).toMatchObject({ code: -32003, message: expect.stringMatching(/another user/) })
  })

  it("validates the credential on every request: a live session without a token gets 401 and the discovery challenge", async () => {
    const sessionId = await openSession(await jwtOf(ana))
    const response = await post(toolsList, { "mcp-session-id": sessionId })
    expect(response.status).toBe(401)
    expect(response.headers.get("www-authenticate")).toContain(`resource_metadata="${host.url}/.well-known/oauth-protected-resource"`)
    const forged = await post(toolsList, { authorization: "Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.", "mcp-session-id": sessionId })
    expect(forged.status).toBe(401)
  })

  it("ends a session on DELETE; its id is then unknown (404, -32001), as is a made-up one", async () => {
    const token = await jwtOf(ana)
    const sessionId = await openSession(token)
    const listed = await post(toolsList, { authorization: `Bearer ${token}`, "mcp-session-id": sessionId })
    expect(listed.status).toBe(200)
    expect((await rpc(listed)).result!.tools!.length).toBeGreaterThan(50)
    const ended = await fetch(host.url, { method: "DELETE", headers: { authorization: `Bearer ${token}`, "mcp-session-id": sessionId } })
    expect(ended.status).toBe(204)
    for (const id of [sessionId, "x".repeat(43)]) {
      const after = await post(toolsList, { authorization: `Bearer ${token}`, "mcp-session-id": id })
      expect(after.status).toBe(404)
      expect((await rpc(after)).error!.code).toBe(-32001)
    }
  })

  it("answers a GET on a live session at once with 405 (the server sends no messages of its own)", async () => {
    const token = await jwtOf(ana)
    const sessionId = await openSession(token)
    const response = await fetch(host.url, {
      headers: { accept: "text/event-stream", authorization: `Bearer ${token}`, "mcp-session-id": sessionId, "mcp-protocol-version": "2025-06-18" },
      signal: AbortSignal.timeout(5_000)
    })
    expect(response.status).toBe(405)
    expect(response.headers.get("allow")).toBe("POST, DELETE")
    expect((await rpc(response)).error).toMatchObject({ code: -32000, message: expect.stringMatching(/POST/) })
    // The session goes on serving POSTs.
    expect((await post(toolsList, { authorization: `Bearer ${token}`, "mcp-session-id": sessionId })).status).toBe(200)
  })

  it("serves the SDK client, which opens the GET stream after initialize, without a transport error", async () => {
    const errors: Array<Error> = []
    const transport = new StreamableHTTPClientTransport(new URL(host.url), { requestInit: { headers: { authorization: `Bearer ${first.token}` } } })
    transport.onerror = (error) => void errors.push(error)
    const client = new Client({ name: "agent", version: "1" })
    await client.connect(transport)
    // The GET the SDK sent after `notifications/initialized` has been answered by the time a later call is.
    expect((await client.listTools()).tools.length).toBeGreaterThan(50)
    await new Promise((resolve) => setTimeout(resolve, 200))
    await transport.terminateSession()
    await client.close()
    expect(errors).toEqual([])
  })

  it("asks for a session on anything but initialize, and refuses a second initialize on a session", async () => {
    const token = await jwtOf(ana)
    const bare = await post(toolsList, { authorization: `Bearer ${token}` })
    expect(bare.status).toBe(400)
    const sessionId = await openSession(token)
    const again = await post(initialize, { authorization: `Bearer ${token}`, "mcp-session-id": sessionId })
    expect(again.status).toBe(400)
  })

  it("refuses browser origins outside the allow-list (DNS rebinding) and serves loopback ones", async () => {
    const token = await jwtOf(ana)
    const foreign = await post(initialize, { authorization: `Bearer ${token}`, origin: "http://evil.example" })
    expect(foreign.status).toBe(403)
    const local = await post(initialize, { authorization: `Bearer ${token}`, origin: "http://localhost:6274" })
    expect(local.status).toBe(200)
  })

  it("serves an API key over HTTP too: its own tenant by default, another tenant not at all", async () => {
    const sessionId = await openSession(first.token)
    const call = (args: Record<string, unknown>) =>
      post({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "list_products", arguments: args } }, { authorization: `Bearer ${first.token}`, "mcp-session-id": sessionId })
        .then(rpc)
    expect((await call({ limit: 1 })).result!.isError).toBeFalsy()
    const other = await call({ tenant_id: second.id })
    expect(other.result!.isError).toBe(true)
    expect(JSON.parse(other.result!.content![0].text)).toMatchObject({ status_code: 404, code: "TENANT_NOT_FOUND" })
    // The key's session is not a user's.
    const stolen = await post(toolsList, { authorization: `Bearer ${await jwtOf(ana)}`, "mcp-session-id": sessionId })
    expect(stolen.status).toBe(403)
  })
})

describe.each(storeKinds)("MCP sessions and tokens over time on %s", (kind) => {
  let host: TestHost
  let tenant: TestTenant
  let ana: OAuthTestUser

  beforeAll(async () => {
    host = await startTestHost(testStore(kind), { oauth: { lifetimes: { ...DEFAULT_LIFETIMES, accessSeconds: 3 } }, mcp: { sessionIdleSeconds: 4 } })
    tenant = await host.createTenant("BR")
    ana = await createOAuthUser(host, [{ tenantId: tenant.id, role: "admin" }])
  })
  afterAll(() => host?.close())

  const post = (body: unknown, headers: Record<string, string>) =>
    fetch(host.url, { method: "POST", headers: { ...MCP_HEADERS, ...headers }, body: JSON.stringify(body) })
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
  const jwt = async () => (await obtainTokens(host.url, await createOAuthClient(host), ana, { resource: host.url })).tokens.access_token

  it("expires a session left idle", async () => {
    const response = await post(initialize, { authorization: `Bearer ${tenant.token}` })
    const sessionId = response.headers.get("mcp-session-id")!
    expect((await post(toolsList, { authorization: `Bearer ${tenant.token}`, "mcp-session-id": sessionId })).status).toBe(200)
    await sleep(4_500)
    expect((await post(toolsList, { authorization: `Bearer ${tenant.token}`, "mcp-session-id": sessionId })).status).toBe(404)
  })

  it("refuses an expired JWT on a live session, which a fresh JWT of the same user goes on using", async () => {
    const token = await jwt()
    const response = await post(initialize, { authorization: `Bearer ${token}` })
    expect(response.status).toBe(200)
    const sessionId = response.headers.get("mcp-session-id")!
    // Use the session until the token (3 s) expires; each use keeps the session (idle 4 s) alive.
    let status = 200
    const deadline = Date.now() + 10_000
    while (status === 200 && Date.now() < deadline) {
      await sleep(500)
      status = (await post(toolsList, { authorization: `Bearer ${token}`, "mcp-session-id": sessionId })).status
    }
    expect(status).toBe(401)
    expect((await post(toolsList, { authorization: `Bearer ${await jwt()}`, "mcp-session-id": sessionId })).status).toBe(200)
  })
})

describe.each(storeKinds)("MCP through the fetch handler under a base path on %s", (kind) => {
  it("serves initialize and tools at the base path, with the session id", async () => {
    const erp = await createFetchHandler({ store: testStore(kind), basePath: "/erp" })
    try {
      const tenant = await erp.tenants.create({ name: `Embedded ${randomUUID().slice(0, 8)}`, countryCode: "BR" })
      const { token } = await erp.keys.create({ tenantId: tenant.id, name: "mcp", permissions: ALL_PERMISSIONS })
      const post = (body: unknown, headers: Record<string, string> = {}) =>
        erp.handler(new Request("http://app.local/erp/", { method: "POST", headers: { ...MCP_HEADERS, authorization: `Bearer ${token}`, ...headers }, body: JSON.stringify(body) }))
      const opened = await post(initialize)
      expect(opened.status).toBe(200)
      const sessionId = opened.headers.get("mcp-session-id")!
      const listed = await post(toolsList, { "mcp-session-id": sessionId })
      expect((await rpc(listed)).result!.tools!.length).toBeGreaterThan(50)
    } finally {
      await erp.dispose()
    }
  })
})

describe.each(storeKinds)("MCP toolsets over HTTP on %s", (kind) => {
  /** Starts something with ERP_MCP_TOOLSETS set (read as a host starts), the variable put back afterwards. */
  const withToolsets = async <A>(toolsets: string, start: () => Promise<A>): Promise<A> => {
    const saved = process.env.ERP_MCP_TOOLSETS
    process.env.ERP_MCP_TOOLSETS = toolsets
    try {
      return await start()
    } finally {
      if (saved === undefined) delete process.env.ERP_MCP_TOOLSETS
      else process.env.ERP_MCP_TOOLSETS = saved
    }
  }

  it("serves only the toolsets ERP_MCP_TOOLSETS names, and refuses another's tool by name", async () => {
    const host = await withToolsets("catalogs,finance", () => startTestHost(testStore(kind)))
    try {
      const tenant = await host.createTenant("BR")
      const transport = new StreamableHTTPClientTransport(new URL(host.url), { requestInit: { headers: { authorization: `Bearer ${tenant.token}` } } })
      const client = new Client({ name: "agent", version: "1" })
      await client.connect(transport)
      const names = (await client.listTools()).tools.map((tool) => tool.name)
      expect(names).toEqual(expect.arrayContaining(["list_tenants", "list_banks", "get_city", "list_payables", "allocate_receivable"]))
      expect(names).not.toContain("list_products")
      expect(names).not.toContain("create_webhook_endpoint")
      await expect(client.callTool({ name: "create_product", arguments: { name: "Not here" } }))
        .rejects.toThrow(/Tool "create_product" is not served here: it is in the sales, purchases toolsets, and this server serves finance, catalogs/)
      const banks = await client.callTool({ name: "list_banks", arguments: { limit: 1 } })
      expect(banks.isError, JSON.stringify(banks.content)).toBeFalsy()
      await transport.terminateSession()
      await client.close()
    } finally {
      await host.close()
    }
  })

  it("does not start with a toolset that does not exist, and names the valid ones", async () => {
    const refused = /^ERP_MCP_TOOLSETS: unknown MCP toolset "billing"; choose among sales, purchases, finance, catalogs, admin/
    // An embedding app's handler closes what it opened when its start fails, and says why in one line.
    await expect(withToolsets("sales,billing", () => createFetchHandler({ store: testStore(kind) }))).rejects.toThrow(refused)
  })

  it("takes the toolsets as an option of the fetch handler too", async () => {
    const erp = await createFetchHandler({ store: testStore(kind), mcp: { toolsets: ["catalogs"] } })
    try {
      const tenant = await erp.tenants.create({ name: `Toolsets ${randomUUID().slice(0, 8)}`, countryCode: "BR" })
      const { token } = await erp.keys.create({ tenantId: tenant.id, name: "mcp", permissions: ALL_PERMISSIONS })
      const post = (body: unknown, headers: Record<string, string> = {}) =>
        erp.handler(new Request("http://app.local/", { method: "POST", headers: { ...MCP_HEADERS, authorization: `Bearer ${token}`, ...headers }, body: JSON.stringify(body) }))
      const sessionId = (await post(initialize)).headers.get("mcp-session-id")!
      const tools = (await rpc(await post(toolsList, { "mcp-session-id": sessionId }))).result!.tools as Array<{ name: string }>
      expect(tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(["list_tenants", "list_countries", "get_bank_by_code"]))
      expect(tools.map((tool) => tool.name).filter((name) => /product|invoice|payable|webhook/.test(name))).toEqual([])
    } finally {
      await erp.dispose()
    }
  })
})
