// `npm run bench` (`-- --quick` for a short pass): the host against a reference server that runs
// the same SQL and answers the same bytes (reference-server.mjs), driven in interleaved rounds
// with autocannon; then the embedded store's start and the CLI's latency. Prints one table and
// writes bench/results/<time>.json with the machine's description. See bench/README.md.
import autocannon from "autocannon"
import { execFileSync, spawn } from "node:child_process"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { cpuMs, peakRssKb } from "../proc.mjs"
import { measureOutside } from "../startup.mjs"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")
const erpBin = path.join(root, "packages/cli/bin/erp.js")
const quick = process.argv.includes("--quick")
// `--only <text>`: just the requests whose name contains the text (comma-separated for several), and
// nothing outside the host: a short loop while working on one path.
const onlyAt = process.argv.indexOf("--only")
const only = onlyAt > 0 ? process.argv[onlyAt + 1]?.split(",").map((text) => text.trim().toLowerCase()).filter(Boolean) : undefined
const chosen = (requests) => only ? Object.fromEntries(Object.entries(requests).filter(([name]) => only.some((text) => name.toLowerCase().includes(text)))) : requests
const settings = quick
  // The warm-up is as long in a quick pass: after 1 s the host's code was not optimised yet (a GET of
  // a product measured 0.53, 0.38 and 0.28 ms of CPU in three 5 s runs back to back).
  ? { rounds: 2, seconds: 4, warmupSeconds: 3, connections: 10, cliRuns: 3 }
  : { rounds: 5, seconds: 10, warmupSeconds: 3, connections: 10, cliRuns: 5 }
const readUrl = process.env.BENCH_DATABASE_URL ?? process.env.DATABASE_URL
const writeUrl = process.env.BENCH_WRITE_DATABASE_URL
if (!readUrl) {
  console.error("Set BENCH_DATABASE_URL (or DATABASE_URL) to the PostgreSQL database seeded with `erp seed demo --orders 1000000 …`, and BENCH_WRITE_DATABASE_URL to a throwaway database for writes. See bench/README.md.")
  process.exit(2)
}
const pg = createRequire(createRequire(import.meta.url).resolve("@erp/core"))("pg")
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "erp-bench-"))
const children = new Set()
process.on("exit", () => { for (const child of children) child.kill("SIGKILL") })
process.on("SIGINT", () => process.exit(130))

/** The environment with `changes` applied (`undefined` removes a variable). */
const withEnv = (changes) => Object.fromEntries(Object.entries({ ...process.env, ...changes }).filter(([, value]) => value !== undefined))

const erp = (args, env = {}) => JSON.parse(execFileSync(process.execPath, [erpBin, ...args], { env: withEnv(env), encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] }))

/** Starts a server process that prints one JSON line with its `url`. */
const startServer = (args, env = {}) =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { env: withEnv(env), stdio: ["ignore", "pipe", "inherit"] })
    children.add(child)
    let out = ""
    child.stdout.on("data", (chunk) => {
      out += chunk
      const line = out.split("\n").find((candidate) => candidate.startsWith("{"))
      if (line) resolve({ child, url: JSON.parse(line).url })
    })
    child.on("exit", (code) => reject(new Error(`${args.join(" ")} exited with ${code}: ${out}`)))
  })

const stop = (server) => new Promise((resolve) => {
  server.child.removeAllListeners("exit")
  server.child.once("exit", resolve)
  server.child.kill("SIGTERM")
  children.delete(server.child)
})


const drive = async (server, request, token, seconds) => {
  const before = cpuMs(server.child.pid)
  const headers = { authorization: `Bearer ${token}`, ...(request.body || request.bodies ? { "content-type": "application/json" } : {}), ...request.headers }
  let sent = 0
  const nextPath = () => request.targets ? request.path.replace(request.targets[0], request.targets[sent++ % request.targets.length]) : request.path
  const result = await autocannon({
    url: server.url + request.path,
    method: request.method,
    connections: settings.connections,
    duration: seconds,
    headers,
    ...(request.body ? { body: JSON.stringify(request.body) } : {}),
    // Updates alternate between two bodies, so each one changes the record, over the request's targets.
    ...(request.bodies ? { requests: request.bodies.map((body) => ({ method: request.method, headers, body: JSON.stringify(body), setupRequest: (outgoing) => ({ ...outgoing, path: nextPath() }) })) } : {})
  })
  const cpu = cpuMs(server.child.pid) - before
  const total = result.requests.total
  return {
    rps: total / seconds,
    p50: result.latency.p50,
    p99: result.latency.p99,
    cpuPerRequest: total > 0 ? cpu / total : null,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts
  }
}

