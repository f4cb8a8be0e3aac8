import { Schema } from "effect"
import { defineResource } from "../engine/resource.js"
import { CatalogTimestamps, catalogTimestampFilters, catalogTimestamps, pick, upper } from "./common.js"

const FIELDS = ["iso2", "iso3", "numeric_code", "name_en", "name_pt", "name_es", "currency", "region", "phone_code"] as const

export const Country = Schema.Struct({
  id: Schema.Int,
  iso2: Schema.String,
  iso3: Schema.String,
  numeric_code: Schema.String,
  name_en: Schema.String,
  name_pt: Schema.String,
  name_es: Schema.String,
  currency: Schema.NullOr(Schema.String),
  region: Schema.NullOr(Schema.String),
  phone_code: Schema.NullOr(Schema.String),
  ...CatalogTimestamps
}).annotations({ identifier: "Country", description: "ISO 3166-1 country; id is the ISO numeric code." })

export const countries = defineResource({
  name: "countries",
  singular: "country",
  title: "Country",
  description: "Countries (ISO 3166-1), global to every tenant, with names in English, Portuguese and Spanish.",
  notFoundCode: "COUNTRY_NOT_FOUND",
  record: Country,
  table: "countries",
  storage: "catalog",
  idType: "integer",
  columns: Object.fromEntries(FIELDS.map((field) => [field, "text"])),
  filters: {
    id: { type: "number", sortable: true },
    iso2: { type: "string", caseInsensitive: true },
    iso3: { type: "string", caseInsensitive: true },
    numeric_code: { type: "string" },
    name_en: { type: "string", sortable: true },
    name_pt: { type: "string", sortable: true },
    name_es: { type: "string", sortable: true },
    currency: { type: "string", nullable: true },
    region: { type: "string", nullable: true },
    phone_code: { type: "string", nullable: true },
    ...catalogTimestampFilters
  },
  defaultSort: { field: "id", order: "desc" },
  search: { payload: false },
  lookups: [
    { name: "iso2", field: "iso2", parameter: "code", description: "The country with this ISO 3166-1 alpha-2 code (e.g. BR).", scoped: false, normalize: upper },
    { name: "iso3", field: "iso3", parameter: "code", description: "The country with this ISO 3166-1 alpha-3 code (e.g. BRA).", scoped: false, normalize: upper }
  ],
  toRecord: (row) => ({ id: row.id as number, ...pick(row, FIELDS), ...catalogTimestamps(row) }) as typeof Country.Type
})
