import { type ChildProcess, execFile, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"

/**
 * The packages as a user gets them: packed into tarballs (scripts/pack.mjs, over the build `npm
 * test` has just made), installed with npm into a new app in a temporary folder (the tarballs by
 * `file:` path, their dependencies from the npm registry; nothing of this repository is linked
 * or on a path), then used as the README and docs/embedding.md show. One install serves every
 * test. `ERP_SKIP_INSTALL_TEST=1` skips it, for a machine without the registry.
 */
const ROOT = fileURLToPath(new URL("../..", import.meta.url))
const SKIP = process.env.ERP_SKIP_INSTALL_TEST === "1"
const SKIP_NOTE = "ERP_SKIP_INSTALL_TEST=1: the packages were not installed from their tarballs"
/** The production install of the four packages (du's figure: the disk it takes). */
const MAX_INSTALL_MIB = 200
const PACKAGES = ["core", "http", "mcp", "cli"]
const INSTALL_TIMEOUT = 15 * 60_000
const STEP_TIMEOUT = 180_000

const execFileAsync = promisify(execFile)

/**
 * The environment of a user's shell: none of this run's settings (the test secret key, a test
 * database, npm's own variables of `npm test`), and this Node first on the PATH.
 */
const userEnv = (): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = {}
  for (const [name, value] of Object.entries(process.env)) {
    if (/^(ERP_|DATABASE_URL$|TEST_DATABASE_URL$|PORT$|NODE_OPTIONS$|VITEST|INIT_CWD$|npm_(package|lifecycle|command)|npm_config_(local_prefix|prefix|global_prefix)$)/.test(name)) continue
    env[name] = value
  }
  env.PATH = `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ""}`
  return env
}

const run = async (command: string, args: ReadonlyArray<string>, cwd: string, timeout = STEP_TIMEOUT) => {
  try {
    return await execFileAsync(command, args, { cwd, env: userEnv(), timeout, maxBuffer: 64 * 1024 * 1024, encoding: "utf8" })
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string; message: string }
    throw new Error(`${command} ${args.join(" ")} (in ${cwd}) failed: ${failed.message}\n${failed.stdout ?? ""}\n${failed.stderr ?? ""}`)
  }
}
const npm = (args: ReadonlyArray<string>, cwd: string) => run("npm", [...args, "--no-audit", "--no-fund", "--loglevel=error"], cwd, INSTALL_TIMEOUT)

/** A process that serves until stopped; resolves with the first line of its output `found` matches. */
const started: Array<ChildProcess> = []
const start = (command: string, args: ReadonlyArray<string>, cwd: string, found: RegExp) =>
  new Promise<{ child: ChildProcess; match: RegExpExecArray }>((resolve, reject) => {
    const child = spawn(command, args, { cwd, env: userEnv(), stdio: ["ignore", "pipe", "pipe"] })
    started.push(child)
    let output = ""
    const timer = setTimeout(() => reject(new Error(`${command} ${args.join(" ")} did not start: ${output}`)), 60_000)
    const onData = (chunk: Buffer) => {
      output += chunk
      const match = found.exec(output)
      if (match) {
        clearTimeout(timer)
        resolve({ child, match })
      }
    }
    child.stdout.on("data", onData)
    child.stderr.on("data", onData)
    child.on("exit", (code) => {
      clearTimeout(timer)
      reject(new Error(`${command} ${args.join(" ")} exited with ${code}: ${output}`))
    })
  })
const stop = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    const kill = setTimeout(() => child.kill("SIGKILL"), 10_000)
    child.once("exit", () => {
      clearTimeout(kill)
      resolve()
    })
    child.kill("SIGTERM")
  })

/** What a folder takes on disk, as `du` counts it (each file's blocks, hard links once), and its files' bytes. */
const diskUsage = (dir: string): { disk: number; bytes: number } => {
  const seen = new Set<string>()
  let disk = 0
  let bytes = 0
  const visit = (entry: string) => {
    const stat = fs.lstatSync(entry)
    const key = `${stat.dev}:${stat.ino}`
    if (seen.has(key)) return
    seen.add(key)
    disk += Number.isFinite(stat.blocks) ? stat.blocks * 512 : stat.size
    if (stat.isDirectory()) for (const name of fs.readdirSync(entry)) visit(path.join(entry, name))
    else bytes += stat.size
  }
  visit(dir)
  return { disk, bytes }
}
const mib = (bytes: number) => bytes / 1024 / 1024

