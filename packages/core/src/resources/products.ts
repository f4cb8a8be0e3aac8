import { Effect, Option, Schema } from "effect"
import { CatalogLookup, type UnitRef } from "../catalogs/lookup.js"
import { defineResource, type WriteContext } from "../engine/resource.js"
import { NonNegativeDecimal } from "../money/decimal.js"
import {
  blockFilters,
  blockOf,
  clearable,
  compact,
  CountryCode,
  Digits,
  mergePatch,
  Metadata,
  present,
  Problems,
  RequiredText,
  Tags,
  Text,
  timestampFilters,
  Timestamps,
  timestampsOf,
  Url,
  Uuid
} from "./common.js"

const BR_KEYS = [
  "ncm_code",
  "cest_code",
  "origin",
  "extipi",
  "ibs_cbs_cst",
  "ibs_cbs_classification",
  "ibs_cbs_operation_indicator_code",
  "ibs_cbs_is_personal_use"
] as const

const US_KEYS = ["hts_code", "schedule_b_code", "eccn_code", "tax_code", "sales_tax_category", "country_of_origin", "upc_code"] as const

export const ProductBrData = Schema.Struct({
  ncm_code: Schema.NullOr(Schema.String),
  cest_code: Schema.NullOr(Schema.String),
  origin: Schema.NullOr(Schema.String),
  extipi: Schema.NullOr(Schema.String),
  ibs_cbs_cst: Schema.NullOr(Schema.String),
  ibs_cbs_classification: Schema.NullOr(Schema.String),
  ibs_cbs_operation_indicator_code: Schema.NullOr(Schema.String),
  ibs_cbs_is_personal_use: Schema.NullOr(Schema.Boolean)
}).annotations({ identifier: "ProductBrData" })

export const ProductUsData = Schema.Struct({
  hts_code: Schema.NullOr(Schema.String),
  schedule_b_code: Schema.NullOr(Schema.String),
  eccn_code: Schema.NullOr(Schema.String),
  tax_code: Schema.NullOr(Schema.String),
  sales_tax_category: Schema.NullOr(Schema.String),
  country_of_origin: Schema.NullOr(Schema.String),
  upc_code: Schema.NullOr(Schema.String)
}).annotations({ identifier: "ProductUsData" })

export const ProductType = Schema.Literal("goods", "service").annotations({ description: "goods or service" })

export const Product = Schema.Struct({
  id: Schema.String,
  reference_code: Schema.NullOr(Schema.String),
  name: Schema.String,
  description: Schema.NullOr(Schema.String),
  tags: Schema.Array(Schema.String),
  type: Schema.String,
  sale_price: Schema.NullOr(Schema.String),
  image_url: Schema.NullOr(Schema.String),
  is_blocked: Schema.Boolean,
  metadata: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  unit_of_measurement_id: Schema.NullOr(Schema.String),
  unit_of_measurement: Schema.NullOr(Schema.Struct({ id: Schema.String, code: Schema.String, symbol: Schema.NullOr(Schema.String) })),
  br_data: ProductBrData,
  us_data: ProductUsData,
  ...Timestamps
}).annotations({ identifier: "Product", description: "A product or service the tenant sells." })
export type Product = typeof Product.Type

const BrDataInput = Schema.Struct({
  ncm_code: clearable(Digits(8, "NCM code")),
  cest_code: clearable(Digits(7, "CEST code")),
  origin: clearable(Schema.String.pipe(Schema.pattern(/^[0-8]$/, { message: () => "must be an ICMS origin digit from 0 to 8" }))),
  extipi: clearable(Text(3)),
  ibs_cbs_cst: clearable(Text(3)),
  ibs_cbs_classification: clearable(Text(6)),
  ibs_cbs_operation_indicator_code: clearable(Text(6)),
  ibs_cbs_is_personal_use: clearable(Schema.Boolean),
  unit_of_measure: clearable(Text(64)).annotations({
    description: "Deprecated: use unit_of_measurement_id. A unit id or code; must match unit_of_measurement_id when both are sent."
  })
}).annotations({ identifier: "ProductBrDataInput" })

