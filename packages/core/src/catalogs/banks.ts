import { Schema } from "effect"
import type { Principal } from "../auth/principal.js"
import { defineResource } from "../engine/resource.js"
import { CatalogTimestamps, catalogTimestampFilters, catalogTimestamps, codeLookup, pick, upper } from "./common.js"

const FIELDS = ["code", "ispb", "name", "official_name", "swift_code", "country_code", "logo_url", "aliases", "is_active", "display_order"] as const

export const Bank = Schema.Struct({
  id: Schema.String,
  code: Schema.String,
  ispb: Schema.NullOr(Schema.String),
  name: Schema.String,
  official_name: Schema.NullOr(Schema.String),
  swift_code: Schema.NullOr(Schema.String),
  country_code: Schema.String,
  logo_url: Schema.NullOr(Schema.String),
  aliases: Schema.Array(Schema.String),
  is_active: Schema.Boolean,
  display_order: Schema.Int,
  ...CatalogTimestamps
}).annotations({ identifier: "Bank", description: "A bank: national code (COMPE in Brazil, ABA routing number in the US), SWIFT/BIC." })

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
  record: Bank,
  table: "banks",
  storage: "catalog",
  columns: {
    code: "text",
    ispb: "text",
    name: "text",
    official_name: "text",
    swift_code: "text",
    country_code: "text",
    logo_url: "text",
    aliases: "jsonb",
    is_active: "boolean",
    display_order: "integer"
  },
  filters: {
    id: { type: "uuid" },
    code: { type: "string", sortable: true },
    ispb: { type: "string", nullable: true },
    name: { type: "string", sortable: true },
    official_name: { type: "string", nullable: true },
    swift_code: { type: "string", nullable: true, caseInsensitive: true },
    country_code: { type: "string", sql: "r.country_code::text", caseInsensitive: true },
    aliases: { type: "string", array: true },
    is_active: { type: "boolean" },
    display_order: { type: "number", sortable: true },
    ...catalogTimestampFilters
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
  ],
  toRecord: (row) => ({ id: row.id as string, ...pick(row, FIELDS), ...catalogTimestamps(row) }) as typeof Bank.Type
})
