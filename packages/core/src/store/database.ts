import type * as SqlClient from "effect/sql/SqlClient"
import { Config, type ConfigProvider, Effect, Layer, Option, Redacted } from "effect"
import * as path from "node:path"
import { InvalidSetting, loadConfig, loadConfigSync } from "../config/load.js"
import { storeSettings } from "../config/variables.js"
import { layerPglite } from "./pglite.js"
import type { StatementRunner } from "./direct-statements.js"
import { layerPostgres, storeLimitsConfig, type StoreLimits } from "./postgres.js"
import { layerReadReplicas, type ReplicaSettings } from "./read-replicas.js"

/** Where the data lives: a PostgreSQL server, or the embedded store in a folder. */
export type StoreLocation =
  /**
   * `applicationName` names the host's sessions in `pg_stat_activity` (default `erp`); `replicas`
   * win over `ERP_DATABASE_READ_URL` and `ERP_READ_REPLICA_WAIT_MS`.
   */
  | {
    readonly kind: "postgres"
    readonly url: string
    readonly limits?: Partial<StoreLimits>
    readonly applicationName?: string
    readonly replicas?: Partial<ReplicaSettings>
  }
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

const configuredReplicas = Config.all({ urls: storeSettings.readDatabaseUrls.config, waitMs: storeSettings.replicaWaitMs.config })

/** The replicas' URLs, one or more, comma-separated in the one secret. */
const replicaUrls = (value: Option.Option<Redacted.Redacted<string>>): ReadonlyArray<string> =>
  Option.match(value, { onNone: () => [], onSome: (urls) => Redacted.value(urls).split(",").map((url) => url.trim()).filter((url) => url !== "") })

/** PostgreSQL, and its read replicas when there are any. */
const layerPostgresStore = (location: Extract<StoreLocation, { kind: "postgres" }>): Layer.Layer<SqlClient.SqlClient | StatementRunner, unknown> => {
  const applicationName = location.applicationName ?? "erp"
  const primary = layerPostgres(location.url, location.limits, applicationName)
  const replicas = Layer.unwrap(Effect.map(Effect.all([loadConfig(configuredReplicas), loadConfig(storeLimitsConfig)]), ([configured, limits]) => {
    const settings: ReplicaSettings = { urls: location.replicas?.urls ?? replicaUrls(configured.urls), waitMs: location.replicas?.waitMs ?? configured.waitMs }
    return settings.urls.length === 0 ? Layer.empty : layerReadReplicas(settings, { ...limits, ...location.limits }, applicationName)
  }))
  return Layer.provideMerge(replicas, primary)
}

/** The embedded store has no replica: a read URL set for it is a mistake said at start. */
const noReplicas = Layer.effectDiscard(Effect.flatMap(loadConfig(storeSettings.readDatabaseUrls.config), (urls) =>
  Option.isSome(urls) ? Effect.fail(new InvalidSetting("ERP_DATABASE_READ_URL names read replicas of a PostgreSQL primary: set DATABASE_URL too, or unset it for the embedded store")) : Effect.void))

export const layerStore = (location: StoreLocation): Layer.Layer<SqlClient.SqlClient | StatementRunner, unknown> =>
  location.kind === "postgres" ? layerPostgresStore(location) : Layer.provideMerge(layerPglite(location), noReplicas)