const median = (values) => {
  const sorted = values.filter((value) => value !== null).sort((a, b) => a - b)
  if (sorted.length === 0) return null
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

/**
 * What depth alone costs: the first page and a deep one asked in turn, one at a time on one
 * connection, so neither waits behind the other requests nor is measured minutes apart from the
 * other (under load, the p50s of the two rows move with the queue and the machine's drift).
 * Medians of `count` requests of each, in ms.
 */
const aloneLatency = async (server, token, first, deep, count = 200) => {
  const times = { first: [], deep: [] }
  const ask = async (request, into) => {
    const started = performance.now()
    await (await fetch(server.url + request.path, { headers: { authorization: `Bearer ${token}`, ...request.headers } })).arrayBuffer()
    into.push(performance.now() - started)
  }
  for (let index = 0; index < count; index++) {
    await ask(first, times.first)
    await ask(deep, times.deep)
  }
  return { firstMs: median(times.first), deepMs: median(times.deep), ratio: median(times.deep) / median(times.first) }
}

/** Records the host's statements and bodies, starts both servers, checks the bodies match, runs the rounds. */
const compare = async (label, url, token, requests, env) => {
  const requestsFile = path.join(tmp, `${label}-requests.json`)
  const recordedFile = path.join(tmp, `${label}-recorded.json`)
  fs.writeFileSync(requestsFile, JSON.stringify(requests))
  execFileSync(process.execPath, [path.join(root, "bench/hot-path/record.mjs"), url, token, recordedFile, requestsFile], { env: withEnv(env), stdio: "inherit" })
  const recorded = JSON.parse(fs.readFileSync(recordedFile, "utf8"))
  const host = await startServer([erpBin, "serve", "--port", "0", "--json", "--no-webhooks"], { ...env, DATABASE_URL: url })
  const reference = await startServer([path.join(root, "bench/hot-path/reference-server.mjs"), url, token, recordedFile])
  const rows = []
  for (const [name, request] of Object.entries(recorded)) {
    const body = request.body ?? request.bodies?.[0]
    const ask = (server) => fetch(server.url + request.path, {
      method: request.method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { "content-type": "application/json" } : {}), ...request.headers },
      ...(body ? { body: JSON.stringify(body) } : {})
    }).then((response) => response.text())
    // After the warm-up: the first read of a cold database may run into the statement timeout.
    for (const server of [host, reference]) await drive(server, request, token, settings.warmupSeconds)
    const [fromHost, fromReference] = await Promise.all([ask(host), ask(reference)])
    // Reads must be byte for byte the same; a write answers a new id or state and time each time.
    const sameBytes = request.method === "GET" || request.mcp?.read ? fromHost === fromReference : "n/a (write)"
    if (sameBytes === false) {
      const at = [...fromHost].findIndex((char, index) => char !== fromReference[index])
      console.error(`${name}: the host's answer differs from the recorded one at ${at}:\n  host:     ${fromHost.slice(Math.max(0, at - 60), at + 100)}\n  recorded: ${fromReference.slice(Math.max(0, at - 60), at + 100)}`)
    }
    const samples = { erp: [], reference: [] }
    for (let round = 0; round < settings.rounds; round++) {
      const order = round % 2 === 0 ? ["erp", "reference"] : ["reference", "erp"]
      for (const side of order) samples[side].push(await drive(side === "erp" ? host : reference, request, token, settings.seconds))
    }
    const summary = (list) => ({
      rps: median(list.map((sample) => sample.rps)),
      p50: median(list.map((sample) => sample.p50)),
      p99: median(list.map((sample) => sample.p99)),
      cpuPerRequest: median(list.map((sample) => sample.cpuPerRequest)),
      non2xx: list.reduce((sum, sample) => sum + sample.non2xx, 0),
      errors: list.reduce((sum, sample) => sum + sample.errors, 0)
    })
    const row = {
      name,
      request: `${request.method} ${request.path.length > 70 ? `${request.path.slice(0, 67)}…` : request.path}`,
      statements: request.statements.length,
      sameBytes,
      erp: summary(samples.erp),
      reference: summary(samples.reference),
      rounds: samples
    }
    row.ratio = row.erp.rps / row.reference.rps
    rows.push(row)
    console.error(`${name}: erp ${row.erp.rps.toFixed(0)} req/s, reference ${row.reference.rps.toFixed(0)} req/s, ratio ${row.ratio.toFixed(2)}`)
  }
  const firstPage = Object.keys(recorded).find((name) => name.startsWith("list"))
  const deepPage = Object.keys(recorded).find((name) => name.startsWith("deep"))
  if (firstPage && deepPage) {
    const deepRow = rows.find((row) => row.name === deepPage)
    deepRow.alone = {
      erp: await aloneLatency(host, token, recorded[firstPage], recorded[deepPage]),
      reference: await aloneLatency(reference, token, recorded[firstPage], recorded[deepPage])
    }
  }
  await stop(host)
  await stop(reference)
  return rows
}

