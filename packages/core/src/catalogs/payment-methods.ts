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
  universalFilter
} from "./common.js"

export const paymentMethods = defineResource({
  name: "payment-methods",
  singular: "payment-method",
  title: "Payment method",
  identifier: "PaymentMethod",
  description: "Payment methods available in the tenant's country (universal ones included), with UN/CEFACT payment means codes (UNTDID 4461).",
  notFoundCode: "PAYMENT_METHOD_NOT_FOUND",
  table: "payment_methods",
  storage: "catalog",
  fields: {
    id: id({ sortable: true }),
    code: textField({ filter: { sortable: true, caseInsensitive: true } }),
    country_codes: countryCodes(),
    titles: stored("jsonb", Translations),
    descriptions: stored("jsonb", Translations),
    untdid_4461_code: textField({ nullable: true }),
    is_active: boolField(),
    display_order: intField({ filter: { sortable: true } }),
    ...catalogTimestamps()
  },
  filters: { ...universalFilter, ...titleFilters },
  defaultSort: { field: "id", order: "desc" },
  search: { payload: false },
  visibility: { filter: (principal: Principal) => forTenantCountry(principal.tenantCountry), list: true, byId: true },
  lookups: [codeLookup("payment method", true)]
})

