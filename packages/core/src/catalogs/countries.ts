import { integerId } from "../engine/field.js"
import { defineResource } from "../engine/resource.js"
import { catalogTimestamps, textField, upper } from "./common.js"

export const countries = defineResource({
  name: "countries",
  singular: "country",
  title: "Country",
  description: "Countries (ISO 3166-1), global to every tenant, with names in English, Portuguese and Spanish.",
  notFoundCode: "COUNTRY_NOT_FOUND",
  table: "countries",
  storage: "catalog",
  fields: {
    id: integerId({ sortable: true }),
    iso2: textField({ filter: { caseInsensitive: true } }),
    iso3: textField({ filter: { caseInsensitive: true } }),
    numeric_code: textField(),
    name_en: textField({ filter: { sortable: true } }),
    name_pt: textField({ filter: { sortable: true } }),
    name_es: textField({ filter: { sortable: true } }),
    currency: textField({ nullable: true }),
    region: textField({ nullable: true }),
    phone_code: textField({ nullable: true }),
    ...catalogTimestamps()
  },
  defaultSort: { field: "id", order: "desc" },
  search: { payload: false },
  lookups: [
    { name: "iso2", field: "iso2", parameter: "code", description: "The country with this ISO 3166-1 alpha-2 code (e.g. BR).", scoped: false, normalize: upper },
    { name: "iso3", field: "iso3", parameter: "code", description: "The country with this ISO 3166-1 alpha-3 code (e.g. BRA).", scoped: false, normalize: upper }
  ]
})
