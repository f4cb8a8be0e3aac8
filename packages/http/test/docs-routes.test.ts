import * as fs from "node:fs"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { codeOf, USER_TEXTS } from "../../../test/support/docs-code.js"
import { startTestHost, type TestHost } from "../../../test/support/host.js"
import { testStore } from "../../../test/support/stores.js"

const METHODS = ["GET", "POST", "PATCH", "PUT", "DELETE"] as const
const SOME_ID = "0b0f3f4e-6a39-4c55-9d1c-2f4b8f1a7c21"

/** The first segments of the host's routes: the API document's, and the pages and protocols beside it. */
const routeRoots = (): ReadonlySet<string> => {
  const document = JSON.parse(fs.readFileSync("packages/http/openapi.json", "utf8")) as { paths: Record<string, unknown> }
  return new Set([...Object.keys(document.paths).map((path) => path.split("/")[1]), "panel", "oauth", ".well-known", "docs", "openapi.json", "mcp"])
}

interface Mention {
  readonly file: string
  readonly method: string | undefined
  readonly path: string
}

/** Routes shown in code: `GET /products`, `/sales-orders/{id}/receivables`, `/oauth/token`. */
const mentions = (): ReadonlyArray<Mention> => {
  const roots = routeRoots()
  const found = new Map<string, Mention>()
  for (const file of USER_TEXTS) {
    for (const code of codeOf(file)) {
      for (const match of code.matchAll(/(?:\b(GET|POST|PUT|PATCH|DELETE) +)?(?<![\w.:/~>})$@-])(\/[A-Za-z.][\w.{}:\-/]*)/g)) {
        // An elided path (`/.well-known/…<path>`) names no one route.
        const next = code[(match.index ?? 0) + match[0].length]
        if (next === "…" || next === "<") continue
        const path = match[2].replace(/[.,:]+$/, "")
        // A route of the host (an issuer path under an embedding app's base path `/erp` exists only there).
        if (!roots.has(path.split("/")[1]) || path.endsWith("/erp")) continue
        const method = match[1]
        found.set(`${method ?? "*"} ${path}`, { file, method, path })
      }
    }
  }
  return [...found.values()]
}

/** The path as a request: every parameter (`{id}`, `:allocationId`) a UUID. */
const concrete = (path: string) => path.replace(/\{[^}]*\}|:[A-Za-z]+/g, SOME_ID)

/** Every route the docs name answers something other than "no route" (no credential is sent, so nothing runs). */
describe("routes named in the docs", () => {
  let host: TestHost

  beforeAll(async () => {
    host = await startTestHost(testStore("pglite"))
  })
  afterAll(() => host?.close())

  const exists = async (method: string, path: string) => {
    const response = await fetch(host.url + concrete(path), { method, redirect: "manual" })
    const text = await response.text()
    return !(response.status === 404 && text.includes("ROUTE_NOT_FOUND"))
  }

  it("exist on the host, with the method the docs give", async () => {
    const all = mentions()
    expect(all.length).toBeGreaterThan(50)
    const missing: Array<string> = []
    for (const mention of all) {
      let found = false
      for (const method of mention.method ? [mention.method] : METHODS) {
        if (await exists(method, mention.path)) {
          found = true
          break
        }
      }
      if (!found) missing.push(`${mention.file}: ${mention.method ?? "(any method)"} ${mention.path}`)
    }
    expect(missing).toEqual([])
  })

  it("tells a route that is not there (the check itself)", async () => {
    expect(await exists("POST", "/sales-orders/{id}/receivables")).toBe(true)
    expect(await exists("POST", "/sales-orders/{id}/generate-receivables")).toBe(false)
    expect(await exists("GET", "/sales-orders/{id}/receivables")).toBe(false)
  })
})
