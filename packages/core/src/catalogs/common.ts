import { Schema } from "effect"
import type { FilterField } from "../engine/fields.js"
import type { FilterNode } from "../engine/filter.js"
import type { Lookup } from "../engine/resource.js"

export const CatalogTimestamps = { created_at: Schema.String, updated_at: Schema.String }

export const catalogTimestamps = (row: Readonly<Record<string, unknown>>) => ({
  created_at: row.created_at as string,
  updated_at: row.updated_at as string
})

export const catalogTimestampFilters: Record<string, FilterField> = {
  created_at: { type: "datetime", sortable: true },
  updated_at: { type: "datetime", sortable: true }
}

/** Titles and descriptions per language, filterable as `title_en`, `title_pt`, `title_es`. */
export const Translations = Schema.Record({ key: Schema.String, value: Schema.String })

export const titleFilters: Record<string, FilterField> = Object.fromEntries(
  ["en", "pt", "es"].map((language) => [`title_${language}`, { type: "string", nullable: true, sql: `(r.titles->>'${language}')` }])
)

export const upper = (value: string) => value.trim().toUpperCase()

/** Picks the named columns of a row, as stored. */
export const pick = <K extends string>(row: Readonly<Record<string, unknown>>, keys: ReadonlyArray<K>): Record<K, unknown> =>
  Object.fromEntries(keys.map((key) => [key, row[key] ?? null])) as Record<K, unknown>

/** Visible when `country_codes` is empty (universal) or holds the tenant's country. */
export const forTenantCountry = (country: string): FilterNode => ({
  kind: "group",
  logic: "or",
  conditions: [
    { kind: "condition", field: "universal", op: "eq", value: true },
    { kind: "condition", field: "country_codes", op: "eq", value: country }
  ]
})

/** Filters of catalogs scoped by `country_codes`. */
export const countryCodesFilters: Record<string, FilterField> = {
  country_codes: { type: "string", array: true, description: "eq: available in that country (ISO2)" },
  universal: { type: "boolean", sql: "(jsonb_array_length(r.country_codes) = 0)", description: "true: available in every country" }
}

export const codeLookup = (title: string, scoped: boolean): Lookup => ({
  name: "code",
  field: "code",
  parameter: "code",
  description: `The ${title} with this code${scoped ? ", among those available to the tenant's country" : ""}.`,
  scoped
})
