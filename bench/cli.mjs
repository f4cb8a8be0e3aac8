// The operators' CLI at volume: `erp export products` of N products (rows/s from its summary, peak
// RSS from /usr/bin/time), and `erp seed demo` at a scale. Run after `npm run build`:
//   node bench/cli.mjs [products=100000] [scale=small]        (DATABASE_URL and ERP_SECRET_KEY for PostgreSQL)
// The products are inserted by one SQL statement (this measures the export, not the writes).
//
// Measured on the 2-core development machine (shared with two other engineers' work), Node 20:
//   see bench/README.md for the figures and what they say.
import { SqlClient } from "effect/sql"
import { layerCore, resolveStoreLocation, Tenancy } from "@erp/core"
import { Effect, ManagedRuntime } from "effect"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

const count = Number(process.argv[2] ?? 100_000)
const scale = process.argv[3] ?? "small"
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "erp-bench-cli-"))
const storeFlags = process.env.DATABASE_URL ? ["--database-url", process.env.DATABASE_URL] : ["--data-dir", dataDir]
const location = process.env.DATABASE_URL ? resolveStoreLocation() : { kind: "pglite", dataDir }
const bin = path.resolve("packages/cli/bin/erp.js")

// In this process, then closed: the embedded store takes one process at a time.
const runtime = ManagedRuntime.make(layerCore(location))
const tenantId = await runtime.runPromise(Effect.gen(function* () {
  const tenant = yield* (yield* Tenancy).createTenant({ name: `CLI bench ${Date.now()}`, countryCode: "BR" })
  const sql = yield* SqlClient.SqlClient
  yield* sql`INSERT INTO products (tenant_id, name, sale_price, reference_code, tags, br_data)
    SELECT ${tenant.id}::uuid, 'Produto ' || n, (n % 1000 + 0.99)::numeric, 'SKU-' || n, '["bench"]'::jsonb, '{"ncm_code":"09012100"}'::jsonb
    FROM generate_series(1, ${count}) AS n`
  return tenant.id
}).pipe(Effect.orDie))
await runtime.dispose()
console.log(`store: ${process.env.DATABASE_URL ? "PostgreSQL" : "PGlite"}; ${count} products inserted`)

const timed = (args) => {
  const result = spawnSync("/usr/bin/time", ["-v", process.execPath, bin, ...storeFlags, ...args], { encoding: "utf8", maxBuffer: 1 << 26 })
  const rss = Number(/Maximum resident set size \(kbytes\): (\d+)/.exec(result.stderr)?.[1] ?? 0)
  const wall = /Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)/.exec(result.stderr)?.[1]
  if (result.status !== 0) throw new Error(result.stderr)
  return { stdout: result.stdout, stderr: result.stderr, rssMb: rss / 1024, wall }
}

for (const format of ["ndjson", "csv"]) {
  const out = path.join(dataDir, `products.${format}`)
  const run = timed(["export", "products", "--tenant", tenantId, "--format", format, "--out", out])
  const summary = run.stderr.split("\n").find((line) => line.startsWith("Exported"))
  console.log(`export ${format.padEnd(6)} ${summary}; wall ${run.wall}; peak RSS ${run.rssMb.toFixed(0)} MB; file ${(fs.statSync(out).size / 1e6).toFixed(1)} MB`)
}

const seed = timed(["seed", "demo", "--scale", scale, "--country", "mixed", "--tenants", "2", "--json"])
const report = JSON.parse(seed.stdout)
console.log(`seed demo --scale ${scale} --tenants 2: ${report.records} records in ${report.seconds} s (${(report.records / report.seconds).toFixed(0)} records/s), wall ${seed.wall}, peak RSS ${seed.rssMb.toFixed(0)} MB`)
fs.rmSync(dataDir, { recursive: true, force: true })