const UsDataInput = Schema.Struct({
  hts_code: clearable(Text(14)),
  schedule_b_code: clearable(Text(14)),
  eccn_code: clearable(Text(10)),
  tax_code: clearable(Text(32)),
  sales_tax_category: clearable(Text(64)),
  country_of_origin: clearable(CountryCode),
  upc_code: clearable(Digits(12, "UPC-A code"))
}).annotations({ identifier: "ProductUsDataInput" })

const inputFields = {
  reference_code: clearable(RequiredText(100)),
  description: clearable(Text(5000)),
  tags: Schema.optional(Tags),
  type: Schema.optional(ProductType),
  sale_price: clearable(NonNegativeDecimal),
  image_url: clearable(Url),
  is_blocked: Schema.optional(Schema.Boolean),
  metadata: Schema.optional(Metadata),
  unit_of_measurement_id: clearable(Uuid),
  br_data: clearable(BrDataInput),
  us_data: clearable(UsDataInput)
}

export const ProductCreate = Schema.Struct({ name: RequiredText(255), ...inputFields }).annotations({
  identifier: "ProductCreate"
})
export const ProductUpdate = Schema.Struct({ name: Schema.optional(RequiredText(255)), ...inputFields }).annotations({
  identifier: "ProductUpdate"
})
type ProductInput = Partial<typeof ProductCreate.Type>

const resolveUnitReference = (reference: string) =>
  Effect.flatMap(CatalogLookup, (catalogs) => catalogs.findUnit(reference))

const availableIn = (unit: UnitRef, country: string) => unit.country_codes.length === 0 || unit.country_codes.includes(country)

/**
 * `unit_of_measurement_id` is preferred; the deprecated `br_data.unit_of_measure`
 * (an id or a code) still works, and when both are sent they must name the same unit.
 */
const resolveUnit = (input: ProductInput, context: WriteContext) =>
  Effect.gen(function* () {
    const problems = new Problems()
    const legacy = input.br_data?.unit_of_measure
    const byId = input.unit_of_measurement_id
      ? yield* Effect.flatMap(CatalogLookup, (catalogs) => catalogs.findUnit(input.unit_of_measurement_id!))
      : Option.none<UnitRef>()
    const byLegacy = legacy ? yield* resolveUnitReference(legacy) : Option.none<UnitRef>()
    if (input.unit_of_measurement_id && Option.isNone(byId)) {
      problems.add("unit_of_measurement_id", "does not match any unit of measurement")
    }
    if (legacy && Option.isNone(byLegacy)) {
      problems.add("br_data.unit_of_measure", "does not match any unit of measurement id or code")
    }
    if (input.unit_of_measurement_id && legacy && Option.isSome(byId) && Option.isSome(byLegacy) && byId.value.id !== byLegacy.value.id) {
      problems.add("br_data.unit_of_measure", "must name the same unit as unit_of_measurement_id when both are sent")
    }
    const unit = Option.orElse(byId, () => byLegacy)
    if (Option.isSome(unit) && !availableIn(unit.value, context.tenantCountry)) {
      problems.add(input.unit_of_measurement_id ? "unit_of_measurement_id" : "br_data.unit_of_measure", `is not available in ${context.tenantCountry}`)
    }
    if (problems.any) return yield* problems.fail("The unit of measurement cannot be used", "INVALID_UNIT_OF_MEASUREMENT")
    // Explicit null clears the unit; absent leaves it alone.
    if (Option.isSome(unit)) return unit.value.id as string | null | undefined
    if (input.unit_of_measurement_id === null) return null
    return undefined
  })

const withoutLegacy = (block: Readonly<Record<string, unknown>>) => {
  const { unit_of_measure: _legacy, ...rest } = block
  return rest
}

