import type { Browser, BrowserContext, Page } from "playwright-core"
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest"
import {
  BROWSER_TESTS_RUN,
  type CallbackServer,
  type Forwarder,
  launchBrowser,
  skipWithoutBrowser,
  startCallbackServer,
  startForwarder
} from "../../../test/support/browser.js"
import { startTestHost, type TestHost, type TestTenant } from "../../../test/support/host.js"
import {
  authorizationUrl,
  type AuthorizationRequest,
  createOAuthClient,
  createOAuthUser,
  makePkce,
  type OAuthTestClient,
  type OAuthTestUser,
  type Pkce,
  tokenRequest
} from "../../../test/support/oauth.js"
import { storeKinds, testStore } from "../../../test/support/stores.js"

/** Where the consent page's screenshot goes, for a person to look at (not committed). */
const SCREENSHOT = "/tmp/erp-oauth-consent.png"

describe.each(storeKinds)("OAuth sign-in and consent pages in Chromium on %s", (kind) => {
  let host: TestHost
  let browser: Browser
  let callback: CallbackServer
  let tenant: TestTenant
  let second: TestTenant
  let testClient: OAuthTestClient
  let both: OAuthTestUser
  let single: OAuthTestUser

  // Per test: a forwarder (its own source address, so its own authorize rate-limit counter) and a browser context.
  let forwarder: Forwarder
  let context: BrowserContext
  let page: Page

  skipWithoutBrowser()

  beforeAll(async () => {
    if (!BROWSER_TESTS_RUN) return
    ;[host, browser, callback] = await Promise.all([startTestHost(testStore(kind)), launchBrowser(), startCallbackServer()])
    tenant = await host.createTenant("BR")
    second = await host.createTenant("US")
    testClient = await createOAuthClient(host, { redirectUris: [callback.redirectUri], name: "Zapier Test App" })
    both = await createOAuthUser(host, [{ tenantId: tenant.id, role: "admin" }, { tenantId: second.id, role: "admin" }], { name: "Ana Two" })
    single = await createOAuthUser(host, [{ tenantId: tenant.id, role: "admin" }])
  })
  afterAll(async () => {
    await browser?.close()
    await callback?.close()
    await host?.close()
  })

  beforeEach(async () => {
    if (!BROWSER_TESTS_RUN) return
    forwarder = await startForwarder(host.url)
    context = await browser.newContext()
    page = await context.newPage()
    page.setDefaultTimeout(10_000)
  })
  afterEach(async () => {
    await context?.close()
    await forwarder?.close()
  })

  const request = (overrides: Partial<AuthorizationRequest> = {}): AuthorizationRequest & { pkce: Pkce; state: string } => ({
    clientId: testClient.clientId,
    redirectUri: callback.redirectUri,
    state: `state-${Math.random().toString(36).slice(2)}`,
    pkce: makePkce(),
    ...overrides
  } as AuthorizationRequest & { pkce: Pkce; state: string })

  const open = (authorization: AuthorizationRequest, on: Page = page) => on.goto(authorizationUrl(forwarder.url, authorization).toString())

  const signIn = async (user: OAuthTestUser, on: Page = page, password = user.password) => {
    await on.getByLabel("Email").fill(user.email)
    await on.getByLabel("Password").fill(password)
    await on.getByRole("button", { name: "Sign in" }).click()
  }

  const atCallback = async (on: Page = page) => {
    await on.waitForURL((url) => url.href.startsWith(callback.redirectUri), { timeout: 5_000 })
    await on.locator("#callback").waitFor()
    return new URL(on.url())
  }

  it("shows a sign-in page naming the application, with email and password fields", async () => {
    const response = await open(request())
    expect(response!.status()).toBe(200)
    await expect(page.getByRole("heading").textContent()).resolves.toContain("Zapier Test App")
    expect(await page.getByLabel("Email").getAttribute("type")).toBe("email")
    expect(await page.getByLabel("Password").getAttribute("type")).toBe("password")
  })

  it("serves the pages with no-store, no framing and a script-free CSP", async () => {
    const response = await open(request())
    const headers = response!.headers()
    expect(headers["cache-control"]).toContain("no-store")
    expect(headers["x-frame-options"]).toBe("DENY")
    expect(headers["content-security-policy"]).toContain("frame-ancestors 'none'")
    expect(headers["content-security-policy"]).toContain("default-src 'none'")
    expect(await page.locator("script").count()).toBe(0)
  })

  it("lists the asked scopes and a company select on the consent page", async () => {
    await open(request({ scope: "products:read customers:read customers:create" }))
    await signIn(both)
    await page.getByRole("button", { name: "Allow" }).waitFor()
    const lines = await page.locator("#scopes li").allTextContents()
    expect(lines).toEqual(expect.arrayContaining([expect.stringMatching(/products.*read/), expect.stringMatching(/customers.*read.*create/)]))
    expect(lines.join(" ")).not.toContain("suppliers")
    const options = await page.locator("select#tenant_id option").allTextContents()
    expect(options).toHaveLength(2)
    expect(options.join(" ")).toContain(tenant.name)
    expect(options.join(" ")).toContain(second.name)
    await expect(page.locator("body").textContent()).resolves.toContain(both.email)
    await page.screenshot({ path: SCREENSHOT, fullPage: true })
  })

  it("lands on the redirect URI with code, state and iss after Allow", async () => {
    const authorization = request({ scope: "products:read" })
    await open(authorization)
    await signIn(both)
    await page.locator("select#tenant_id").selectOption(second.id)
    await page.getByRole("button", { name: "Allow" }).click()
    const landed = await atCallback()
    expect(landed.searchParams.get("code")).toMatch(/^svcac_/)
    expect(landed.searchParams.get("state")).toBe(authorization.state)
    expect(landed.searchParams.get("iss")).toBe(forwarder.url)
    expect(callback.hits.some((hit) => hit.searchParams.get("code") === landed.searchParams.get("code"))).toBe(true)
  })

  it("gives a code that acts on the company chosen in the select", async () => {
    const authorization = request()
    await open(authorization)
    await signIn(both)
    await page.locator("select#tenant_id").selectOption(second.id)
    await page.getByRole("button", { name: "Allow" }).click()
    const landed = await atCallback()
    const exchanged = await tokenRequest(host.url, testClient, {
      grant_type: "authorization_code",
      code: landed.searchParams.get("code")!,
      redirect_uri: callback.redirectUri,
      code_verifier: authorization.pkce.verifier
    })
    expect(exchanged.status).toBe(200)
    const product = await host.request("POST", "/products", { token: second.token, body: { name: `Second's ${Date.now()}` } })
    expect((await host.request("GET", `/products/${product.body.id}`, { token: exchanged.json.access_token })).status).toBe(200)
  })

  it("lists every company with the role for the MCP resource, without a select, and its JWT acts in each", async () => {
    const authorization = request({ resource: forwarder.url, scope: "products:read" })
    await open(authorization)
    await signIn(both)
    await page.getByRole("button", { name: "Allow" }).waitFor()
    expect(await page.locator("select").count()).toBe(0)
    const companies = await page.locator("#companies li").allTextContents()
    expect(companies).toHaveLength(2)
    expect(companies).toEqual(expect.arrayContaining([`${tenant.name} as admin`, `${second.name} as admin`]))
    await expect(page.locator("form").textContent()).resolves.toContain("each of your 2 companies, within your role in each")
    await page.screenshot({ path: SCREENSHOT.replace(".png", "-mcp.png"), fullPage: true })
    await page.getByRole("button", { name: "Allow" }).click()
    const landed = await atCallback()
    // The issuer is the address the browser used, so the code is exchanged there too.
    const exchanged = await tokenRequest(forwarder.url, testClient, {
      grant_type: "authorization_code",
      code: landed.searchParams.get("code")!,
      redirect_uri: callback.redirectUri,
      code_verifier: authorization.pkce.verifier
    })
    expect(exchanged.status).toBe(200)
    const jwt = exchanged.json.access_token as string
    expect(jwt.split(".")).toHaveLength(3)
    for (const company of [tenant, second]) {
      const product = await host.request("POST", "/products", { token: company.token, body: { name: `MCP ${Date.now()}` } })
      const read = await fetch(`${forwarder.url}/products/${product.body.id}`, { headers: { authorization: `Bearer ${jwt}`, "x-tenant-id": company.id } })
      expect(read.status).toBe(200)
    }
  })

  it("binds an svc_ token to the company chosen in the select: another company's X-Tenant-Id is refused", async () => {
    const authorization = request()
    await open(authorization)
    await signIn(both)
    await expect(page.locator("form").textContent()).resolves.toContain("It will act in the company you choose only.")
    await page.locator("select#tenant_id").selectOption(tenant.id)
    await page.getByRole("button", { name: "Allow" }).click()
    const landed = await atCallback()
    const exchanged = await tokenRequest(host.url, testClient, {
      grant_type: "authorization_code",
      code: landed.searchParams.get("code")!,
      redirect_uri: callback.redirectUri,
      code_verifier: authorization.pkce.verifier
    })
    const token = exchanged.json.access_token as string
    expect(token).toMatch(/^svc_/)
    expect((await host.request("GET", "/products", { token, headers: { "x-tenant-id": second.id } })).status).toBe(401)
    expect((await host.request("GET", "/products", { token, headers: { "x-tenant-id": tenant.id } })).status).toBe(200)
  })

  it("names the one company of a single-company user without a select", async () => {
    await open(request())
    await signIn(single)
    await page.getByRole("button", { name: "Allow" }).waitFor()
    expect(await page.locator("select#tenant_id").count()).toBe(0)
    await expect(page.locator("form").textContent()).resolves.toContain(tenant.name)
  })

  it("goes straight to the consent page once signed in", async () => {
    await open(request())
    await signIn(single)
    await page.getByRole("button", { name: "Allow" }).waitFor()
    await open(request({ scope: "customers:read" }))
    await page.getByRole("button", { name: "Allow" }).waitFor()
    expect(await page.getByLabel("Password").count()).toBe(0)
    expect(await page.locator("#scopes li").allTextContents()).toEqual([expect.stringMatching(/customers.*read/)])
  })

  it("sends the user back with error=access_denied and the state on Deny", async () => {
    const authorization = request()
    await open(authorization)
    await signIn(single)
    await page.getByRole("button", { name: "Deny" }).click()
    const landed = await atCallback()
    expect(landed.searchParams.get("error")).toBe("access_denied")
    expect(landed.searchParams.get("state")).toBe(authorization.state)
    expect(landed.searchParams.get("code")).toBeNull()
  })

  it("shows an error on the sign-in page for a wrong password", async () => {
    const hits = callback.hits.length
    await open(request())
    const [response] = await Promise.all([
      page.waitForResponse((candidate) => candidate.request().method() === "POST"),
      signIn(single, page, "not the password at all")
    ])
    expect(response.status()).toBe(401)
    await expect(page.getByRole("alert").textContent()).resolves.toMatch(/email or password/i)
    expect(await page.getByLabel("Email").inputValue()).toBe(single.email)
    expect(await page.getByLabel("Password").inputValue()).toBe("")
    expect(new URL(page.url()).origin).toBe(forwarder.url)
    expect(callback.hits.length).toBe(hits)
  })

  it("shows an error for an unknown email the same way", async () => {
    await open(request())
    await signIn({ ...single, email: "nobody@example.com" })
    await expect(page.getByRole("alert").textContent()).resolves.toMatch(/email or password/i)
  })

  it("shows an error page, not a redirect, for an unknown client_id", async () => {
    const hits = callback.hits.length
    const response = await open(request({ clientId: "client_doesnotexist" }))
    expect(response!.status()).toBe(400)
    expect(new URL(page.url()).origin).toBe(forwarder.url)
    await expect(page.getByRole("heading").textContent()).resolves.toMatch(/unknown application/i)
    expect(callback.hits.length).toBe(hits)
  })

  it("shows an error page, not a redirect, for a redirect_uri not registered", async () => {
    const hits = callback.hits.length
    const response = await open(request({ redirectUri: `${callback.redirectUri}/elsewhere` }))
    expect(response!.status()).toBe(400)
    expect(new URL(page.url()).origin).toBe(forwarder.url)
    await expect(page.locator("body").textContent()).resolves.toContain("redirect_uri")
    expect(callback.hits.length).toBe(hits)
  })

  it("shows an error page for a missing client_id", async () => {
    const response = await page.goto(`${forwarder.url}/oauth/authorize?response_type=code`)
    expect(response!.status()).toBe(400)
    expect(new URL(page.url()).origin).toBe(forwarder.url)
  })

  it("redirects a request without PKCE back with error=invalid_request and the state", async () => {
    const authorization = request({ pkce: undefined })
    await open(authorization)
    const landed = await atCallback()
    expect(landed.searchParams.get("error")).toBe("invalid_request")
    expect(landed.searchParams.get("state")).toBe(authorization.state)
  })

  it("redirects code_challenge_method=plain back with error=invalid_request", async () => {
    const authorization = request({ extra: { code_challenge_method: "plain" } })
    await open(authorization)
    const landed = await atCallback()
    expect(landed.searchParams.get("error")).toBe("invalid_request")
    expect(landed.searchParams.get("state")).toBe(authorization.state)
  })

  it("redirects a response_type other than code back with unsupported_response_type", async () => {
    const authorization = request({ extra: { response_type: "token" } })
    await open(authorization)
    const landed = await atCallback()
    expect(landed.searchParams.get("error")).toBe("unsupported_response_type")
  })

  it("refuses a consent form posted without the CSRF token with 403", async () => {
    const hits = callback.hits.length
    await open(request())
    await signIn(single)
    await page.getByRole("button", { name: "Allow" }).waitFor()
    await page.locator('input[name="csrf"]').evaluate((input) => input.remove())
    const [response] = await Promise.all([
      page.waitForResponse((candidate) => candidate.request().method() === "POST"),
      page.getByRole("button", { name: "Allow" }).click()
    ])
    expect(response.status()).toBe(403)
    await expect(page.locator("body").textContent()).resolves.toMatch(/refused|CSRF/i)
    expect(callback.hits.length).toBe(hits)
  })

  it("refuses a consent form carrying another session's CSRF token with 403", async () => {
    const hits = callback.hits.length
    const otherContext = await browser.newContext()
    try {
      const other = await otherContext.newPage()
      await open(request(), other)
      await signIn(single, other)
      await other.getByRole("button", { name: "Allow" }).waitFor()
      const foreign = await other.locator('input[name="csrf"]').inputValue()

      await open(request())
      await signIn(single)
      await page.getByRole("button", { name: "Allow" }).waitFor()
      expect(await page.locator('input[name="csrf"]').inputValue()).not.toBe(foreign)
      await page.locator('input[name="csrf"]').evaluate((input, value) => input.setAttribute("value", value), foreign)
      const [response] = await Promise.all([
        page.waitForResponse((candidate) => candidate.request().method() === "POST"),
        page.getByRole("button", { name: "Allow" }).click()
      ])
      expect(response.status()).toBe(403)
      expect(callback.hits.length).toBe(hits)
    } finally {
      await otherContext.close()
    }
  })

  it("refuses a sign-in form posted without its CSRF token", async () => {
    await open(request())
    await page.locator('input[name="csrf"]').evaluate((input) => input.remove())
    const [response] = await Promise.all([
      page.waitForResponse((candidate) => candidate.request().method() === "POST"),
      signIn(single)
    ])
    expect(response.status()).toBe(403)
    expect(await page.getByRole("button", { name: "Allow" }).count()).toBe(0)
  })
})
