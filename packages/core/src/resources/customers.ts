import { Schema } from "effect"
import { countries } from "../catalogs/countries.js"
import { embedOne, inputOnly } from "../engine/field.js"
import { type RecordType, defineResource } from "../engine/resource.js"
import { CountryText, partyFields, partyRules } from "./parties.js"

export const customers = defineResource({
  name: "customers",
  singular: "customer",
  title: "Customer",
  description: "Customers (people and companies the tenant sells to), with geography from the catalogs.",
  notFoundCode: "CUSTOMER_NOT_FOUND",
  events: true,
  table: "customers",
  fields: partyFields("customer_id", "Customer", {
    country: embedOne({
      key: "country_id",
      resource: () => countries,
      output: Schema.Struct({ id: Schema.Int, iso2: Schema.String, iso3: Schema.String, name: Schema.String }),
      pick: { id: "id", iso2: "iso2", iso3: "iso3", name: "name_en" }
    }),
    country_code: inputOnly(CountryText, { nullable: true })
  }),
  // Customers answer the country as an object; they filter by its code as suppliers do.
  filters: {
    country_code: {
      type: "string",
      nullable: true,
      caseInsensitive: true,
      sql: "(SELECT e.iso2 FROM countries e WHERE e.id = r.country_id)",
      description: "ISO 3166-1 alpha-2 code of the country"
    }
  },
  defaultSort: { field: "created_at", order: "asc" },
  search: { payload: true },
  writes: {
    example: {
      legal_name: "Padaria Pão Quente Ltda",
      trade_name: "Pão Quente",
      tax_id: "11.222.333/0001-81",
      tax_id_type: "CNPJ",
      emails: ["compras@paoquente.example"],
      city_id: 3550308
    }
  },
  rules: partyRules
})

export type Customer = RecordType<typeof customers>
