import * as client from "openid-client"
import type { Browser } from "playwright-core"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  BROWSER_TESTS_RUN,
  type CallbackServer,
  type Forwarder,
  launchBrowser,
  skipWithoutBrowser,
  startCallbackServer,
  startForwarder
} from "../../test/support/browser.js"
import { TEST_PASSWORD } from "../../test/support/oauth.js"
import { eventually, startReceiver } from "../../test/support/webhook-receiver.js"
import { storeKinds, testStore } from "../../test/support/stores.js"
import { BASE_PATH, startHost } from "../fetch-handler.js"

type Host = Awaited<ReturnType<typeof startHost>>

/** A tenant and an admin key made through the admin facade, as the embedding app would. */
const tenantWithKey = async (host: Host) => {
  const tenant = await host.erp.tenants.create({ name: `Embedded ${randomUUID().slice(0, 8)}`, countryCode: "BR" })
  const { token } = await host.erp.keys.create({ tenantId: tenant.id, name: "embedding app", permissions: "all" })
  return { tenant, token }
}

describe.each(storeKinds)("embedding the fetch handler under /erp in node:http on %s", (kind) => {
  let host: Host
  let token: string

  beforeAll(async () => {
    // Webhooks may go to the test's receiver on loopback.
    host = await startHost(0, { store: testStore(kind), webhooks: { allowPrivate: true } })
    ;({ token } = await tenantWithKey(host))
  })
  afterAll(() => host?.close())

  it("serves the app's own routes beside the API", async () => {
    const response = await fetch(`${host.url}/`)
    expect(await response.text()).toBe("my app\n")
  })

  it("serves /health and the error contract under the base path", async () => {
    const health = await fetch(`${host.url}${BASE_PATH}/health`)
    expect(health.status).toBe(200)
    expect(health.headers.get("x-request-id")).toBeTruthy()
    const unauthorized = await fetch(`${host.url}${BASE_PATH}/products`)
    expect(unauthorized.status).toBe(401)
    expect(await unauthorized.json()).toMatchObject({ status_code: 401, error: "Unauthorized" })
  })

  it("answers 404 for a path outside the base path handed to it", async () => {
    const response = await host.erp.handler(new Request(`${host.url}/products`))
    expect(response.status).toBe(404)
    expect(await response.json()).toMatchObject({ code: "ROUTE_NOT_FOUND", message: "No route for GET /products" })
    expect(host.erp.handles("/products")).toBe(false)
    expect(host.erp.handles(`${BASE_PATH}/products?limit=1`)).toBe(true)
  })

  it("points the 401 challenge at the resource metadata of the /erp resource (RFC 9728)", async () => {
    const unauthorized = await fetch(`${host.url}${BASE_PATH}/products`)
    const pointer = /resource_metadata="([^"]+)"/.exec(unauthorized.headers.get("www-authenticate")!)![1]
    expect(pointer).toBe(`${host.url}/.well-known/oauth-protected-resource${BASE_PATH}`)
    const metadata = (await (await fetch(pointer)).json()) as { resource: string; authorization_servers: Array<string> }
    expect(metadata).toMatchObject({ resource: `${host.url}${BASE_PATH}`, authorization_servers: [`${host.url}${BASE_PATH}`] })
  })

  it("creates and reads a product with a key made through the admin facade", async () => {
    const created = await fetch(`${host.url}${BASE_PATH}/products`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "Embedded", sale_price: "1.25" })
    })
    expect(created.status).toBe(201)
    const product = (await created.json()) as { id: string }
    const fetched = await fetch(`${host.url}${BASE_PATH}/products/${product.id}`, { headers: { authorization: token } })
    expect(await fetched.json()).toMatchObject({ name: "Embedded", sale_price: "1.250000" })
  })

  it("works records through the admin facade's resources, tenant by tenant", async () => {
    const { tenant } = await tenantWithKey(host)
    const other = await tenantWithKey(host)
    const product = (await host.erp.resources.create("products", { name: "From the app", sale_price: "3" }, { tenantId: tenant.id })) as { id: string }
    const page = await host.erp.resources.list("products", { tenantId: tenant.id, query: { search: "from the app" } })
    expect(page.data).toEqual([expect.objectContaining({ id: product.id, sale_price: "3.000000" })])
    await expect(host.erp.resources.get("products", product.id, { tenantId: other.tenant.id })).rejects.toMatchObject({
      _tag: "NotFound",
      code: "PRODUCT_NOT_FOUND"
    })
    await host.erp.resources.delete("products", product.id, { tenantId: tenant.id })
    expect(await host.erp.resources.get("products", product.id, { tenantId: tenant.id, withDeleted: true })).toMatchObject({
      deleted_at: expect.any(String)
    })
  })

  it("manages fiscal rules through the admin facade only: no route serves them", async () => {
    const { tenant, token: key } = await tenantWithKey(host)
    const rule = (await host.erp.resources.create("fiscal-rules-br", { name: "ISS", operation_type: "service_sale", taxes: [{ tax_code: "ISS", rate: "5", is_withheld: true }] }, { tenantId: tenant.id })) as { id: string }
    expect((await host.erp.resources.list("fiscal-rules-br", { tenantId: tenant.id })).data).toEqual([expect.objectContaining({ id: rule.id, taxes: [expect.objectContaining({ tax_code: "ISS", rate: "5.000000" })] })])
    expect((await fetch(`${host.url}${BASE_PATH}/fiscal-rules-br/${rule.id}`, { headers: { authorization: key } })).status).toBe(404)
  })

  it("sends webhooks from the embedding process: an endpoint made through the facade receives the writes, signed", async () => {
    const receiver = await startReceiver()
    try {
      const { tenant } = await tenantWithKey(host)
      const endpoint = (await host.erp.resources.create("webhook-endpoints", { url: receiver.url, events: ["products.create"] }, { tenantId: tenant.id })) as { id: string; secret: string }
      receiver.verifyWith([endpoint.secret])
      const product = (await host.erp.resources.create("products", { name: "Hooked" }, { tenantId: tenant.id })) as { id: string }
      await eventually(() => receiver.received.length === 1, 15_000, "the delivery")
      expect(receiver.received[0]).toMatchObject({ verifiedWith: [endpoint.secret], payload: { type: "products.create", data: { id: product.id, tenant_id: tenant.id } } })
      const rotated = (await host.erp.resources.action("webhook-endpoints", endpoint.id, "rotate-secret", undefined, { tenantId: tenant.id })) as { secret: string }
      expect(rotated.secret).toMatch(/^whsec_/)
    } finally {
      await receiver.close()
    }
  })

  it("gives tenants a time zone: the country's by default, or chosen, and changes it", async () => {
    const tenant = await host.erp.tenants.create({ name: `Zoned ${randomUUID().slice(0, 8)}`, countryCode: "US", timeZone: "america/chicago" })
    expect(tenant.time_zone).toBe("America/Chicago")
    expect((await host.erp.tenants.setTimeZone(tenant.id, "America/Los_Angeles")).time_zone).toBe("America/Los_Angeles")
    expect((await host.erp.tenants.get(tenant.id)).time_zone).toBe("America/Los_Angeles")
    await expect(host.erp.tenants.setTimeZone(tenant.id, "Mars/Olympus_Mons")).rejects.toMatchObject({ _tag: "InvalidRequest", code: "INVALID_TIME_ZONE" })
  })

  it("rejects with the core's typed errors", async () => {
    await expect(host.erp.tenants.get(randomUUID())).rejects.toMatchObject({ _tag: "NotFound" })
    await expect(host.erp.keys.create({ tenantId: randomUUID(), name: "x", permissions: ["rockets:launch"] })).rejects.toMatchObject({
      _tag: "InvalidRequest",
      message: expect.stringContaining("rockets")
    })
    await expect(host.erp.users.create({ email: `short-${randomUUID()}@example.com`, name: "Short", password: "short" })).rejects.toMatchObject({
      code: "WEAK_PASSWORD"
    })
  })
})

