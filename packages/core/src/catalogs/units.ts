import { Schema } from "effect"
import type { Principal } from "../auth/principal.js"
import { id, stored } from "../engine/field.js"
import { defineResource } from "../engine/resource.js"
import {
  boolField,
  catalogTimestamps,
  codeLookup,
  countryCodes,
  forTenantCountry,
  intField,
  textField,
  titleFilters,
  Translations,
  universalFilter,
  upper
} from "./common.js"

export const unitsOfMeasurement = defineResource({
  name: "units-of-measurement",
  singular: "unit-of-measurement",
  title: "Unit of measurement",
  identifier: "UnitOfMeasurement",
  description: "Units of measurement available in the tenant's country: UN/ECE Recommendation 20 codes, with Brazilian NF-e units in fiscal_codes.br_nfe.",
  notFoundCode: "UNIT_OF_MEASUREMENT_NOT_FOUND",
  table: "units_of_measurement",
  storage: "catalog",
  fields: {
    id: id({ sortable: true }),
    code: textField({ filter: { sortable: true, caseInsensitive: true } }),
    symbol: textField({ nullable: true }),
    fiscal_codes: stored("jsonb", Schema.Record(Schema.String, Schema.String)),
    country_codes: countryCodes(),
    titles: stored("jsonb", Translations),
    descriptions: stored("jsonb", Translations),
    is_blocked: boolField(),
    display_order: intField({ filter: { sortable: true } }),
    ...catalogTimestamps()
  },
  filters: {
    "fiscal_codes.br_nfe": { type: "string", nullable: true, sql: "(r.fiscal_codes->>'br_nfe')" },
    ...universalFilter,
    ...titleFilters
  },
  defaultSort: { field: "id", order: "desc" },
  search: { payload: false },
  visibility: { filter: (principal: Principal) => forTenantCountry(principal.tenantCountry), list: true, byId: true },
  lookups: [{ ...codeLookup("unit of measurement", true), normalize: upper }]
})
