import { createHash } from "node:crypto"
import { readFileSync } from "node:fs"

/** The committed catalog snapshots (see `data/SOURCES.md`), read from the package's source folder by src and dist alike. */
export const CATALOG_FILES = {
  countries: "countries.json",
  states: "states.json",
  cities: "cities.json",
  units_of_measurement: "units-of-measurement.json",
  banks: "banks.json",
  payment_methods: "payment-methods.json"
} as const

export type CatalogTable = keyof typeof CATALOG_FILES

export interface Snapshot {
  readonly version: string
  readonly records: ReadonlyArray<Record<string, unknown>>
}

const snapshotBytes = (table: CatalogTable): Buffer =>
  readFileSync(new URL(`../../src/catalogs/data/${CATALOG_FILES[table]}`, import.meta.url))

export const readSnapshot = (table: CatalogTable): Snapshot => JSON.parse(snapshotBytes(table).toString("utf8")) as Snapshot

/**
 * Fingerprint of the bundled snapshots: a store seeded from other data is reseeded on start.
 * Hashed as bytes: every start computes it, and decoding the snapshots as text first would cost more than the hash.
 */
export const snapshotsFingerprint = (): string => {
  const hash = createHash("sha256")
  for (const table of Object.keys(CATALOG_FILES) as Array<CatalogTable>) hash.update(snapshotBytes(table))
  return hash.digest("hex")
}
