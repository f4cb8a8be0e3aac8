import { integerId } from "../engine/field.js"
import { defineResource } from "../engine/resource.js"
import { catalogTimestamps, intField, textField } from "./common.js"

export const cities = defineResource({
  name: "cities",
  singular: "city",
  title: "City",
  description: "Cities: every Brazilian municipality (IBGE) and US cities of 10,000 people or more (GeoNames, CC BY 4.0). Lists need state_id.",
  notFoundCode: "CITY_NOT_FOUND",
  table: "cities",
  storage: "catalog",
  fields: {
    id: integerId({ sortable: true }),
    country_id: intField(),
    state_id: intField({ filter: { description: "Required: the state whose cities to list" } }),
    country_code: textField({ filter: { sql: "r.country_code::text", caseInsensitive: true } }),
    state_code: textField({ filter: { caseInsensitive: true } }),
    name: textField({ filter: { sortable: true } }),
    ibge_code: textField({ nullable: true }),
    geonames_id: intField({ nullable: true }),
    population: intField({ nullable: true, filter: { sortable: true } }),
    ...catalogTimestamps()
  },
  defaultSort: { field: "id", order: "desc" },
  search: { payload: false },
  requiredFilters: ["state_id"],
  searchRoute: { required: ["state_id"] }
})
