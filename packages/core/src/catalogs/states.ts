import { Schema } from "effect"
import type { Principal } from "../auth/principal.js"
import { defineResource } from "../engine/resource.js"
import { CatalogTimestamps, catalogTimestampFilters, catalogTimestamps, pick, upper } from "./common.js"

const FIELDS = ["country_id", "country_code", "state_code", "name", "type", "ibge_code", "fips_code"] as const

export const State = Schema.Struct({
  id: Schema.Int,
  country_id: Schema.Int,
  country_code: Schema.String,
  state_code: Schema.String,
  name: Schema.String,
  type: Schema.String,
  ibge_code: Schema.NullOr(Schema.String),
  fips_code: Schema.NullOr(Schema.String),
  ...CatalogTimestamps
}).annotations({ identifier: "State", description: "A state (first-level subdivision) of a country." })

const COUNTRY_ISO3 = "(SELECT c.iso3::text FROM countries c WHERE c.id = r.country_id)"

export const states = defineResource({
  name: "states",
  singular: "state",
  title: "State",
  description: "States of Brazil (27 UFs with IBGE codes) and the United States (50 states, DC and territories with FIPS codes).",
  notFoundCode: "STATE_NOT_FOUND",
  record: State,
  table: "states",
  storage: "catalog",
  idType: "integer",
  columns: { country_id: "integer", country_code: "text", state_code: "text", name: "text", type: "text", ibge_code: "text", fips_code: "text" },
  filters: {
    id: { type: "number", sortable: true },
    country_id: { type: "number", description: "Country selector by id" },
    country_iso2: { type: "string", sql: "r.country_code::text", caseInsensitive: true, description: "Country selector by ISO2" },
    country_iso3: { type: "string", sql: COUNTRY_ISO3, caseInsensitive: true, description: "Country selector by ISO3" },
    country_code: { type: "string", sql: "r.country_code::text", caseInsensitive: true, description: "Deprecated alias of country_iso2" },
    state_code: { type: "string", sortable: true, caseInsensitive: true },
    name: { type: "string", sortable: true },
    type: { type: "string", description: "state, federal_district or territory" },
    ibge_code: { type: "string", nullable: true },
    fips_code: { type: "string", nullable: true },
    ...catalogTimestampFilters
  },
  defaultSort: { field: "id", order: "desc" },
  search: { payload: false },
  searchRoute: { required: [] },
  // A state code names different states in different countries (PA: Pará, Pennsylvania), so the code
  // lookup looks in the tenant's country unless a country selector is given.
  visibility: {
    filter: (principal: Principal) => ({ kind: "condition", field: "country_iso2", op: "eq", value: principal.tenantCountry }),
    list: false,
    byId: false
  },
  lookups: [
    {
      name: "code",
      field: "state_code",
      parameter: "state_code",
      description: "The state with this code, in the tenant's country unless a country selector (country_id, country_iso2, country_iso3) is given.",
      scoped: true,
      selectors: ["country_id", "country_iso2", "country_iso3", "country_code"],
      normalize: upper
    }
  ],
  toRecord: (row) => ({ id: row.id as number, ...pick(row, FIELDS), ...catalogTimestamps(row) }) as typeof State.Type
})
