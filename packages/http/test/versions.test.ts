import * as fs from "node:fs"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestHost, type TestHost } from "../../../test/support/host.js"
import { testStore } from "../../../test/support/stores.js"

/** The rows of the changelog table in docs/api-reference.md, between its markers. */
const readmeChangelog = () => {
  const readme = fs.readFileSync("docs/api-reference.md", "utf8")
  const table = readme.slice(readme.indexOf("<!-- versions:start -->"), readme.indexOf("<!-- versions:end -->"))
  return table
    .split("\n")
    .filter((line) => /^\| \d{4}-\d{2} \|/.test(line))
    .map((line) => {
      const [date, version, change] = line.slice(1, -1).split(" | ").map((cell) => cell.trim())
      return { date, version, change }
    })
}

describe("GET /versions", () => {
  let host: TestHost

  beforeAll(async () => {
    host = await startTestHost(testStore("pglite"))
  })
  afterAll(() => host?.close())

  it("lists v1 as current and default, with the dated changelog, without credentials", async () => {
    const response = await host.request("GET", "/versions")
    expect(response.status).toBe(200)
    expect(response.headers.get("api-version")).toBe("v1")
    expect(response.body.current).toBe("v1")
    expect(response.body.versions).toEqual([{ version: "v1", current: true, default: true }])
    const quoteChange = response.body.changelog.find((entry: { date: string }) => entry.date === "2026-08")
    expect(quoteChange.version).toBe("v1")
    expect(quoteChange.change).toMatch(/`customer` object embedded in `GET \/quotes`/)
    expect(quoteChange.change).toMatch(/`id`, `legal_name`, `trade_name`, `tax_id`/)
  })

  it("agrees with the docs' table, entry for entry", async () => {
    const { body } = await host.request("GET", "/versions")
    const rows = readmeChangelog()
    expect(rows.length).toBeGreaterThan(0)
    expect(rows).toEqual(body.changelog)
  })

  it("is refused like every route for an api-version it does not list", async () => {
    const response = await host.request("GET", "/versions", { headers: { "api-version": "v2" } })
    expect(response.status).toBe(400)
    expect(response.body.code).toBe("INVALID_API_VERSION")
  })
})
