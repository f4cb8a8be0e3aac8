import type * as SqlClient from "effect/sql/SqlClient"
import { Config, type ConfigProvider, type Layer, Option, Redacted } from "effect"
import * as path from "node:path"
import { loadConfigSync } from "../config/load.js"
import { storeSettings } from "../config/variables.js"
import { layerPglite } from "./pglite.js"
import type { StatementRunner } from "./direct-statements.js"
import { layerPostgres, type StoreLimits } from "./postgres.js"

/** Where the data lives: a PostgreSQL server, or the embedded store in a folder. */
export type StoreLocation =
  /** `applicationName` names the host's sessions in `pg_stat_activity` (default `erp`). */
  | { readonly kind: "postgres"; readonly url: string; readonly limits?: Partial<StoreLimits>; readonly applicationName?: string }
  /** Without `dataDir` the store lives in memory; `loadDataDir` starts it from a dump (tests clone a template so). */
  | { readonly kind: "pglite"; readonly dataDir?: string; readonly loadDataDir?: Blob }

const configuredStore = Config.all({ databaseUrl: storeSettings.databaseUrl.config, dataDir: storeSettings.dataDir.config })

/**
 * `--database-url`, then `DATABASE_URL`, else the embedded store in `--data-dir`, `ERP_DATA_DIR`
 * or `.erp-data/`. The variables are read through `provider` (the environment unless given).
 */
export const resolveStoreLocation = (
  options: { databaseUrl?: string | undefined; dataDir?: string | undefined } = {},
  provider?: ConfigProvider.ConfigProvider
): StoreLocation => {
  const configured = loadConfigSync(configuredStore, provider)
  const url = options.databaseUrl ?? Option.getOrUndefined(Option.map(configured.databaseUrl, Redacted.value))
  if (url) return { kind: "postgres", url }
  return { kind: "pglite", dataDir: path.resolve(options.dataDir ?? configured.dataDir) }
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
