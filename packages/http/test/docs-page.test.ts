import { OpenApi } from "effect/http-api"
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { BROWSER_TESTS_RUN, launchBrowser, skipWithoutBrowser } from "../../../test/support/browser.js"
import { startTestHost, type TestHost } from "../../../test/support/host.js"
import { testStore } from "../../../test/support/stores.js"
import { BASE_PATH, startHost } from "../../../examples/fetch-handler.js"
import { Api } from "../src/api.js"

/** Where the page's screenshot goes, for a person to look at (not committed). */
const SCREENSHOT = "/tmp/erp-docs-page.png"

/** Every tag of the served document: one per resource, plus health and versions. */
const tags = (OpenApi.fromApi(Api) as unknown as { tags: ReadonlyArray<{ name: string }> }).tags.map((tag) => tag.name)

/**
 * The page loads only from the host: nothing may come from another origin (users may be
 * offline), and nothing may log an error or break the content security policy.
 */
const openDocs = async (browser: Browser, url: string) => {
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } })
  const problems: Array<string> = []
  const foreign: Array<string> = []
  const origin = new URL(url).origin
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(`console: ${message.text()}`)
  })
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`))
  page.on("request", (request) => {
    const target = new URL(request.url())
    if (!["data:", "blob:"].includes(target.protocol) && target.origin !== origin) foreign.push(request.url())
  })
  const loaded: Array<string> = []
  page.on("response", (answer) => loaded.push(`${answer.status()} ${new URL(answer.url()).pathname}`))
  page.on("requestfailed", (request) => problems.push(`failed: ${request.url()} ${request.failure()?.errorText ?? ""}`))
  const response = await page.goto(url, { waitUntil: "load" })
  return { page, response, problems, foreign, loaded }
}

/** The reference is rendered once its title and the last resource's tag are on the page. */
const waitForReference = async (page: Page) => {
  await page.getByText("erp Integrations API", { exact: false }).first().waitFor({ timeout: 60_000 })
  await page.getByText(tags[tags.length - 1], { exact: true }).first().waitFor({ timeout: 60_000 })
}

describe("the API reference at /docs in Chromium", () => {
  let host: TestHost
  let browser: Browser

  skipWithoutBrowser()

  beforeAll(async () => {
    if (!BROWSER_TESTS_RUN) return
    ;[host, browser] = await Promise.all([startTestHost(testStore("pglite")), launchBrowser()])
  })
  afterAll(async () => {
    await browser?.close()
    await host?.close()
  })

  it("renders the reference of every resource from the host's own assets, with no console error", async () => {
    const { page, response, problems, foreign } = await openDocs(browser, `${host.url}/docs`)
    expect(response?.status()).toBe(200)
    expect(response?.headers()["content-security-policy"]).toMatch(/script-src 'self'/)
    await waitForReference(page)
    // Every resource's tag (and health, versions) is in the navigation.
    const navigation = await page.locator("body").innerText()
    const missing = tags.filter((tag) => !navigation.split("\n").some((line) => line.trim() === tag))
    expect(missing).toEqual([])
    expect(tags.length).toBeGreaterThan(20)
    // Authentication is explained on the page itself: the header, both kinds of credential, how to make a key.
    await expect(page.getByText("Every operation except", { exact: false }).first().isVisible()).resolves.toBe(true)
    const shown = await page.locator("body").innerText()
    for (const words of ["Authorization: Bearer", "API key", "OAuth 2.1", "erp keys create", "--permission products:read"]) expect(shown, words).toContain(words)
    await page.screenshot({ path: SCREENSHOT, fullPage: false })
    await page.close()
    expect({ foreign, problems }).toEqual({ foreign: [], problems: [] })
  }, 120_000)

  it("renders under the fetch handler's base path, reading that path's document", async () => {
    const embedded = await startHost(0, { store: testStore("pglite"), webhooks: false })
    try {
      const { page, response, problems, foreign, loaded } = await openDocs(browser, `${embedded.url}${BASE_PATH}/docs`)
      expect(response?.status()).toBe(200)
      await waitForReference(page)
      expect(loaded).toEqual(expect.arrayContaining([`200 ${BASE_PATH}/docs/scalar.js`, `200 ${BASE_PATH}/openapi.json`]))
      await page.close()
      expect({ foreign, problems }).toEqual({ foreign: [], problems: [] })
    } finally {
      await embedded.close()
    }
  }, 120_000)

  it("serves the bundle and the document it reads as the page's own files", async () => {
    const script = await fetch(`${host.url}/docs/scalar.js`)
    expect(script.status).toBe(200)
    expect(script.headers.get("content-type")).toMatch(/javascript/)
    expect((await script.text()).length).toBeGreaterThan(1_000_000)
    const document = await fetch(`${host.url}/openapi.json`)
    expect(((await document.json()) as { openapi: string }).openapi).toBe("3.1.0")
  })
})
