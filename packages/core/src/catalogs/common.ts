import { Schema } from "effect"
import { type FilterOptions, stored, timestamp } from "../engine/field.js"
import type { FilterField } from "../engine/fields.js"
import type { FilterNode } from "../engine/filter.js"
import type { Lookup } from "../engine/resource.js"

/** Catalog rows are global and never deleted: created and updated only. */
export const catalogTimestamps = () => ({ created_at: timestamp(), updated_at: timestamp() })

/** Titles and descriptions per language, filterable as `title_en`, `title_pt`, `title_es`. */
export const Translations = Schema.Record(Schema.String, Schema.String)

export const titleFilters: Record<string, FilterField> = Object.fromEntries(
  ["en", "pt", "es"].map((language) => [`title_${language}`, { type: "string", nullable: true, sql: `(r.titles->>'${language}')` }])
)

export const upper = (value: string) => value.trim().toUpperCase()

/** A catalog's stored text (`char` codes filter through `::text`). */
export const textField = <N extends boolean = false>(options: { readonly nullable?: N; readonly filter?: boolean | FilterOptions; readonly description?: string } = {}) =>
  stored<string, N>("text", Schema.String, { filter: true, ...options })

export const intField = <N extends boolean = false>(options: { readonly nullable?: N; readonly filter?: boolean | FilterOptions } = {}) =>
  stored<number, N>("integer", Schema.Int, { filter: true, ...options })

export const boolField = () => stored("boolean", Schema.Boolean, { filter: true })

/** Visible when `country_codes` is empty (universal) or holds the tenant's country. */
export const forTenantCountry = (country: string): FilterNode => ({
  kind: "group",
  logic: "or",
  conditions: [
    { kind: "condition", field: "universal", op: "eq", value: true },
    { kind: "condition", field: "country_codes", op: "eq", value: country }
  ]
})

/** Catalogs scoped by `country_codes`: the list itself, and whether a row is universal. */
export const countryCodes = () =>
  stored("jsonb", Schema.Array(Schema.String), { array: true, filter: { description: "eq: available in that country (ISO2)" } })

export const universalFilter: Record<string, FilterField> = {
  universal: { type: "boolean", sql: "(jsonb_array_length(r.country_codes) = 0)", description: "true: available in every country" }
}

export const codeLookup = (title: string, scoped: boolean): Lookup<"code"> => ({
  name: "code",
  field: "code",
  parameter: "code",
  description: `The ${title} with this code${scoped ? ", among those available to the tenant's country" : ""}.`,
  scoped
})