/** The README's embedding example: the TypeScript block that calls createFetchHandler. */
const readmeSnippet = (): string => {
  const blocks = [...fs.readFileSync(path.join(ROOT, "README.md"), "utf8").matchAll(/^```ts\n([\s\S]*?)^```/gm)].map((match) => match[1])
  const snippet = blocks.find((block) => block.includes("createFetchHandler"))
  if (!snippet) throw new Error("README.md has no ```ts block calling createFetchHandler")
  return snippet
}

/** An app on Hono from npm with erp under /erp; prints its address and an API key once listening. */
const HONO_APP = `import { serve } from "@hono/node-server"
import { createFetchHandler } from "@erp/http"
import { Hono } from "hono"

const erp = await createFetchHandler({ basePath: "/erp", dataDir: process.argv[2] ?? ".erp-hono" })
const tenant = await erp.tenants.create({ name: "Hono App Ltda", countryCode: "US" })
const { token } = await erp.keys.create({ tenantId: tenant.id, name: "app", permissions: "all" })

const app = new Hono()
app.get("/", (c) => c.text("the app's own page"))
app.all("/erp/*", (c) => erp.handler(c.req.raw))

const server = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }, (info) => {
  console.log(JSON.stringify({ url: \`http://127.0.0.1:\${info.port}\`, token }))
})
const close = () => server.close(() => void erp.dispose().then(() => process.exit(0)))
process.once("SIGTERM", close)
process.once("SIGINT", close)
`

/** An Effect app: its own service and layer composed with erp's layerCore, the engine used through the same Effect. */
const EFFECT_APP = `import { Context, Effect, Layer } from "effect"
import { layerCore, operatorPrincipal, products, ResourceEngine, Tenancy } from "@erp/core"

class Pricing extends Context.Service<Pricing, { readonly withMargin: (cost: string) => string }>()("app/Pricing") {
  static readonly layer = Layer.succeed(Pricing, { withMargin: (cost: string) => (Number(cost) * 1.5).toFixed(2) })
}

const program = Effect.gen(function* () {
  const tenancy = yield* Tenancy
  const engine = yield* ResourceEngine
  const pricing = yield* Pricing
  const tenant = yield* tenancy.createTenant({ name: "Effect App Ltda", countryCode: "BR" })
  const principal = yield* operatorPrincipal(tenant.id, "effect-app")
  yield* engine.create(products, principal, { name: "Moka pot", sale_price: pricing.withMargin("40") })
  const page = yield* engine.list(products, principal, [])
  return page.data
})

const records = await Effect.runPromise(program.pipe(Effect.provide(Layer.mergeAll(layerCore({ kind: "pglite" }), Pricing.layer))))
console.log(JSON.stringify(records))
`

/** @erp/client against a running host: a product created, then the list read back. */
const CLIENT_APP = `import { createClient } from "@erp/client"

const [baseUrl, token] = process.argv.slice(2)
if (!baseUrl || !token) throw new Error("usage: client-app.ts <base url> <token>")
const client = createClient({ baseUrl, token })
await client.POST("/products", { body: { name: "Typed client product", sale_price: "12.50" } })
const page = await client.GET("/products")
console.log(JSON.stringify(page.data.map((product) => product.name)))
`

const TSCONFIG = {
  compilerOptions: {
    target: "ES2023",
    // With skipLibCheck false, effect's declarations need the Web Crypto types (CryptoKey, JsonWebKey) of DOM's lib, as does hono's.
    lib: ["ES2023", "DOM"],
    module: "NodeNext",
    moduleResolution: "NodeNext",
    types: ["node"],
    strict: true,
    skipLibCheck: false,
    verbatimModuleSyntax: true,
    noEmit: true
  },
  include: ["src"]
}

