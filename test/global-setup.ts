import { PGlite } from "@electric-sql/pglite"
import type { TestProject } from "vitest/node"
import { Effect, Layer, ManagedRuntime } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { layerMigrated, layerPglite, layerStore } from "../packages/core/src/index.js"

/**
 * One migrated, seeded store per run, cloned by every test file: an in-memory
 * dump for in-process tests and a data folder for tests that spawn the CLI.
 * With TEST_DATABASE_URL, that database is migrated and seeded once too.
 */
export default async function setup(project: TestProject) {
  // A folder of its own per run, so runs side by side never pull the template from under each other.
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "erp-test-run-"))
  const folder = path.join(root, "template")
  // Made from the source's migrations and catalogs, never from the template a build left behind.
  const runtime = ManagedRuntime.make(layerMigrated.pipe(Layer.provideMerge(layerPglite({ dataDir: folder, template: false }))))
  await runtime.runPromise(Effect.void)
  await runtime.dispose()
  const db = await PGlite.create({ dataDir: path.join(folder, "pgdata") })
  const dump = await db.dumpDataDir("none")
  await db.close()
  const dumpFile = path.join(root, "template.tar")
  fs.writeFileSync(dumpFile, Buffer.from(await dump.arrayBuffer()))
  project.provide("templateDump", dumpFile)
  project.provide("templateFolder", folder)

  const url = process.env.TEST_DATABASE_URL
  if (url) {
    const pg = ManagedRuntime.make(layerMigrated.pipe(Layer.provideMerge(layerStore({ kind: "postgres", url }))))
    await pg.runPromise(Effect.void)
    await pg.dispose()
  }
  return () => fs.rmSync(root, { recursive: true, force: true })
}

declare module "vitest" {
  export interface ProvidedContext {
    templateDump: string
    templateFolder: string
  }
}
