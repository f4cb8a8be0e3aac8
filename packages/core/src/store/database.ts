import type * as SqlClient from "@effect/sql/SqlClient"
import type { Layer } from "effect"
import * as path from "node:path"
import { layerPglite } from "./pglite.js"
import type { StatementRunner } from "./direct-statements.js"
import { layerPostgres, type StoreLimits } from "./postgres.js"

/** Where the data lives: a PostgreSQL server, or the embedded store in a folder. */
export type StoreLocation =
  /** `applicationName` names the host's sessions in `pg_stat_activity` (default `erp`). */
  | { readonly kind: "postgres"; readonly url: string; readonly limits?: Partial<StoreLimits>; readonly applicationName?: string }
  /** Without `dataDir` the store lives in memory; `loadDataDir` starts it from a dump (tests clone a template so). */
  | { readonly kind: "pglite"; readonly dataDir?: string; readonly loadDataDir?: Blob }

/** `--database-url`, then `DATABASE_URL`, else the embedded store in `ERP_DATA_DIR` or `.erp-data/`. */
export const resolveStoreLocation = (options: { databaseUrl?: string | undefined; dataDir?: string | undefined } = {}): StoreLocation => {
  const url = options.databaseUrl ?? process.env.DATABASE_URL
  if (url) return { kind: "postgres", url }
  return { kind: "pglite", dataDir: path.resolve(options.dataDir ?? process.env.ERP_DATA_DIR ?? ".erp-data") }
}

export const describeStore = (location: StoreLocation): string =>
  location.kind === "postgres"
    ? `PostgreSQL at ${redactUrl(location.url)}`
    : location.dataDir
    ? `embedded PGlite store in ${location.dataDir}`
    : "embedded PGlite store in memory"

const redactUrl = (url: string): string => {
  try {
    const parsed = new URL(url)
    if (parsed.password) parsed.password = "***"
    return parsed.toString()
  } catch {
    return "(unparsable url)"
  }
}

export const layerStore = (location: StoreLocation): Layer.Layer<SqlClient.SqlClient | StatementRunner, unknown> =>
  location.kind === "postgres" ? layerPostgres(location.url, location.limits, location.applicationName) : layerPglite(location)
