import { Schema } from "effect"
import { defineResource } from "../engine/resource.js"
import { CatalogTimestamps, catalogTimestampFilters, catalogTimestamps, pick } from "./common.js"

const FIELDS = ["country_id", "state_id", "country_code", "state_code", "name", "ibge_code", "geonames_id", "population"] as const

export const City = Schema.Struct({
  id: Schema.Int,
  country_id: Schema.Int,
  state_id: Schema.Int,
  country_code: Schema.String,
  state_code: Schema.String,
  name: Schema.String,
  ibge_code: Schema.NullOr(Schema.String),
  geonames_id: Schema.NullOr(Schema.Int),
  population: Schema.NullOr(Schema.Int),
  ...CatalogTimestamps
}).annotations({ identifier: "City", description: "A city; Brazilian ids are IBGE municipality codes." })

export const cities = defineResource({
  name: "cities",
  singular: "city",
  title: "City",
  description: "Cities: every Brazilian municipality (IBGE) and US cities of 10,000 people or more (GeoNames, CC BY 4.0). Lists need state_id.",
  notFoundCode: "CITY_NOT_FOUND",
  record: City,
  table: "cities",
  storage: "catalog",
  idType: "integer",
  columns: {
    country_id: "integer",
    state_id: "integer",
    country_code: "text",
    state_code: "text",
    name: "text",
    ibge_code: "text",
    geonames_id: "integer",
    population: "integer"
  },
  filters: {
    id: { type: "number", sortable: true },
    state_id: { type: "number", description: "Required: the state whose cities to list" },
    country_id: { type: "number" },
    country_code: { type: "string", sql: "r.country_code::text", caseInsensitive: true },
    state_code: { type: "string", caseInsensitive: true },
    name: { type: "string", sortable: true },
    ibge_code: { type: "string", nullable: true },
    geonames_id: { type: "number", nullable: true },
    population: { type: "number", nullable: true, sortable: true },
    ...catalogTimestampFilters
  },
  defaultSort: { field: "id", order: "desc" },
  search: { payload: false },
  requiredFilters: ["state_id"],
  searchRoute: { required: ["state_id"] },
  toRecord: (row) => ({ id: row.id as number, ...pick(row, FIELDS), ...catalogTimestamps(row) }) as typeof City.Type
})
