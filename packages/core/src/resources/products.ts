import { Effect, Option, Schema } from "effect"
import { CatalogLookup, type UnitRef } from "../catalogs/lookup.js"
import { unitsOfMeasurement } from "../catalogs/units.js"
import { column, embedOne, id, timestamps } from "../engine/field.js"
import { type Draft, defineResource, type RecordType, type WriteContext } from "../engine/resource.js"
import {
  block,
  choice,
  clearable,
  CountryCode,
  Digits,
  flag,
  freeText,
  metadata,
  money,
  Problems,
  Text,
  tags,
  text,
  url,
  Uuid
} from "./common.js"

const nullable = Schema.NullOr

const BrDataInput = Schema.Struct({
  ncm_code: clearable(Digits(8, "NCM code")),
  cest_code: clearable(Digits(7, "CEST code")),
  origin: clearable(Schema.String.check(Schema.isPattern(/^[0-8]$/u, { message: "must be an ICMS origin digit from 0 to 8" }))),
  extipi: clearable(Text(3)),
  ibs_cbs_cst: clearable(Text(3)),
  ibs_cbs_classification: clearable(Text(6)),
  ibs_cbs_operation_indicator_code: clearable(Text(6)),
  ibs_cbs_is_personal_use: clearable(Schema.Boolean),
  unit_of_measure: Schema.optionalKey(Schema.NullOr(Text(64)).annotate({
    description: "Deprecated: use unit_of_measurement_id. A unit id or code; must match unit_of_measurement_id when both are sent."
  }))
}).annotate({ identifier: "ProductBrDataInput" })

const UsDataInput = Schema.Struct({
  hts_code: clearable(Text(14)),
  schedule_b_code: clearable(Text(14)),
  eccn_code: clearable(Text(10)),
  tax_code: clearable(Text(32)),
  sales_tax_category: clearable(Text(64)),
  country_of_origin: clearable(CountryCode),
  upc_code: clearable(Digits(12, "UPC-A code"))
}).annotate({ identifier: "ProductUsDataInput" })

const UnitEmbed = Schema.Struct({ id: Schema.String, code: Schema.String, symbol: Schema.NullOr(Schema.String) })

const availableIn = (unit: UnitRef, country: string) => unit.country_codes.length === 0 || unit.country_codes.includes(country)

const findUnit = (reference: string) => Effect.flatMap(CatalogLookup, (catalogs) => catalogs.findUnit(reference))

/**
 * `unit_of_measurement_id` is preferred; the deprecated `br_data.unit_of_measure`
 * (an id or a code) still works, and when both are sent they must name the same
 * unit, available in the tenant's country.
 */
const resolveUnit = (draft: Draft<typeof productFields>, context: WriteContext) =>
  Effect.gen(function* () {
    const problems = new Problems()
    const sentId = draft.input.unit_of_measurement_id as string | null | undefined
    const legacy = (draft.input.br_data as { unit_of_measure?: string | null } | null | undefined)?.unit_of_measure
    const byId = sentId ? yield* findUnit(sentId) : Option.none<UnitRef>()
    const byLegacy = legacy ? yield* findUnit(legacy) : Option.none<UnitRef>()
    if (sentId && Option.isNone(byId)) problems.add("unit_of_measurement_id", "does not match any unit of measurement")
    if (legacy && Option.isNone(byLegacy)) problems.add("br_data.unit_of_measure", "does not match any unit of measurement id or code")
    if (sentId && legacy && Option.isSome(byId) && Option.isSome(byLegacy) && byId.value.id !== byLegacy.value.id) {
      problems.add("br_data.unit_of_measure", "must name the same unit as unit_of_measurement_id when both are sent")
    }
    const unit = Option.orElse(byId, () => byLegacy)
    if (Option.isSome(unit) && !availableIn(unit.value, context.tenantCountry)) {
      problems.add(sentId ? "unit_of_measurement_id" : "br_data.unit_of_measure", `is not available in ${context.tenantCountry}`)
    }
    if (problems.any) return yield* problems.fail("The unit of measurement cannot be used", "INVALID_UNIT_OF_MEASUREMENT")
    return Option.isSome(unit) ? { ...draft, values: { ...draft.values, unit_of_measurement_id: unit.value.id } } : draft
  })

/** The fields of a product, named so that its rules take a draft keyed by them. */
const productFields = {
  id: id(),
  reference_code: text(100, { nullable: true, filter: { sortable: true } }),
  name: text(255, { required: true, filter: { sortable: true } }),
  description: freeText(5000),
  tags: tags(),
  type: choice(["goods", "service"], { description: "goods or service" }),
  sale_price: money({ nullable: true, filter: { sortable: true } }),
  image_url: url(),
  is_blocked: flag(),
  metadata: metadata(),
  unit_of_measurement_id: column({ type: "uuid", output: Schema.String, inputSchema: Uuid, nullable: true, filter: true }),
  unit_of_measurement: embedOne({ key: "unit_of_measurement_id", resource: () => unitsOfMeasurement, output: UnitEmbed, pick: ["id", "code", "symbol"] }),
  br_data: block({
    identifier: "ProductBrData",
    keys: {
      ncm_code: nullable(Schema.String),
      cest_code: nullable(Schema.String),
      origin: nullable(Schema.String),
      extipi: nullable(Schema.String),
      ibs_cbs_cst: nullable(Schema.String),
      ibs_cbs_classification: nullable(Schema.String),
      ibs_cbs_operation_indicator_code: nullable(Schema.String),
      ibs_cbs_is_personal_use: nullable(Schema.Boolean)
    },
    input: BrDataInput,
    inputOnlyKeys: ["unit_of_measure"],
    filters: {
      ncm_code: "string",
      cest_code: "string",
      origin: "string",
      extipi: "string",
      ibs_cbs_cst: "string",
      ibs_cbs_classification: "string",
      ibs_cbs_is_personal_use: "boolean"
    }
  }),
  us_data: block({
    identifier: "ProductUsData",
    keys: {
      hts_code: nullable(Schema.String),
      schedule_b_code: nullable(Schema.String),
      eccn_code: nullable(Schema.String),
      tax_code: nullable(Schema.String),
      sales_tax_category: nullable(Schema.String),
      country_of_origin: nullable(Schema.String),
      upc_code: nullable(Schema.String)
    },
    input: UsDataInput,
    filters: {
      hts_code: "string",
      schedule_b_code: "string",
      eccn_code: "string",
      tax_code: "string",
      sales_tax_category: "string",
      country_of_origin: "string",
      upc_code: "string"
    }
  }),
  ...timestamps()
}

export const products = defineResource({
  name: "products",
  singular: "product",
  title: "Product",
  description: "Products and services, with Brazilian (br_data) and US (us_data) fiscal data.",
  notFoundCode: "PRODUCT_NOT_FOUND",
  events: true,
  table: "products",
  fields: productFields,
  defaultSort: { field: "created_at", order: "asc" },
  search: { payload: true },
  writes: {
    example: {
      name: "Espresso beans 1 kg",
      type: "goods",
      sale_price: "89.900000",
      tags: ["coffee"],
      br_data: { ncm_code: "09012100", origin: "0" }
    }
  },
  rules: resolveUnit
})

export type Product = RecordType<typeof products>