// ---- The data sets ----

const readPool = new pg.Pool({ connectionString: readUrl, max: 1 })
// Statistics first, whatever seeded the data and whether autovacuum runs: without them the planner
// looked up each order's receivables in a never-sampled table by scanning the tenant's (both servers
// run the same SQL, so the ratios hold either way, but the pages cost 30 % more and deep ones more).
await readPool.query("ANALYZE")
const tenantId = process.env.BENCH_TENANT ??
  (await readPool.query("SELECT tenant_id FROM sales_orders GROUP BY tenant_id ORDER BY count(*) DESC LIMIT 1")).rows[0]?.tenant_id
if (!tenantId) throw new Error("No sales orders in BENCH_DATABASE_URL: seed it first (bench/README.md)")
const orders = Number((await readPool.query("SELECT count(*) FROM sales_orders WHERE tenant_id = $1", [tenantId])).rows[0].count)
const middle = (await readPool.query("SELECT record_number, id FROM sales_orders WHERE tenant_id = $1 AND deleted_at IS NULL ORDER BY record_number OFFSET $2 LIMIT 1", [tenantId, Math.floor(orders / 2)])).rows[0]
const order = (await readPool.query("SELECT o.id FROM sales_orders o WHERE o.tenant_id = $1 AND o.deleted_at IS NULL AND EXISTS (SELECT 1 FROM sales_order_items i WHERE i.tenant_id = o.tenant_id AND i.sales_order_id = o.id) ORDER BY o.record_number LIMIT 1", [tenantId])).rows[0]
const product = (await readPool.query("SELECT id FROM products WHERE tenant_id = $1 AND deleted_at IS NULL ORDER BY created_at, id LIMIT 1", [tenantId])).rows[0]
const postgresVersion = (await readPool.query("SHOW server_version")).rows[0].server_version
await readPool.end()

/** A `tools/call` over MCP's Streamable HTTP (at the host's root); `read` tools answer the same bytes each time. */
function mcpCall(name, args) {
  return { method: "POST", path: "/", mcp: { read: true }, body: { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } } }
}

const keyFor = (url, tenant) =>
  erp(["keys", "create", "--tenant", tenant, "--name", "bench", "--all", "--rate-limit", "1000000", "--json"], { DATABASE_URL: url }).token

const readToken = keyFor(readUrl, tenantId)
const readRequests = {
  "list, limit 100": { method: "GET", path: "/sales-orders?limit=100" },
  "2 filters + sort": { method: "GET", path: "/sales-orders?limit=100&status=confirmed&operation_type=sale&sort=record_number:desc" },
  [`deep page (record ${middle.record_number})`]: { method: "GET", path: "/sales-orders?limit=100", deep: [Number(middle.record_number), middle.id] },
  "get one sales order": { method: "GET", path: `/sales-orders/${order.id}` },
  "get one product": { method: "GET", path: `/products/${product.id}` },
  // MCP over Streamable HTTP: record.mjs opens the session (stored, so any host resumes it) and
  // both sides answer the same tools/call.
  "MCP list_sales_orders, limit 100": mcpCall("list_sales_orders", { limit: 100 }),
  "MCP get_sales_order": mcpCall("get_sales_order", { id: order.id })
}

const rows = []
console.error(`Reads: ${orders.toLocaleString("en")} sales orders, tenant ${tenantId}; ${settings.rounds} rounds of ${settings.seconds} s, ${settings.connections} connections`)
if (Object.keys(chosen(readRequests)).length > 0) rows.push(...await compare("read", readUrl, readToken, chosen(readRequests), {}))