const toColumns = (input: ProductInput, current: Product | undefined, context: WriteContext) =>
  Effect.gen(function* () {
    const unitId = yield* resolveUnit(input, context)
    const values: Record<string, unknown> = {
      ...present(input, ["name", "reference_code", "description", "tags", "type", "sale_price", "image_url", "is_blocked"])
    }
    if (unitId !== undefined) values.unit_of_measurement_id = unitId
    if (input.metadata !== undefined) values.metadata = current ? mergePatch(current.metadata, input.metadata) : compact(input.metadata)
    if (input.br_data !== undefined) {
      values.br_data = input.br_data === null ? {} : compact(mergePatch(current ? compact(current.br_data) : {}, withoutLegacy(input.br_data)))
    }
    if (input.us_data !== undefined) {
      values.us_data = input.us_data === null ? {} : compact(mergePatch(current ? compact(current.us_data) : {}, input.us_data))
    }
    return values
  })

export const products = defineResource({
  name: "products",
  singular: "product",
  title: "Product",
  description: "Products and services, with Brazilian (br_data) and US (us_data) fiscal data.",
  notFoundCode: "PRODUCT_NOT_FOUND",
  emitsEvents: true,
  record: Product,
  table: "products",
  columns: {
    reference_code: "text",
    name: "text",
    description: "text",
    tags: "jsonb",
    type: "text",
    sale_price: "numeric",
    image_url: "text",
    is_blocked: "boolean",
    metadata: "jsonb",
    unit_of_measurement_id: "uuid",
    br_data: "jsonb",
    us_data: "jsonb"
  },
  joins: {
    sql: "LEFT JOIN units_of_measurement u ON u.id = r.unit_of_measurement_id",
    select: "u.code AS unit_code, u.symbol AS unit_symbol"
  },
  filters: {
    ...timestampFilters,
    reference_code: { type: "string", nullable: true, sortable: true },
    name: { type: "string", sortable: true },
    description: { type: "string", nullable: true },
    type: { type: "string" },
    sale_price: { type: "number", nullable: true, sortable: true },
    image_url: { type: "string", nullable: true },
    is_blocked: { type: "boolean" },
    unit_of_measurement_id: { type: "uuid", nullable: true },
    tags: { type: "string", array: true, description: "eq: has the tag; contains: a tag contains the text" },
    ...blockFilters("br_data", ["ncm_code", "cest_code", "origin", "extipi", "ibs_cbs_cst", "ibs_cbs_classification"]),
    ...blockFilters("br_data", ["ibs_cbs_is_personal_use"], "boolean"),
    ...blockFilters("us_data", ["hts_code", "schedule_b_code", "eccn_code", "tax_code", "sales_tax_category", "country_of_origin", "upc_code"])
  },
  defaultSort: { field: "created_at", order: "asc" },
  search: { payload: true },
  toRecord: (row): Product => ({
    id: row.id as string,
    reference_code: row.reference_code as string | null,
    name: row.name as string,
    description: row.description as string | null,
    tags: row.tags as Array<string>,
    type: row.type as string,
    sale_price: row.sale_price as string | null,
    image_url: row.image_url as string | null,
    is_blocked: row.is_blocked as boolean,
    metadata: row.metadata as Record<string, unknown>,
    unit_of_measurement_id: row.unit_of_measurement_id as string | null,
    unit_of_measurement: row.unit_of_measurement_id
      ? { id: row.unit_of_measurement_id as string, code: row.unit_code as string, symbol: row.unit_symbol as string | null }
      : null,
    br_data: blockOf(row.br_data, BR_KEYS) as Product["br_data"],
    us_data: blockOf(row.us_data, US_KEYS) as Product["us_data"],
    ...timestampsOf(row)
  }),
  write: {
    createInput: ProductCreate,
    updateInput: ProductUpdate,
    example: {
      name: "Espresso beans 1 kg",
      type: "goods",
      sale_price: "89.900000",
      tags: ["coffee"],
      br_data: { ncm_code: "09012100", origin: "0" }
    },
    fromCreate: (input: typeof ProductCreate.Type, context) => toColumns(input, undefined, context),
    fromUpdate: (input: typeof ProductUpdate.Type, current: Product, context) => toColumns(input, current, context)
  }
})

