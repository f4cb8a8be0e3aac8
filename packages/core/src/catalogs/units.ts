import { Schema } from "effect"
import type { Principal } from "../auth/principal.js"
import { defineResource } from "../engine/resource.js"
import {
  CatalogTimestamps,
  catalogTimestampFilters,
  catalogTimestamps,
  codeLookup,
  countryCodesFilters,
  forTenantCountry,
  pick,
  titleFilters,
  Translations,
  upper
} from "./common.js"

const FIELDS = ["code", "symbol", "fiscal_codes", "country_codes", "titles", "descriptions", "is_blocked", "display_order"] as const

export const UnitOfMeasurement = Schema.Struct({
  id: Schema.String,
  code: Schema.String,
  symbol: Schema.NullOr(Schema.String),
  fiscal_codes: Schema.Record({ key: Schema.String, value: Schema.String }),
  country_codes: Schema.Array(Schema.String),
  titles: Translations,
  descriptions: Translations,
  is_blocked: Schema.Boolean,
  display_order: Schema.Int,
  ...CatalogTimestamps
}).annotations({ identifier: "UnitOfMeasurement", description: "A unit of measurement: UN/ECE Recommendation 20 code, fiscal codes (br_nfe)." })

export const unitsOfMeasurement = defineResource({
  name: "units-of-measurement",
  singular: "unit-of-measurement",
  title: "Unit of measurement",
  description: "Units of measurement available in the tenant's country: UN/ECE Recommendation 20 codes, with Brazilian NF-e units in fiscal_codes.br_nfe.",
  notFoundCode: "UNIT_OF_MEASUREMENT_NOT_FOUND",
  record: UnitOfMeasurement,
  table: "units_of_measurement",
  storage: "catalog",
  columns: {
    code: "text",
    symbol: "text",
    fiscal_codes: "jsonb",
    country_codes: "jsonb",
    titles: "jsonb",
    descriptions: "jsonb",
    is_blocked: "boolean",
    display_order: "integer"
  },
  filters: {
    id: { type: "uuid", sortable: true },
    code: { type: "string", sortable: true, caseInsensitive: true },
    symbol: { type: "string", nullable: true },
    "fiscal_codes.br_nfe": { type: "string", nullable: true, sql: "(r.fiscal_codes->>'br_nfe')" },
    ...countryCodesFilters,
    ...titleFilters,
    is_blocked: { type: "boolean" },
    display_order: { type: "number", sortable: true },
    ...catalogTimestampFilters
  },
  defaultSort: { field: "id", order: "desc" },
  search: { payload: false },
  visibility: { filter: (principal: Principal) => forTenantCountry(principal.tenantCountry), list: true, byId: true },
  lookups: [{ ...codeLookup("unit of measurement", true), normalize: upper }],
  toRecord: (row) => ({ id: row.id as string, ...pick(row, FIELDS), ...catalogTimestamps(row) }) as typeof UnitOfMeasurement.Type
})