describe.each(storeKinds)("OAuth code + PKCE through the fetch handler under /erp, in Chromium, on %s", (kind) => {
  let host: Host
  let browser: Browser
  let callback: CallbackServer
  let forwarder: Forwarder
  let email: string
  let oauthClient: { clientId: string; secret: string }

  skipWithoutBrowser()

  beforeAll(async () => {
    if (!BROWSER_TESTS_RUN) return
    ;[host, browser, callback] = await Promise.all([startHost(0, { store: testStore(kind) }), launchBrowser(), startCallbackServer()])
    // Chromium reaches the app from an address of its own: /oauth/authorize is limited per address.
    forwarder = await startForwarder(host.url)
    const { tenant } = await tenantWithKey(host)
    email = `ana-${randomUUID().slice(0, 8)}@embedded.example`
    await host.erp.users.create({ email, name: "Ana", password: TEST_PASSWORD })
    await host.erp.members.add({ tenantId: tenant.id, user: email, role: "admin" })
    const { client: registered, secret } = await host.erp.oauthClients.create({ name: "Embedded Test App", redirectUris: [callback.redirectUri] })
    oauthClient = { clientId: registered.client_id, secret: secret! }
  })
  afterAll(async () => {
    await browser?.close()
    await callback?.close()
    await forwarder?.close()
    await host?.close()
  })

  it("discovers the /erp issuer, signs in, consents, and exchanges the code for tokens that read the API", async () => {
    const issuer = `${forwarder.url}${BASE_PATH}`
    // RFC 8414 discovery of an issuer with a path: /.well-known/oauth-authorization-server/erp, forwarded by the app.
    const config = await client.discovery(new URL(issuer), oauthClient.clientId, undefined, client.ClientSecretPost(oauthClient.secret), {
      algorithm: "oauth2",
      execute: [client.allowInsecureRequests]
    })
    expect(config.serverMetadata().issuer).toBe(issuer)
    const verifier = client.randomPKCECodeVerifier()
    const state = client.randomState()
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: callback.redirectUri,
      scope: "products:read",
      state,
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: "S256"
    })
    expect(url.pathname).toBe(`${BASE_PATH}/oauth/authorize`)

    const context = await browser.newContext()
    try {
      const page = await context.newPage()
      page.setDefaultTimeout(10_000)
      await page.goto(url.toString())
      expect(await page.locator("form").getAttribute("action")).toBe(`${BASE_PATH}/oauth/authorize`)
      await page.getByLabel("Email").fill(email)
      await page.getByLabel("Password").fill(TEST_PASSWORD)
      await page.getByRole("button", { name: "Sign in" }).click()
      await page.getByRole("button", { name: "Allow" }).waitFor()
      expect(new URL(page.url()).pathname).toBe(`${BASE_PATH}/oauth/authorize`)
      const session = (await context.cookies()).find((cookie) => cookie.name === "erp_session")
      // The OAuth pages and the panel share the session: its cookie covers the handler's path, nothing above it.
      expect(session?.path).toBe(`${BASE_PATH}/`)
      await page.getByRole("button", { name: "Allow" }).click()
      await page.waitForURL((landed) => landed.href.startsWith(callback.redirectUri), { timeout: 5_000 })
      const landed = new URL(page.url())
      expect(landed.searchParams.get("iss")).toBe(issuer)

      // openid-client checks state, iss (RFC 9207) and PKCE.
      const tokens = await client.authorizationCodeGrant(config, landed, { pkceCodeVerifier: verifier, expectedState: state })
      expect(tokens.access_token).toMatch(/^svc_/)
      const products = await fetch(`${issuer}/products`, { headers: { authorization: `Bearer ${tokens.access_token}` } })
      expect(products.status).toBe(200)
    } finally {
      await context.close()
    }
  })
})
