import { ALL_SETTINGS } from "@erp/core"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"

/** The repository explains itself: the docs name what the code serves, and point nowhere outside it. */
const read = (file: string) => fs.readFileSync(file, "utf8")

const sourceFiles = (dir: string): Array<string> =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    return entry.isDirectory() ? sourceFiles(full) : entry.name.endsWith(".ts") ? [full] : []
  })

/** Strings shaped like error codes that the API never answers: a DNS error start-up reads, the file marking a PostgreSQL data folder. */
const NOT_API_CODES = new Set(["EAI_AGAIN", "PG_VERSION"])

describe("the documentation", () => {
  const api = read("docs/api.md")
  /** The contract's pages (api.md indexes them): the error codes table is concepts.md's; tax codes and delivery errors live with their subject. */
  const contract = ["concepts", "resources", "finance-and-sales", "catalogs", "webhooks", "mcp", "oauth", "panel", "limits", "reports", "reconciliation", "collection"].map((name) => read(`docs/${name}.md`)).join("\n")

  it("names every route of the OpenAPI document in docs/api.md", () => {
    const document = JSON.parse(read("packages/http/openapi.json")) as { paths: Record<string, unknown> }
    const missing = Object.keys(document.paths).filter((route) => !api.includes(route))
    expect(missing).toEqual([])
  })

  it("lists every error code the code can answer in the contract's pages", () => {
    const sources = ["core", "http", "mcp", "cli"].flatMap((name) => sourceFiles(`packages/${name}/src`))
    const codes = new Set<string>()
    for (const file of sources) {
      for (const match of read(file).matchAll(/"([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)"|code: "([A-Z]+)"/g)) codes.add(match[1] ?? match[2])
    }
    // Environment variables (ERP_…, DATABASE_URL) are names of settings, not codes.
    const settings = new Set(ALL_SETTINGS.map((setting) => setting.name))
    const undocumented = [...codes].filter((code) => !NOT_API_CODES.has(code) && !code.startsWith("ERP_") && !settings.has(code) && !contract.includes(`\`${code}\``))
    expect(codes.size).toBeGreaterThan(20)
    expect(undocumented).toEqual([])
  })

  it.each(["README.md", ...fs.readdirSync("docs").map((name) => `docs/${name}`)])("%s links only to files of this repository that exist", (file) => {
    const text = read(file)
    expect(text).not.toMatch(/\.\.\/shared|DESIGN\.md|integrations-api\.md/)
    const targets = [...text.matchAll(/\]\(([^)#\s]+)(#[^)]*)?\)/g)].map((match) => match[1]).filter((target) => !/^[a-z]+:/.test(target))
    const missing = targets.filter((target) => !fs.existsSync(path.join(path.dirname(file), target)))
    expect(missing).toEqual([])
  })

  it("never tells anyone to run npx erp", () => {
    for (const file of ["README.md", ...fs.readdirSync("docs").map((name) => `docs/${name}`), "examples/mcp-client-config.json"]) {
      // A command line (`npx erp tenants …`), not the warning that names it.
      expect(read(file), file).not.toMatch(/^\s*npx\s+erp\b|npx\s+erp\s+[a-z-]|"npx"/m)
    }
    expect(read("README.md")).toMatch(/Never `npx erp`/)
  })
})
