import { Schema } from "effect"
import type { Principal } from "../auth/principal.js"
import { id, stored } from "../engine/field.js"
import { defineResource } from "../engine/resource.js"
import { boolField, catalogTimestamps, codeLookup, intField, textField, upper } from "./common.js"

/** `BRASBRRJXXX` is the head office of `BRASBRRJ`: both find it. */
const swift = (value: string) => {
  const code = upper(value)
  return code.length === 11 && code.endsWith("XXX") ? code.slice(0, 8) : code
}

export const banks = defineResource({
  name: "banks",
  singular: "bank",
  title: "Bank",
  description: "Banks of the tenant's country (active ones in lists). Lookups by SWIFT and id see every country.",
  notFoundCode: "BANK_NOT_FOUND",
  table: "banks",
  storage: "catalog",
  fields: {
    id: id(),
    code: textField({ filter: { sortable: true } }),
    ispb: textField({ nullable: true }),
    name: textField({ filter: { sortable: true } }),
    official_name: textField({ nullable: true }),
    swift_code: textField({ nullable: true, filter: { caseInsensitive: true } }),
    country_code: textField({ filter: { sql: "r.country_code::text", caseInsensitive: true } }),
    logo_url: textField({ nullable: true }),
    aliases: stored("jsonb", Schema.Array(Schema.String), { array: true, filter: true }),
    is_active: boolField(),
    display_order: intField({ filter: { sortable: true } }),
    ...catalogTimestamps()
  },
  defaultSort: { field: "display_order", order: "asc" },
  search: { payload: false },
  visibility: {
    filter: (principal: Principal) => ({
      kind: "group",
      logic: "and",
      conditions: [
        { kind: "condition", field: "country_code", op: "eq", value: principal.tenantCountry },
        { kind: "condition", field: "is_active", op: "eq", value: true }
      ]
    }),
    list: true,
    byId: false
  },
  lookups: [
    {
      ...codeLookup("bank", true),
      description: "The bank with this national code (COMPE, ABA routing number) in the tenant's country, unless country_code is given.",
      selectors: ["country_code"]
    },
    { name: "swift", field: "swift_code", parameter: "code", description: "The bank with this SWIFT/BIC code (8 or 11 characters), in any country.", scoped: false, normalize: swift }
  ]
})
