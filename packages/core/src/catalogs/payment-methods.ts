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
  Translations
} from "./common.js"

const FIELDS = ["code", "country_codes", "titles", "descriptions", "untdid_4461_code", "is_active", "display_order"] as const

export const PaymentMethod = Schema.Struct({
  id: Schema.String,
  code: Schema.String,
  country_codes: Schema.Array(Schema.String),
  titles: Translations,
  descriptions: Translations,
  untdid_4461_code: Schema.NullOr(Schema.String),
  is_active: Schema.Boolean,
  display_order: Schema.Int,
  ...CatalogTimestamps
}).annotations({ identifier: "PaymentMethod", description: "A payment method; country_codes [] means universal." })

export const paymentMethods = defineResource({
  name: "payment-methods",
  singular: "payment-method",
  title: "Payment method",
  description: "Payment methods available in the tenant's country (universal ones included), with UN/CEFACT payment means codes (UNTDID 4461).",
  notFoundCode: "PAYMENT_METHOD_NOT_FOUND",
  record: PaymentMethod,
  table: "payment_methods",
  storage: "catalog",
  columns: {
    code: "text",
    country_codes: "jsonb",
    titles: "jsonb",
    descriptions: "jsonb",
    untdid_4461_code: "text",
    is_active: "boolean",
    display_order: "integer"
  },
  filters: {
    id: { type: "uuid", sortable: true },
    code: { type: "string", sortable: true, caseInsensitive: true },
    ...countryCodesFilters,
    ...titleFilters,
    untdid_4461_code: { type: "string", nullable: true },
    is_active: { type: "boolean" },
    display_order: { type: "number", sortable: true },
    ...catalogTimestampFilters
  },
  defaultSort: { field: "id", order: "desc" },
  search: { payload: false },
  visibility: { filter: (principal: Principal) => forTenantCountry(principal.tenantCountry), list: true, byId: true },
  lookups: [codeLookup("payment method", true)],
  toRecord: (row) => ({ id: row.id as string, ...pick(row, FIELDS), ...catalogTimestamps(row) }) as typeof PaymentMethod.Type
})