describe("the packages installed from their tarballs into a new app", () => {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "erp-install-"))
  const app = path.join(work, "app")
  const tarballs = path.join(work, "tarballs")
  /** Package folder names with a tarball: the four, and client when packages/client exists. */
  let packed: ReadonlyArray<string> = []
  let production = { disk: 0, bytes: 0 }
  let productionPackages: ReadonlyArray<string> = []
  const tarball = (name: string) => path.join(tarballs, `erp-${name}-${JSON.parse(fs.readFileSync(path.join(ROOT, "packages", name, "package.json"), "utf8")).version}.tgz`)
  const node = (args: ReadonlyArray<string>, cwd = app) => run(process.execPath, args, cwd)

  beforeEach((context) => {
    if (SKIP) context.skip(SKIP_NOTE)
  })

  beforeAll(async () => {
    if (SKIP) return
    for (const name of PACKAGES) {
      if (!fs.existsSync(path.join(ROOT, "packages", name, "dist"))) throw new Error(`packages/${name}/dist is missing: run npm run build (npm test builds first)`)
    }
    const registry = (await run("npm", ["config", "get", "registry"], work)).stdout.trim()
    await run("npm", ["ping", "--fetch-retries=0", "--fetch-timeout=20000"], work, 30_000).catch((error: Error) => {
      throw new Error(`the npm registry ${registry} cannot be reached: this test installs the packages' dependencies from it. ` +
        `Set ERP_SKIP_INSTALL_TEST=1 to skip it on a machine without the registry.\n${error.message}`)
    })

    packed = [...PACKAGES, ...(fs.existsSync(path.join(ROOT, "packages/client/package.json")) ? ["client"] : [])]
    await node([path.join(ROOT, "scripts/pack.mjs"), tarballs, ...packed], ROOT)

    // The production install: the four packages (and effect, their peer) and nothing else, measured before the rest.
    fs.mkdirSync(path.join(app, "src"), { recursive: true })
    const dependencies = Object.fromEntries(PACKAGES.map((name) => [`@erp/${name}`, `file:${tarball(name)}`]))
    fs.writeFileSync(path.join(app, "package.json"), JSON.stringify({ name: "erp-install-test-app", private: true, type: "module", dependencies: { ...dependencies, effect: "^4.1.0" } }, null, 2))
    await npm(["install"], app)
    production = diskUsage(path.join(app, "node_modules"))
    console.log(`production install of ${PACKAGES.map((name) => `@erp/${name}`).join(", ")}: ${mib(production.disk).toFixed(1)} MiB on disk (du), ` +
      `${mib(production.bytes).toFixed(1)} MiB of files; tarballs ${packed.map((name) => `${name} ${mib(fs.statSync(tarball(name)).size).toFixed(1)} MiB`).join(", ")}`)
    productionPackages = fs.readdirSync(path.join(app, "node_modules/@erp")).sort()

    // The app's own tools (the repository's TypeScript, Node's types, Hono) and the typed client.
    const typescript = JSON.parse(fs.readFileSync(path.join(ROOT, "node_modules/typescript/package.json"), "utf8")).version
    const client = packed.includes("client") ? [`file:${tarball("client")}`] : []
    await npm(["install", ...client, `typescript@${typescript}`, "@types/node@^24", "hono@^4", "@hono/node-server@^2"], app)
    fs.writeFileSync(path.join(app, "tsconfig.json"), JSON.stringify(TSCONFIG, null, 2))
    fs.writeFileSync(path.join(app, "src/readme.ts"), readmeSnippet())
    fs.writeFileSync(path.join(app, "src/effect-app.ts"), EFFECT_APP)
    fs.writeFileSync(path.join(app, "src/hono-app.ts"), HONO_APP)
    if (packed.includes("client")) fs.writeFileSync(path.join(app, "src/client-app.ts"), CLIENT_APP)
  }, INSTALL_TIMEOUT)

  afterAll(async () => {
    await Promise.all(started.map(stop))
    fs.rmSync(work, { recursive: true, force: true })
  })

  it(`takes at most ${MAX_INSTALL_MIB} MiB, with one effect for the app and erp, and no code cache made elsewhere`, () => {
    expect(mib(production.disk)).toBeLessThanOrEqual(MAX_INSTALL_MIB)
    const modules = path.join(app, "node_modules")
    expect(productionPackages).toEqual([...PACKAGES].sort())
    // The peer dependency: no package of ours holds an effect of its own.
    for (const name of packed) expect(fs.existsSync(path.join(modules, "@erp", name, "node_modules/effect")), `@erp/${name} has its own effect`).toBe(false)
    expect(fs.readdirSync(path.join(modules, "@erp/cli/dist/bundle"))).toEqual(["main.cjs"])
    expect(fs.existsSync(path.join(modules, "@scalar"))).toBe(false)
  })

  it("(a) compiles a strict TypeScript app against the packages, their declarations checked too", async () => {
    await node([path.join(app, "node_modules/typescript/bin/tsc"), "-p", "."])
  })

  it("(b) runs the README's embedding example: a tenant, a key, POST then GET /products through the handler", async () => {
    const { stdout } = await node(["src/readme.ts"])
    expect(stdout).toContain("Espresso 1 kg")
    expect(fs.existsSync(path.join(app, ".erp-data/pgdata/PG_VERSION"))).toBe(true)
  })

  it("(c) runs an Effect app that composes layerCore with a layer of its own", async () => {
    const { stdout } = await node(["src/effect-app.ts"])
    expect(JSON.parse(stdout.trim().split("\n").at(-1) ?? "")).toEqual([expect.objectContaining({ name: "Moka pot", sale_price: "60.000000" })])
  })

  it("(d) mounts the fetch handler under /erp of a Hono app, over real HTTP", async () => {
    const { child, match } = await start(process.execPath, ["src/hono-app.ts", path.join(work, "hono-store")], app, /^\{"url".*\}$/m)
    try {
      const { url, token } = JSON.parse(match[0]) as { url: string; token: string }
      expect(await (await fetch(`${url}/erp/health`)).json()).toMatchObject({ status: "ok" })
      expect(await (await fetch(url)).text()).toBe("the app's own page")
      const products = await fetch(`${url}/erp/products`, { headers: { authorization: `Bearer ${token}` } })
      expect(products.status).toBe(200)
      // The API reference's script, from the asset the package carries.
      const scalar = await fetch(`${url}/erp/docs/scalar.js`)
      expect(scalar.status).toBe(200)
      expect(await scalar.text()).toContain("createApiReference")
    } finally {
      await stop(child)
    }
  })

  /** `erp serve` on a new folder: its --json line, and /health answered. */
  const serveAnswersHealth = async (erp: string, cwd: string, dataDir: string) => {
    const { child, match } = await start(erp, ["serve", "--data-dir", dataDir, "--port", "0", "--json"], cwd, /^\{"url".*\}$/m)
    try {
      const { url, demo } = JSON.parse(match[0]) as { url: string; demo: { token: string } | null }
      expect(demo?.token).toMatch(/^sk_/)
      expect(await (await fetch(`${url}/health`)).json()).toMatchObject({ status: "ok" })
      return { url, token: demo?.token ?? "" }
    } finally {
      await stop(child)
    }
  }

  it("(e) runs the installed erp command: --help, and serve on a new embedded folder", async () => {
    const erp = path.join(app, "node_modules/.bin/erp")
    const { stdout } = await run(erp, ["--help"], app)
    expect(stdout).toMatch(/^Usage: erp/)
    // The code cache is written here, at the first run, beside the bundle it caches.
    expect(fs.readdirSync(path.join(app, "node_modules/@erp/cli/dist/bundle"))).toContain("short.v8-cache")
    await serveAnswersHealth(erp, app, path.join(work, "cli-store"))
  })

  it("(f) runs the CLI installed globally, from a folder outside the repository", async () => {
    const prefix = path.join(work, "global")
    const elsewhere = path.join(work, "elsewhere")
    fs.mkdirSync(elsewhere)
    await npm(["install", "--global", "--prefix", prefix, ...PACKAGES.map(tarball)], elsewhere)
    const erp = path.join(prefix, "bin/erp")
    expect((await run(erp, ["--help"], elsewhere)).stdout).toMatch(/^Usage: erp/)
    await serveAnswersHealth(erp, elsewhere, path.join(elsewhere, "store"))

    // Installed from the registry, npm puts the CLI's packages inside its own node_modules: the
    // CLI finds their files (catalogs, store template, PGlite worker, API reference) there too.
    const globalModules = path.join(prefix, "lib/node_modules/@erp")
    fs.mkdirSync(path.join(globalModules, "cli/node_modules/@erp"), { recursive: true })
    for (const name of ["core", "http", "mcp"]) fs.renameSync(path.join(globalModules, name), path.join(globalModules, "cli/node_modules/@erp", name))
    const { url } = await serveAnswersHealth(erp, elsewhere, path.join(elsewhere, "nested-store"))
    expect(url).toMatch(/^http:/)
  })

  it("(g) calls the host with @erp/client, when that package exists", async (context) => {
    if (!packed.includes("client")) return context.skip("no packages/client: @erp/client was not packed")
    const { child, match } = await start(process.execPath, ["src/hono-app.ts", path.join(work, "client-store")], app, /^\{"url".*\}$/m)
    try {
      const { url, token } = JSON.parse(match[0]) as { url: string; token: string }
      const { stdout } = await node(["src/client-app.ts", `${url}/erp`, token])
      expect(JSON.parse(stdout.trim().split("\n").at(-1) ?? "")).toEqual(["Typed client product"])
    } finally {
      await stop(child)
    }
  })
})
