import { execFileSync, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const LAUNCHER = fileURLToPath(new URL("../bin/erp.js", import.meta.url))
const PACKAGES = ["core", "http", "mcp", "cli"]

/**
 * `bin/erp.js` runs the bundle only while it is at least as new as every package's build: after a
 * `tsc -b` that the bundle has not followed, the compiled modules run, so a developer never runs
 * yesterday's code. Checked on a copy of the launcher over a bundle and a dist/ that say who ran.
 */
describe("the erp launcher", () => {
  let root: string
  const file = (relative: string) => path.join(root, relative)
  const touch = (relative: string, at: number) => fs.utimesSync(file(relative), at, at)
  // On the embedded store (no DATABASE_URL), where short commands keep a code cache of their own.
  const run = (...args: Array<string>) =>
    execFileSync(process.execPath, [file("cli/bin/erp.js"), ...args], { encoding: "utf8", env: { ...process.env, DATABASE_URL: "" } }).trim()

  beforeAll(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), "erp-launcher-"))
    fs.mkdirSync(file("cli/bin"), { recursive: true })
    fs.mkdirSync(file("cli/dist/bundle"), { recursive: true })
    fs.copyFileSync(LAUNCHER, file("cli/bin/erp.js"))
    fs.writeFileSync(file("cli/package.json"), JSON.stringify({ type: "module" }))
    fs.writeFileSync(file("cli/dist/bundle/main.cjs"), "exports.main = (argv) => console.log('bundle ' + argv.slice(2).join(' '))\n")
    fs.writeFileSync(file("cli/dist/main.js"), "export const main = (argv) => console.log('dist ' + argv.slice(2).join(' '))\n")
    fs.writeFileSync(file("cli/dist/version.js"), "export const VERSION = '9.9.9'\n")
    for (const name of PACKAGES) {
      fs.mkdirSync(file(`${name}/dist`), { recursive: true })
      fs.writeFileSync(file(`${name}/dist/.tsbuildinfo`), "{}")
    }
  })
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }))

  const builtAt = (seconds: number) => {
    for (const name of PACKAGES) touch(`${name}/dist/.tsbuildinfo`, seconds)
  }

  it("runs the bundle when it is newer than every package's build", () => {
    builtAt(1_000)
    touch("cli/dist/bundle/main.cjs", 2_000)
    expect(run("tenants", "list")).toBe("bundle tenants list")
    // Again, now with the V8 code cache the first run wrote.
    expect(fs.existsSync(file("cli/dist/bundle/short.v8-cache"))).toBe(true)
    expect(run("tenants", "list")).toBe("bundle tenants list")
  })

  it("runs the compiled modules when one package was built after the bundle", () => {
    builtAt(1_000)
    touch("cli/dist/bundle/main.cjs", 2_000)
    touch("http/dist/.tsbuildinfo", 3_000)
    expect(run("keys", "list")).toBe("dist keys list")
  })

  it("runs the compiled modules when there is no bundle", () => {
    fs.renameSync(file("cli/dist/bundle/main.cjs"), file("cli/dist/bundle/away.cjs"))
    try {
      expect(run("migrate")).toBe("dist migrate")
    } finally {
      fs.renameSync(file("cli/dist/bundle/away.cjs"), file("cli/dist/bundle/main.cjs"))
    }
  })

  it("answers --version without loading either", () => {
    fs.writeFileSync(file("cli/dist/main.js"), "throw new Error('loaded')\n")
    expect(run("--version")).toBe("9.9.9")
  })

  it("runs a bundle whose text is past ASCII as UTF-8, and an ASCII one as it is", () => {
    builtAt(1_000)
    const bundle = file("cli/dist/bundle/main.cjs")
    const original = fs.readFileSync(bundle)
    try {
      fs.writeFileSync(bundle, "exports.main = () => console.log('Pará — ' + 'Par\\u00e1')\n")
      touch("cli/dist/bundle/main.cjs", 2_000)
      expect(run("tenants", "list")).toBe("Pará — Pará")
    } finally {
      fs.writeFileSync(bundle, original)
      touch("cli/dist/bundle/main.cjs", 2_000)
    }
    expect(run("tenants", "list")).toBe("bundle tenants list")
  })

  it("keeps a host's code cache per store, written again when a run compiled much more than it holds", () => {
    builtAt(1_000)
    const bundle = file("cli/dist/bundle/main.cjs")
    const original = fs.readFileSync(bundle)
    const cache = (name: string) => file(`cli/dist/bundle/${name}.v8-cache`)
    const size = (name: string) => fs.statSync(cache(name)).size
    try {
      // 300 functions, of which a run calls CALLS: V8 compiles a function when first called, and the cache holds what was compiled.
      const functions = Array.from({ length: 300 }, (_, index) => `function f${index}(x) { const list = []; for (let i = 0; i < x; i++) list.push({ i, s: "${index}" + i }); return list.length }`)
      fs.writeFileSync(bundle, `${functions.join("\n")}\nconst all = [${functions.map((_, index) => `f${index}`).join(", ")}]\n` +
        "exports.main = (argv) => { for (let n = 0; n < Number(process.env.CALLS); n++) all[n](2); console.log('bundle ' + argv.slice(2).join(' ')) }\n")
      touch("cli/dist/bundle/main.cjs", 2_000)
      const host = (calls: number, ...args: Array<string>) =>
        execFileSync(process.execPath, [file("cli/bin/erp.js"), "serve", ...args], { encoding: "utf8", env: { ...process.env, DATABASE_URL: "", CALLS: String(calls) } }).trim()

      expect(host(10)).toBe("bundle serve")
      const early = size("serve-embedded")
      // A run that compiled about as much leaves the cache alone; one that compiled far more writes it again.
      host(12)
      expect(size("serve-embedded")).toBe(early)
      host(300)
      expect(size("serve-embedded")).toBeGreaterThan(early * 1.5)
      // On PostgreSQL the host runs other code: a cache of its own, the embedded one untouched.
      const embedded = size("serve-embedded")
      expect(host(0, "--database-url", "postgres://nowhere/db")).toBe("bundle serve --database-url postgres://nowhere/db")
      expect(fs.existsSync(cache("serve-postgres"))).toBe(true)
      expect(size("serve-embedded")).toBe(embedded)
    } finally {
      fs.writeFileSync(bundle, original)
      touch("cli/dist/bundle/main.cjs", 2_000)
    }
  })

  it("runs export in a Node of its own with the heap limits, which stops when the launcher is killed outright", async () => {
    builtAt(1_000)
    const bundle = file("cli/dist/bundle/main.cjs")
    const original = fs.readFileSync(bundle)
    const report = file("export-report.txt")
    try {
      // A long export: notes its flags, then runs until SIGTERM, which it notes too.
      fs.writeFileSync(bundle, `exports.main = () => {
        const fs = require("node:fs")
        fs.writeFileSync(${JSON.stringify(report)}, "running " + process.pid + " " + process.execArgv.join(" ") + "\\n")
        process.on("SIGTERM", () => { fs.appendFileSync(${JSON.stringify(report)}, "stopped\\n"); process.exit(0) })
        setInterval(() => {}, 1000)
      }\n`)
      touch("cli/dist/bundle/main.cjs", 2_000)
      const launcher = spawn(process.execPath, [file("cli/bin/erp.js"), "export", "products"], { stdio: "ignore", env: { ...process.env, DATABASE_URL: "" } })
      const running = async (pattern: RegExp) => {
        for (let tries = 0; tries < 200; tries++) {
          const text = fs.existsSync(report) ? fs.readFileSync(report, "utf8") : ""
          if (pattern.test(text)) return text
          await new Promise((resolve) => setTimeout(resolve, 25))
        }
        throw new Error(`no ${pattern} in ${report}`)
      }
      const started = await running(/^running (\d+) .*--max-old-space-size=128/)
      const exporter = Number(/^running (\d+)/.exec(started)![1])
      expect(exporter).not.toBe(launcher.pid)
      launcher.kill("SIGKILL")
      await running(/stopped/)
    } finally {
      fs.writeFileSync(bundle, original)
      touch("cli/dist/bundle/main.cjs", 2_000)
    }
  })
})