if (writeUrl) {
  const tenant = erp(["tenants", "create", "--name", `Bench ${new Date().toISOString()}`, "--country", "BR", "--json"], { DATABASE_URL: writeUrl })
  const writeToken = keyFor(writeUrl, tenant.id)
  const writePool = new pg.Pool({ connectionString: writeUrl, max: 1 })
  // Updates go round 101 products (an odd number, so each product gets the two bodies in turn): ten
  // connections updating one row would measure the row's lock, which the reference does not take.
  const targets = (await writePool.query("INSERT INTO products (tenant_id, name) SELECT $1, 'Bench target ' || n FROM generate_series(1, 101) AS n RETURNING id", [tenant.id])).rows.map((row) => row.id)
  const target = targets[0]
  const customer = (await writePool.query("INSERT INTO customers (tenant_id, legal_name, tax_id) VALUES ($1, 'Bench customer', '11222333000181') RETURNING id", [tenant.id])).rows[0].id
  await writePool.end()
  const item = (n) => ({ product_id: target, item_description: `Item ${n}`, quantity: String(n), unit_price: "52.50", discount_amount: "1.25" })
  const writeRequests = chosen({
    "create a product": { method: "POST", path: "/products", body: { name: "Bench product", sale_price: "12.50", tags: ["bench"] } },
    "update a product": { method: "PATCH", path: `/products/${target}`, targets, bodies: [{ name: "Bench product, renamed", sale_price: "13.75" }, { name: "Bench product", sale_price: "12.50" }] },
    "create a sales order, 3 items": { method: "POST", path: "/sales-orders", body: { customer_id: customer, operation_type: "sale", product_type: "goods", order_date: "2026-11-20", items: [item(1), item(2), item(3)] } }
  })
  if (Object.keys(writeRequests).length > 0) rows.push(...await compare("write", writeUrl, writeToken, writeRequests, {}))
} else {
  console.error("BENCH_WRITE_DATABASE_URL not set: writes skipped")
}

// ---- Outside the host ----

/**
 * The export path: `erp export products` of tenants holding 10,000 and 1,000,000 products (made
 * once in the read database by one SQL statement each, under tenants named for their size), and
 * in the full run the million sales orders with their items. rows/s from the export's summary;
 * peak RSS is the process's VmHWM, read while it runs. The export runs with the heap flags
 * `bin/erp.js` gives it.
 */
const EXPORT_HEAP = ["--max-old-space-size=128", "--max-semi-space-size=1", "--initial-old-space-size=56"]
const exportTenant = async (rows) => {
  const name = `Bench export ${rows}`
  const pool = new pg.Pool({ connectionString: readUrl, max: 1 })
  try {
    const found = (await pool.query("SELECT id FROM tenants WHERE name = $1", [name])).rows[0]
    if (found) return found.id
    const tenant = erp(["tenants", "create", "--name", name, "--country", "BR", "--json"], { DATABASE_URL: readUrl })
    console.error(`Making ${rows.toLocaleString("en")} products for the export bench (once)`)
    await pool.query(`INSERT INTO products (tenant_id, name, sale_price, reference_code, tags, br_data)
      SELECT $1::uuid, 'Produto ' || n, (n % 1000 + 0.99)::numeric, 'SKU-' || n, '["bench"]'::jsonb, '{"ncm_code":"09012100"}'::jsonb
      FROM generate_series(1, $2::int) AS n`, [tenant.id, rows])
    await pool.query("ANALYZE products")
    return tenant.id
  } finally {
    await pool.end()
  }
}

const exportRun = (resource, tenant) => new Promise((resolve, reject) => {
  const out = path.join(tmp, `export-${resource}-${tenant}.ndjson`)
  const child = spawn(process.execPath, [...EXPORT_HEAP, erpBin, "export", resource, "--tenant", tenant, "--out", out, "--json"],
    { env: withEnv({ DATABASE_URL: readUrl }), stdio: ["ignore", "pipe", "ignore"] })
  children.add(child)
  let peakKb = 0
  const watch = setInterval(() => {
    try {
      peakKb = Math.max(peakKb, peakRssKb(child.pid))
    } catch {}
  }, 50)
  let stdout = ""
  child.stdout.on("data", (chunk) => (stdout += chunk))
  child.on("exit", (code) => {
    clearInterval(watch)
    children.delete(child)
    fs.rmSync(out, { force: true })
    if (code !== 0) return reject(new Error(`erp export ${resource} exited with ${code}`))
    const summary = JSON.parse(stdout)
    resolve({ resource, rows: summary.rows, seconds: summary.seconds, rowsPerSecond: summary.rows / summary.seconds, peakRssMiB: peakKb / 1024 })
  })
})

const exports = []
if (!only) for (const rows of [10_000, 1_000_000]) exports.push({ name: `products, ${rows.toLocaleString("en")}`, ...await exportRun("products", await exportTenant(rows)) })
if (!quick && !only) exports.push({ name: `sales orders with items, ${orders.toLocaleString("en")}`, ...await exportRun("sales-orders", tenantId) })
for (const run of exports) console.error(`export ${run.name}: ${run.rowsPerSecond.toFixed(0)} rows/s, peak RSS ${run.peakRssMiB.toFixed(0)} MiB`)

