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

const snapshotText = (table: CatalogTable): string =>
  readFileSync(new URL(`../../src/catalogs/data/${CATALOG_FILES[table]}`, import.meta.url), "utf8")

export const readSnapshot = (table: CatalogTable): Snapshot => JSON.parse(snapshotText(table)) as Snapshot

/** Fingerprint of the bundled snapshots: a store seeded from other data is reseeded on start. */
export const snapshotsFingerprint = (): string => {
  const hash = createHash("sha256")
  for (const table of Object.keys(CATALOG_FILES) as Array<CatalogTable>) hash.update(snapshotText(table))
  return hash.digest("hex")
}
