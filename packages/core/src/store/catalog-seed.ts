import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"
import { type CatalogTable, readSnapshot, snapshotsFingerprint } from "../catalogs/snapshots.js"

/** Column name to SQL type for each catalog table, in snapshot field names. */
const COLUMNS: Record<CatalogTable, Record<string, string>> = {
  countries: {
    id: "integer",
    iso2: "text",
    iso3: "text",
    numeric_code: "text",
    name_en: "text",
    name_pt: "text",
    name_es: "text",
    currency: "text",
    region: "text",
    phone_code: "text"
  },
  states: {
    id: "integer",
    country_id: "integer",
    country_code: "text",
    state_code: "text",
    name: "text",
    type: "text",
    ibge_code: "text",
    fips_code: "text"
  },
  cities: {
    id: "integer",
    country_id: "integer",
    state_id: "integer",
    country_code: "text",
    state_code: "text",
    name: "text",
    ibge_code: "text",
    geonames_id: "integer",
    population: "integer"
  },
  units_of_measurement: {
    id: "uuid",
    code: "text",
    symbol: "text",
    fiscal_codes: "jsonb",
    country_codes: "jsonb",
    titles: "jsonb",
    descriptions: "jsonb",
    is_blocked: "boolean",
    display_order: "integer"
  },
  banks: {
    id: "uuid",
    code: "text",
    ispb: "text",
    name: "text",
    official_name: "text",
    swift_code: "text",
    country_code: "text",
    logo_url: "text",
    aliases: "jsonb",
    is_active: "boolean",
    display_order: "integer"
  },
  payment_methods: {
    id: "uuid",
    code: "text",
    country_codes: "jsonb",
    titles: "jsonb",
    descriptions: "jsonb",
    untdid_4461_code: "text",
    is_active: "boolean",
    display_order: "integer"
  }
}

/** Parents before children, so foreign keys hold at every step. */
const ORDER: ReadonlyArray<CatalogTable> = ["countries", "states", "cities", "units_of_measurement", "banks", "payment_methods"]

const CHUNK = 2000

/**
 * Upserts every catalog from the committed snapshots, by id: a reseed updates
 * rows in place and never duplicates them. Returns the count per table.
 */
export const seedCatalogs = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const counts: Record<string, number> = {}
  for (const table of ORDER) {
    const columns = COLUMNS[table]
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
