import * as SqlClient from "effect/sql/SqlClient"
import { PGlite } from "@electric-sql/pglite"
import { archiveStoreTemplate, copyStoreTemplate, layerMigrated, layerPglite, writeStoreTemplateManifest } from "@erp/core"
import { Effect, Layer, ManagedRuntime } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { inject } from "vitest"

/**
 * A new embedded folder starts as a copy of the store template (`npm run build` makes one) instead
 * of running initdb, the migrations and the catalog load. Here the template is the test run's
 * migrated store with a marker row, so a store that holds the marker was copied from it.
 */
describe("the embedded store template", () => {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "erp-template-test-"))
  const template = path.join(scratch, "template")

  const query = async <A>(dataDir: string, text: string, options: { template?: string | false; sharedBuffers?: string } = {}) => {
    const runtime = ManagedRuntime.make(layerMigrated.pipe(Layer.provideMerge(layerPglite({ dataDir, serveSocket: false, ...options }))))
    try {
      return await runtime.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<A & object>(text)))
    } finally {
      await runtime.dispose()
    }
  }
  const marker = (dataDir: string, options: { template?: string | false } = {}) =>
    query<{ value: string }>(dataDir, "SELECT value FROM erp_settings WHERE key = 'template_marker'", { template, ...options })

  beforeAll(async () => {
    fs.cpSync(path.join(inject("templateFolder"), "pgdata"), path.join(template, "pgdata"), { recursive: true })
    const db = await PGlite.create({ dataDir: path.join(template, "pgdata") })
    await db.exec("INSERT INTO erp_settings (key, value) VALUES ('template_marker', 'from the template')")
    await db.close()
    writeStoreTemplateManifest(template)
  })
  afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }))

  it("gives a new folder the template's migrated store with its catalogs, and later writes stay in the copy", async () => {
    const dir = path.join(scratch, "new")
    expect(await marker(dir)).toEqual([{ value: "from the template" }])
    const [catalogs] = await query<{ countries: number; cities: number }>(dir, "SELECT (SELECT count(*)::int FROM countries) AS countries, (SELECT count(*)::int FROM cities) AS cities")
    expect(catalogs.countries).toBeGreaterThan(200)
    expect(catalogs.cities).toBeGreaterThan(5000)

    await query(dir, "UPDATE erp_settings SET value = 'changed in the copy' WHERE key = 'template_marker'")
    expect(await marker(dir)).toEqual([{ value: "changed in the copy" }])
    expect(await marker(path.join(scratch, "another"))).toEqual([{ value: "from the template" }])
  })

  it("gives the same store from the archive the build keeps it as", async () => {
    const archived = path.join(scratch, "archived")
    fs.cpSync(template, archived, { recursive: true })
    archiveStoreTemplate(archived)
    expect(fs.readdirSync(archived).sort()).toEqual(["manifest.json", "pgdata.tar.br"])
    expect(await marker(path.join(scratch, "from-archive"), { template: archived })).toEqual([{ value: "from the template" }])
    const files = (dir: string) => fs.readdirSync(dir, { recursive: true, encoding: "utf8" }).sort()
    const copied = path.join(scratch, "unpacked", "pgdata")
    expect(await copyStoreTemplate(copied, archived)).toBe(true)
    expect(files(copied)).toEqual(files(path.join(template, "pgdata")))
  })

  it("leaves a folder that already holds a store as it is", async () => {
    const dir = path.join(scratch, "existing")
    fs.cpSync(path.join(inject("templateFolder"), "pgdata"), path.join(dir, "pgdata"), { recursive: true })
    expect(await marker(dir)).toEqual([])
  })

  it("is not used when made by another PGlite, nor when missing; a half-made copy is replaced", async () => {
    const other = path.join(scratch, "other-pglite")
    fs.cpSync(template, other, { recursive: true })
    fs.writeFileSync(path.join(other, "manifest.json"), JSON.stringify({ pglite: "0.0.1" }))
    expect(await copyStoreTemplate(path.join(scratch, "refused", "pgdata"), other)).toBe(false)
    expect(await copyStoreTemplate(path.join(scratch, "none", "pgdata"), path.join(scratch, "no-such-template"))).toBe(false)
    expect(fs.existsSync(path.join(scratch, "refused", "pgdata"))).toBe(false)

    // An empty pgdata folder (initdb that never finished) holds no store; a killed copy's leftovers go.
    const interrupted = path.join(scratch, "interrupted", "pgdata")
    fs.mkdirSync(interrupted, { recursive: true })
    fs.mkdirSync(`${interrupted}.partial-99999/base`, { recursive: true })
    expect(await copyStoreTemplate(interrupted, template)).toBe(true)
    expect(fs.existsSync(path.join(interrupted, "PG_VERSION"))).toBe(true)
    expect(fs.readdirSync(path.dirname(interrupted))).toEqual(["pgdata"])
  })

  it("runs PostgreSQL with a 32MB buffer pool unless told another size, and refuses a size it would not take", async () => {
    const dir = path.join(scratch, "buffers")
    const sharedBuffers = (options: { sharedBuffers?: string } = {}) =>
      query<{ shared_buffers: string }>(dir, "SHOW shared_buffers", options).then((rows) => rows[0].shared_buffers)
    expect(await sharedBuffers()).toBe("32MB")
    expect(await sharedBuffers({ sharedBuffers: "48MB" })).toBe("48MB")
    const previous = process.env.ERP_EMBEDDED_SHARED_BUFFERS
    try {
      process.env.ERP_EMBEDDED_SHARED_BUFFERS = "16MB"
      expect(await sharedBuffers()).toBe("16MB")
      process.env.ERP_EMBEDDED_SHARED_BUFFERS = "lots"
      await expect(sharedBuffers()).rejects.toThrow(/^ERP_EMBEDDED_SHARED_BUFFERS must be a size such as 32MB \(kB, MB or GB\); got "lots"$/)
    } finally {
      if (previous === undefined) delete process.env.ERP_EMBEDDED_SHARED_BUFFERS
      else process.env.ERP_EMBEDDED_SHARED_BUFFERS = previous
    }
  })
})
