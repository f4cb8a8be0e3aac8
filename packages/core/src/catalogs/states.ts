import type { Principal } from "../auth/principal.js"
import { integerId } from "../engine/field.js"
import { defineResource } from "../engine/resource.js"
import { catalogTimestamps, intField, textField, upper } from "./common.js"

const COUNTRY_ISO3 = "(SELECT c.iso3::text FROM countries c WHERE c.id = r.country_id)"

export const states = defineResource({
  name: "states",
  singular: "state",
  title: "State",
  description: "States of Brazil (27 UFs with IBGE codes) and the United States (50 states, DC and territories with FIPS codes).",
  notFoundCode: "STATE_NOT_FOUND",
  table: "states",
  storage: "catalog",
  fields: {
    id: integerId({ sortable: true }),
    country_id: intField({ filter: { description: "Country selector by id" } }),
    country_code: textField({ filter: { sql: "r.country_code::text", caseInsensitive: true, description: "Deprecated alias of country_iso2" } }),
    state_code: textField({ filter: { sortable: true, caseInsensitive: true } }),
    name: textField({ filter: { sortable: true } }),
    type: textField({ filter: { description: "state, federal_district or territory" } }),
    ibge_code: textField({ nullable: true }),
    fips_code: textField({ nullable: true }),
    ...catalogTimestamps()
  },
  filters: {
    country_iso2: { type: "string", sql: "r.country_code::text", caseInsensitive: true, description: "Country selector by ISO2" },
    country_iso3: { type: "string", sql: COUNTRY_ISO3, caseInsensitive: true, description: "Country selector by ISO3" }
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
  ]
})
