#!/usr/bin/env node
// Builds packages/core/store-template/: the embedded store as a new folder would hold it after
// its first start's migrations and catalog load, so that start unpacks it instead (see
// src/store/template.ts): a manifest and pgdata.tar.br, the data folder as one archive. Run by
// `npm run build` after `tsc -b`; reads the built dist.
// Skipped, quickly, when the template is already newer than every file it is made from.
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const coreDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
// Where src/store/template.ts looks for it.
const target = path.join(coreDir, "store-template")

/** Newest modification time among the files the template depends on: migrations, catalog data and seeding, PGlite. */
const newestInput = () => {
  let newest = 0
  const visit = (entry) => {
    const stat = fs.statSync(entry)
    if (stat.isDirectory()) for (const name of fs.readdirSync(entry)) visit(path.join(entry, name))
    else newest = Math.max(newest, stat.mtimeMs)
  }
  for (const entry of ["dist/store/migrations", "dist/store/migrate.js", "dist/store/catalog-seed.js", "dist/catalogs", "src/catalogs/data"]) visit(path.join(coreDir, entry))
  visit(fileURLToPath(import.meta.resolve("@electric-sql/pglite")))
  visit(fileURLToPath(import.meta.url))
  return newest
}

const manifest = path.join(target, "manifest.json")
if (!process.argv.includes("--force") && fs.existsSync(manifest) && fs.statSync(manifest).mtimeMs > newestInput()) process.exit(0)

const started = performance.now()
const { Effect, Layer, ManagedRuntime } = await import("effect")
const { archiveStoreTemplate, layerMigrated, layerPglite, writeStoreTemplateManifest } = await import("../dist/index.js")
const partial = `${target}.partial-${process.pid}`
fs.rmSync(partial, { recursive: true, force: true })
const runtime = ManagedRuntime.make(layerMigrated.pipe(Layer.provideMerge(layerPglite({ dataDir: partial, serveSocket: false, template: false }))))
await runtime.runPromise(Effect.void)
await runtime.dispose()
writeStoreTemplateManifest(partial)
archiveStoreTemplate(partial)
fs.rmSync(target, { recursive: true, force: true })
fs.renameSync(partial, target)
console.error(`erp: built the embedded store template in ${path.relative(process.cwd(), target) || target} (${((performance.now() - started) / 1000).toFixed(1)} s)`)