// Embedded start (a new folder, the same folder again) and CLI commands on PostgreSQL: bench/startup.mjs.
const outside = only ? [] : await measureOutside({ bins: [erpBin], runs: settings.cliRuns, databaseUrl: readUrl, tenantId, log: (line) => console.error(line) })
const outsideFigure = (name) => outside.find((row) => row.name === name)?.results[0]
const freshStartMs = outsideFigure("embedded start, new folder")?.wallMs
const existingStartMs = outsideFigure("embedded start, existing folder")?.wallMs
const cli = Object.fromEntries(outside.filter((row) => row.name.startsWith("erp ")).map((row) => [`${row.name} (PostgreSQL)`.replace("--version (PostgreSQL)", "--version"), row.results[0].wallMs]))

// ---- Report ----

const fixed = (value, digits = 0) => value === null || value === undefined ? "–" : value.toFixed(digits)
const lines = [
  "| Request | statements | same bytes | erp req/s | reference req/s | ratio | p50 ms erp / ref | p99 ms erp / ref | CPU ms/req erp / ref | non-2xx |",
  "|---|---|---|---|---|---|---|---|---|---|",
  ...rows.map((row) =>
    `| ${row.name} | ${row.statements} | ${row.sameBytes === true ? "yes" : row.sameBytes || "NO"} | ${fixed(row.erp.rps)} | ${fixed(row.reference.rps)} | ${fixed(row.ratio, 2)} | ${fixed(row.erp.p50, 1)} / ${fixed(row.reference.p50, 1)} | ${fixed(row.erp.p99, 1)} / ${fixed(row.reference.p99, 1)} | ${fixed(row.erp.cpuPerRequest, 2)} / ${fixed(row.reference.cpuPerRequest, 2)} | ${row.erp.non2xx + row.erp.errors} / ${row.reference.non2xx + row.reference.errors} |`),
  "",
  ...(only ? [] : [`Embedded store start to the first 200 on /health (median of ${settings.cliRuns}): fresh folder ${fixed(freshStartMs)} ms, existing folder ${fixed(existingStartMs)} ms`]),
  ...outside.filter((row) => row.name.startsWith("erp ")).map((row) => `${row.name}${row.name === "erp --version" ? "" : " (PostgreSQL)"}: ${fixed(row.results[0].wallMs)} ms, CPU ${fixed(row.results[0].cpuMs)} ms (median of ${settings.cliRuns})`),
  ...exports.map((run) => `erp export ${run.name}: ${fixed(run.rowsPerSecond)} rows/s in ${fixed(run.seconds, 1)} s, peak RSS ${fixed(run.peakRssMiB)} MiB`)
]
const deep = rows.find((row) => row.name.startsWith("deep"))
const first = rows.find((row) => row.name.startsWith("list"))
if (deep?.alone) {
  const { erp: alone, reference: referenceAlone } = deep.alone
  lines.push(`Deep page / first page latency, one request at a time (medians of 200 each, in turn): ${fixed(alone.ratio, 2)} (${fixed(alone.deepMs, 1)} / ${fixed(alone.firstMs, 1)} ms; reference ${fixed(referenceAlone.ratio, 2)})`)
}
if (deep && first) lines.push(`Deep page / first page latency under load (p50 of their rounds): ${fixed(deep.erp.p50 / first.erp.p50, 2)} (reference ${fixed(deep.reference.p50 / first.reference.p50, 2)})`)
console.log(lines.join("\n"))

const commit = (() => {
  try {
    return execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim()
  } catch {
    return null
  }
})()
const machine = {
  cpus: os.cpus().length,
  cpu: os.cpus()[0]?.model,
  memoryGiB: Math.round(os.totalmem() / 2 ** 30),
  loadAverage: os.loadavg(),
  platform: `${os.platform()} ${os.release()}`,
  node: process.version,
  postgres: postgresVersion
}
const resultsDir = path.join(root, "bench/results")
fs.mkdirSync(resultsDir, { recursive: true })
const file = path.join(resultsDir, `hot-path-${new Date().toISOString().replace(/[:.]/g, "-")}${quick ? "-quick" : ""}${only ? "-only" : ""}.json`)
fs.writeFileSync(file, `${JSON.stringify({ date: new Date().toISOString(), commit, quick, only: only ?? null, settings, machine, orders, rows, embeddedStart: { freshMs: freshStartMs, existingMs: existingStartMs }, cliMs: cli, outside, exports }, null, 2)}\n`)
console.error(`Written ${path.relative(root, file)}`)
fs.rmSync(tmp, { recursive: true, force: true })
process.exit(0)
