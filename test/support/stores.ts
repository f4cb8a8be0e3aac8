import { type StoreLocation } from "@erp/core"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { inject } from "vitest"

export type StoreKind = "pglite" | "postgres"

/** The stores every behaviour test runs on: PGlite always, PostgreSQL when TEST_DATABASE_URL is set. */
export const storeKinds: ReadonlyArray<StoreKind> = process.env.TEST_DATABASE_URL ? ["pglite", "postgres"] : ["pglite"]

/**
 * A fresh in-memory clone of the migrated template, or the shared test PostgreSQL (tests isolate by
 * tenant), reached through a pooler in transaction mode when `ERP_DB_POOLER=transaction` says so:
 * a test that gives the host settings of its own still reaches the database the way the run does.
 */
export const testStore = (kind: StoreKind): StoreLocation => {
  if (kind === "postgres") {
    return { kind: "postgres", url: process.env.TEST_DATABASE_URL!, ...(process.env.ERP_DB_POOLER === "transaction" ? { limits: { pooler: "transaction" } } : {}) }
  }
  return { kind: "pglite", loadDataDir: new Blob([fs.readFileSync(inject("templateDump"))]) }
}

/** A data folder copied from the template, for tests that run the CLI as a separate process. */
export const testDataDir = (): string => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "erp-test-"))
  fs.cpSync(inject("templateFolder"), dir, { recursive: true })
  fs.rmSync(path.join(dir, "erp.lock"), { force: true })
  return dir
}
