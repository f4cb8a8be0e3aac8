import * as SqlClient from "effect/sql/SqlClient"
import { layerStore } from "@erp/core"
import { Effect, ManagedRuntime } from "effect"
import { randomUUID } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { erp, json } from "../../../test/support/cli.js"
import { testDataDir } from "../../../test/support/stores.js"

const base = process.env.TEST_DATABASE_URL

/** The embedded store moved into PostgreSQL: needs a PostgreSQL server (TEST_DATABASE_URL) to make an empty database on. */
describe.skipIf(!base)("erp store copy --to postgres://", () => {
  let dir: string
  let url: string
  let name: string
  let admin: ManagedRuntime.ManagedRuntime<SqlClient.SqlClient, unknown>

  beforeAll(async () => {
    dir = testDataDir()
    name = `erp_copy_${randomUUID().slice(0, 8)}`
    admin = ManagedRuntime.make(layerStore({ kind: "postgres", url: base! }))
    await admin.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`CREATE DATABASE ${name}`)))
    const target = new URL(base!)
    target.pathname = `/${name}`
    url = target.toString()
  })
  afterAll(async () => {
    await admin.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)))
    await admin.dispose()
    fs.rmSync(dir, { recursive: true, force: true })
  })

  it("copies every table into an empty database, verified, after which PostgreSQL answers the same keys and records; a second copy is refused", async () => {
    const flags = ["--data-dir", dir]
    const tenant = json(await erp([...flags, "tenants", "create", "--name", "Mudança Ltda", "--country", "BR", "--json"]))
    const key = json(await erp([...flags, "keys", "create", "--tenant", tenant.id, "--name", "sync", "--all", "--json"]))
    fs.writeFileSync(path.join(dir, "products.ndjson"), JSON.stringify({ name: "Café 1 kg", sale_price: "52.50", br_data: { ncm_code: "09012100" } }))
    expect((await erp([...flags, "import", "products", path.join(dir, "products.ndjson"), "--tenant", tenant.id])).code).toBe(0)
    const before = (await erp([...flags, "export", "products", "--tenant", tenant.id])).stdout

    const copied = json(await erp([...flags, "store", "copy", "--to", url, "--json"]))
    expect(copied.tables).toMatchObject({ tenants: 1, api_keys: 1, products: 1 })
    expect(copied.tables.events).toBeGreaterThanOrEqual(1)

    // The host on PostgreSQL opens the sealed secrets with the embedded store's key (the tests' ERP_SECRET_KEY, else its key file).
    const keyFile = path.join(dir, "secret.key")
    const env = { ERP_SECRET_KEY: fs.existsSync(keyFile) ? fs.readFileSync(keyFile, "utf8").trim() : process.env.ERP_SECRET_KEY! }
    const onPostgres = ["--database-url", url]
    expect((await erp([...onPostgres, "export", "products", "--tenant", tenant.id], { env })).stdout).toBe(before)
    const keys = json(await erp([...onPostgres, "keys", "list", "--tenant", tenant.id, "--json"], { env }))
    expect(keys.map((listed: { id: string }) => listed.id)).toEqual([key.id])

    const again = await erp([...flags, "store", "copy", "--to", url])
    expect(again.code).toBe(1)
    expect(again.stderr).toContain("not empty")
  })
})

describe("erp store citus-script", () => {
  it("prints the statement placing each table, tenants' tables by tenant_id", async () => {
    const dir = testDataDir()
    try {
      const printed = await erp(["--data-dir", dir, "store", "citus-script"])
      expect(printed.code).toBe(0)
      expect(printed.stdout).toContain("SELECT create_reference_table('tenants');")
      expect(printed.stdout).toContain("SELECT create_distributed_table('sales_orders', 'tenant_id', colocate_with => 'customers');")
      expect(printed.stdout).toContain("SELECT create_distributed_table('mcp_sessions', 'id_hash', colocate_with => 'none');")
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })

  it("prints no script, and exits 1 naming the table, when a table breaks a rule", async () => {
    const dir = testDataDir()
    try {
      const store = ManagedRuntime.make(layerStore({ kind: "pglite", dataDir: dir }))
      try {
        await store.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`CREATE TABLE unplaced_notes (id uuid PRIMARY KEY)`)))
      } finally {
        await store.dispose()
      }
      const refused = await erp(["--data-dir", dir, "store", "citus-script"])
      expect(refused.code).toBe(1)
      expect(refused.stdout).toBe("")
      expect(refused.stderr).toContain("unplaced_notes has no tenant_id")
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})
