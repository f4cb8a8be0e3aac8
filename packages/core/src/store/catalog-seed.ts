import * as SqlClient from "effect/sql/SqlClient"
import { Effect } from "effect"
import { catalogResources } from "../catalogs/resources.js"
import { type CatalogTable, readSnapshot, snapshotsFingerprint } from "../catalogs/snapshots.js"

/** Parents before children, so foreign keys hold at every step. */
const ORDER: ReadonlyArray<CatalogTable> = ["countries", "states", "cities", "units_of_measurement", "banks", "payment_methods"]

/** Column name to SQL type for a catalog table, from its resource declaration (snapshot fields are named alike). */
const columnsOf = (table: CatalogTable): Record<string, string> => {
  const resource = catalogResources.find((candidate) => candidate.table === table)
  if (!resource) throw new Error(`No catalog resource declares the table ${table}`)
  return Object.fromEntries(["id", ...resource.writable].map((name) => [name, resource.columns[name]]))
}

const CHUNK = 2000

/**
 * Upserts every catalog from the committed snapshots, by id: a reseed updates
 * rows in place and never duplicates them. Returns the count per table.
 */
export const seedCatalogs = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const counts: Record<string, number> = {}
  for (const table of ORDER) {
    const columns = columnsOf(table)
    const names = Object.keys(columns)
    const definition = names.map((name) => `${name} ${columns[name]}`).join(", ")
    const updatable = names.filter((name) => name !== "id")
    const updates = updatable.map((name) => `${name} = EXCLUDED.${name}`).join(", ")
    // Rows whose data did not change keep their updated_at.
    const changed = updatable.map((name) => `${table}.${name}`).join(", ")
    const incoming = updatable.map((name) => `EXCLUDED.${name}`).join(", ")
    const records = readSnapshot(table).records
    for (let start = 0; start < records.length; start += CHUNK) {
      const chunk = records.slice(start, start + CHUNK).map((record) => Object.fromEntries(names.map((name) => [name, record[name] ?? null])))
      yield* sql`INSERT INTO ${sql.literal(table)} (${sql.literal(names.join(", "))})
        SELECT ${sql.literal(names.join(", "))} FROM jsonb_to_recordset(${JSON.stringify(chunk)}::jsonb) AS x(${sql.literal(definition)})
        ON CONFLICT (id) DO UPDATE SET ${sql.literal(updates)}, updated_at = now()
        WHERE (${sql.literal(changed)}) IS DISTINCT FROM (${sql.literal(incoming)})`
    }
    counts[table] = records.length
  }
  return counts
}).pipe(Effect.orDie, Effect.withSpan("seedCatalogs"))

const FINGERPRINT_KEY = "catalog_snapshots"

/** Seeds and records which snapshots the store now holds. */
export const seedCatalogsAndRecord = Effect.gen(function* () {
  const counts = yield* seedCatalogs
  const sql = yield* SqlClient.SqlClient
  yield* sql`INSERT INTO erp_settings (key, value) VALUES (${FINGERPRINT_KEY}, ${snapshotsFingerprint()})
    ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`.pipe(Effect.orDie)
  return counts
})

/**
 * Whether the store holds the bundled snapshots: false on a new store, and after an
 * upgrade that ships new catalog data, so that start loads them (idempotently).
 */
export const catalogsCurrent = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<{ value: string }>`SELECT value FROM erp_settings WHERE key = ${FINGERPRINT_KEY}`
  return rows[0]?.value === snapshotsFingerprint()
}).pipe(Effect.orDie)
