import type { Browser, BrowserContext, Page } from "playwright-core"
import { createRequire } from "node:module"
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { BROWSER_TESTS_RUN, type Forwarder, launchBrowser, skipWithoutBrowser, startForwarder } from "../../../test/support/browser.js"
import { startTestHost, type TestHost, type TestTenant } from "../../../test/support/host.js"
import { createOAuthUser, type OAuthTestUser } from "../../../test/support/oauth.js"
import { storeKinds, testStore } from "../../../test/support/stores.js"

const AXE = createRequire(import.meta.url).resolve("axe-core/axe.min.js")

/** Screenshots for a person to look at (not committed): `/tmp/erp-panel-<screen>-<width>.png`. */
const screenshot = (page: Page, name: string) => page.screenshot({ path: `/tmp/erp-panel-${name}-${page.viewportSize()!.width}.png`, fullPage: true })

const inDays = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10)

describe.each(storeKinds)("The panel in Chromium on %s", (kind) => {
  let host: TestHost
  let browser: Browser
  let tenant: TestTenant
  let admin: OAuthTestUser
  let member: OAuthTestUser

  let forwarder: Forwarder
  let context: BrowserContext
  let page: Page
  /** Every URL the page asked for: none may leave the host. */
  let requested: Array<string>

  skipWithoutBrowser()

  beforeAll(async () => {
    if (!BROWSER_TESTS_RUN) return
    ;[host, browser] = await Promise.all([startTestHost(testStore(kind)), launchBrowser()])
    tenant = await host.createTenant("BR")
    admin = await createOAuthUser(host, [{ tenantId: tenant.id, role: "admin" }], { name: "Ana Admin" })
    member = await createOAuthUser(host, [{ tenantId: tenant.id, role: "member", permissions: ["products:read", "events:read"] }])
  })
  afterAll(async () => {
    await browser?.close()
    await host?.close()
  })

  const open = async (options: { width?: number; bypassCSP?: boolean; timezoneId?: string } = {}) => {
    context = await browser.newContext({
      viewport: { width: options.width ?? 1280, height: 900 },
      ...(options.bypassCSP ? { bypassCSP: true } : {}),
      ...(options.timezoneId ? { timezoneId: options.timezoneId } : {})
    })
    page = await context.newPage()
    page.setDefaultTimeout(10_000)
    page.on("request", (request) => requested.push(request.url()))
  }

  beforeEach(async () => {
    if (!BROWSER_TESTS_RUN) return
    requested = []
    forwarder = await startForwarder(host.url)
  })
  afterEach(async () => {
    await context?.close()
    await forwarder?.close()
    const foreign = requested.filter((url) => !url.startsWith(`${forwarder.url}/`) && !url.startsWith("data:"))
    expect(foreign).toEqual([])
  })

  const signIn = async (user: OAuthTestUser, path = "/panel") => {
    await page.goto(`${forwarder.url}${path}`)
    await page.fill("#email", user.email)
    await page.fill("#password", user.password)
    await page.click("button[type=submit]")
    await page.waitForURL((url) => !url.pathname.endsWith("/sign-in"))
  }

  it("creates a key with three permissions (one of them the reports) and an expiry whose token works for those only, then revokes it", async () => {
    await open()
    await signIn(admin, "/panel/keys")
    await page.click("text=New key")
    // A 422 keeps what was typed and says why next to the field.
    await page.fill("#name", "Shop sync")
    await page.fill("#expires_at", "2001-01-01")
    await page.click("button:has-text('Create key')")
    await expect(page.locator("#expires_at-error").textContent()).resolves.toContain("future date")
    await expect(page.locator("#permissions-error").textContent()).resolves.toContain("at least one permission")
    expect(await page.inputValue("#name")).toBe("Shop sync")
    await page.fill("#description", "The web shop")
    await page.fill("#expires_at", inDays(30))
    await page.check("#perm\\.products\\.read")
    await page.check("#perm\\.customers\\.create")
    await page.check("#perm\\.reports\\.read")
    await page.click("button:has-text('Create key')")
    const token = (await page.locator("#token").textContent())!.trim()
    expect(token).toMatch(/^sk_/)
    await screenshot(page, "key-created")

    expect((await host.request("GET", "/products", { token })).status).toBe(200)
    expect((await host.request("POST", "/customers", { token, body: { name: "Maria", type: "individual" } })).status).not.toBe(403)
    expect((await host.request("GET", "/customers", { token })).status).toBe(403)
    expect((await host.request("POST", "/products", { token, body: { name: "Pen" } })).status).toBe(403)
    expect((await host.request("GET", "/reports/receivables-aging", { token })).status).toBe(200)

    await page.goto(`${forwarder.url}/panel/keys`)
    const row = page.locator("#keys tr", { hasText: "Shop sync" })
    await expect(row.locator(".badge").textContent()).resolves.toBe("active")
    expect(await row.textContent()).toContain(inDays(30))
    await row.locator("a:has-text('Revoke')").click()
    await page.click("button:has-text('Revoke')")
    await expect(page.locator(".flash").textContent()).resolves.toContain("revoked")
    await expect(page.locator("#keys tr", { hasText: "Shop sync" }).locator(".badge").textContent()).resolves.toBe("revoked")
    expect((await host.request("GET", "/products", { token })).status).toBe(401)
  })

  it("restores a product deleted over REST and shows products.restore in the event feed", async () => {
    const created = await host.request("POST", "/products", { token: tenant.token, body: { name: `Lamp ${Date.now()}` } })
    expect(created.status).toBe(201)
    const id = created.body.id as string
    expect((await host.request("DELETE", `/products/${id}`, { token: tenant.token })).status).toBe(204)
    // The company is in São Paulo; the person reading is in Tokyo and sees Tokyo's times.
    await open({ timezoneId: "Asia/Tokyo" })
    await signIn(admin, "/panel/deleted?resource=products")
    const row = page.locator("#deleted tr", { hasText: created.body.name })
    await row.locator("button:has-text('Restore')").click()
    await expect(page.locator(".flash").textContent()).resolves.toContain("restored")
    expect((await host.request("GET", `/products/${id}`, { token: tenant.token })).status).toBe(200)

    await page.goto(`${forwarder.url}/panel/events`)
    await page.selectOption("#resource", "products")
    await page.selectOption("#action", "restore")
    await page.click("button:has-text('Filter')")
    const event = page.locator("#events tr", { hasText: "products.restore" }).filter({ hasText: id })
    await expect(event.count()).resolves.toBe(1)
    const stamp = event.locator("time")
    const iso = (await stamp.getAttribute("datetime"))!
    const tokyo = new Intl.DateTimeFormat("en", { dateStyle: "medium", timeStyle: "short", timeZone: "Asia/Tokyo" }).format(new Date(iso))
    await expect(stamp.textContent()).resolves.toBe(tokyo)
    await event.locator("a").click()
    await expect(page.locator("h1").textContent()).resolves.toBe(created.body.name)
  })

  it("creates a webhook endpoint whose secret is shown once, and shows a delivery in its log after a REST write", async () => {
    await open()
    await signIn(admin, "/panel/r/webhook-endpoints/new")
    await page.fill("#f-url", "https://hooks.example.com/erp-panel-browser")
    await page.fill("#f-events", "products.*")
    await page.click("button:has-text('Create')")
    await expect(page.locator("body").textContent()).resolves.toMatch(/whsec_[A-Za-z0-9+/=_-]+/)
    const endpoint = page.url().match(/\/panel\/r\/webhook-endpoints\/([0-9a-f-]{36})/)?.[1] ??
      (await page.locator("a[href*='/panel/r/webhook-endpoints/']").first().getAttribute("href"))!.match(/webhook-endpoints\/([0-9a-f-]{36})/)![1]
    const name = `Hooked ${Date.now()}`
    expect((await host.request("POST", "/products", { token: tenant.token, body: { name } })).status).toBe(201)
    await page.goto(`${forwarder.url}/panel/r/webhook-endpoints/${endpoint}`)
    // Shown once: the endpoint's page no longer holds the secret.
    expect(await page.locator("body").textContent()).not.toMatch(/whsec_/)
    const delivery = page.locator("#webhook-deliveries tr", { hasText: "products.create" })
    await expect(delivery.count()).resolves.toBeGreaterThan(0)
    await delivery.first().locator("a").first().click()
    await page.waitForURL((url) => url.pathname.includes("/panel/r/webhook-deliveries/"))
    await expect(page.locator("body").textContent()).resolves.toContain("products.create")
  })

  it("refuses the keys screen to a member and leaves it out of the navigation", async () => {
    await open()
    await signIn(member)
    expect(await page.locator("nav.side").textContent()).not.toContain("API keys")
    const response = await page.goto(`${forwarder.url}/panel/keys`)
    expect(response?.status()).toBe(403)
    await expect(page.locator("h1").textContent()).resolves.toBe("Admins only")
  })

  it.each([390, 1280])("looks finished at %i px and passes an axe scan with no serious or critical violations", async (width) => {
    await open({ width, bypassCSP: true })
    await page.goto(`${forwarder.url}/panel/sign-in`)
    const scan = async (name: string) => {
      await screenshot(page, name)
      // Nothing wider than the screen: a phone scrolls only down.
      expect({ name, width: await page.evaluate(() => (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document.documentElement.scrollWidth) }).toEqual({ name, width })
      await page.addScriptTag({ path: AXE })
      const result = await page.evaluate(async () => {
        const axe = (globalThis as unknown as { axe: { run: (context: unknown, options: unknown) => Promise<{ violations: Array<{ id: string; impact: string; nodes: Array<{ target: unknown }> }> }> } }).axe
        return axe.run((globalThis as unknown as { document: unknown }).document, { resultTypes: ["violations"] })
      })
      const serious = result.violations.filter((violation) => violation.impact === "serious" || violation.impact === "critical")
      expect(serious.map((violation) => `${name}: ${violation.id} ${JSON.stringify(violation.nodes.map((node) => node.target))}`)).toEqual([])
    }
    await scan("sign-in")
    await page.fill("#email", admin.email)
    await page.fill("#password", admin.password)
    await page.click("button[type=submit]")
    await page.waitForURL((url) => url.pathname.endsWith("/panel"))
    // The overview's charts are drawn from the tenant's figures: a receivable past due gives the aging a bar.
    await host.request("POST", "/receivables", { token: tenant.token, body: { amount: "320.5", due_date: new Date(Date.now() - 20 * 86_400_000).toISOString().slice(0, 10) } })
    await page.reload()
    await scan("overview")
    for (const chart of ["#cash-flow-chart", "#aging-chart"]) {
      expect(await page.locator(chart).isVisible(), chart).toBe(true)
      expect((await page.locator(chart).boundingBox())!.width, chart).toBeLessThanOrEqual(width)
    }
    const product = await host.request("POST", "/products", { token: tenant.token, body: { name: "Standing desk", sale_price: "1299.90", tags: ["office"] } })
    const bank = await host.request("POST", "/financial-accounts", { token: tenant.token, body: { name: "Banco", type: "checking" } })
    const payer = await host.request("POST", "/customers", { token: tenant.token, body: { legal_name: "Mercado Serra Azul Ltda" } })
    const day = new Date().toISOString().slice(0, 10)
    await host.request("POST", "/receivables", { token: tenant.token, body: { customer_id: payer.body.id, amount: "410.00", due_date: day } })
    await host.request("POST", "/financial-transactions", { token: tenant.token, body: { account_id: bank.body.id, posted_at: day, amount: "410.00", name: "PIX RECEBIDO MERCADO SERRA AZUL LTDA" } })
    const screens = [
      ["/panel/keys/new", "key-form"], ["/panel/keys", "keys"], ["/panel/members", "members"], ["/panel/apps", "apps"], ["/panel/events", "events"],
      ["/panel/deleted", "deleted"], ["/panel/r/products", "products"], ["/panel/r/products/new", "product-form"], [`/panel/r/products/${product.body.id}`, "product"],
      ["/panel/reports/cash-flow?interval=week", "report-cash-flow"], ["/panel/reports/receivables-aging", "report-aging"],
      [`/panel/reconciliation/${bank.body.id}`, "reconciliation"]
    ]
    for (const [path, name] of screens) {
      await page.goto(`${forwarder.url}${path}`)
      await scan(name)
      if (name === "report-cash-flow" || name === "report-aging") {
        // The report's chart is drawn in full: visible, within the screen, beside its table and the CSV link.
        const box = (await page.locator("#report-chart").boundingBox())!
        expect(await page.locator("#report-chart").isVisible(), name).toBe(true)
        expect(box.x + box.width, name).toBeLessThanOrEqual(width)
        expect(box.height, name).toBeGreaterThan(0)
        expect(await page.locator("#report-table").isVisible(), name).toBe(true)
        expect(await page.locator("#report-csv").getAttribute("href"), name).toMatch(/\/panel\/reports\/[a-z-]+\.csv/)
      }
    }
  })
})
