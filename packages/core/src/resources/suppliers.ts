import { Schema } from "effect"
import { countries } from "../catalogs/countries.js"
import { embedOne, withInput } from "../engine/field.js"
import { type RecordType, defineResource } from "../engine/resource.js"
import { CountryText, partyFields, partyRules } from "./parties.js"

/** A tax id as typed (`12.345.678/0001-95`) or as digits names the same supplier; other ids are matched as stored. */
const taxIdKey = (value: string) => (/^[\d.\-/\s]+$/.test(value) ? value.replace(/\D/g, "") : value.trim())

export const suppliers = defineResource({
  name: "suppliers",
  singular: "supplier",
  title: "Supplier",
  description: "Suppliers (people and companies the tenant buys from), with geography from the catalogs.",
  notFoundCode: "SUPPLIER_NOT_FOUND",
  events: true,
  table: "suppliers",
  fields: partyFields("supplier_id", "Supplier", {
    // Suppliers answer the country as its ISO2 code; clients send it like a customer's country_code.
    country_code: withInput(
      embedOne({ key: "country_id", resource: () => countries, output: Schema.String, pick: "iso2", description: "ISO 3166-1 alpha-2 code of the country" }),
      CountryText,
      { nullable: true }
    )
  }),
  defaultSort: { field: "created_at", order: "asc" },
  search: { payload: true },
  lookups: [
    {
      name: "tax-id",
      field: "tax_id",
      parameter: "taxId",
      description: "The supplier with this tax id (CPF, CNPJ or EIN formatted or as digits; others as stored).",
      scoped: false,
      normalize: taxIdKey
    }
  ],
  writes: {
    example: {
      legal_name: "Torrefação Serra Azul Ltda",
      trade_name: "Serra Azul",
      tax_id: "04.252.011/0001-10",
      tax_id_type: "CNPJ",
      emails: ["vendas@serraazul.example"],
      city_id: 3550308
    }
  },
  rules: partyRules
})

export type Supplier = RecordType<typeof suppliers>
