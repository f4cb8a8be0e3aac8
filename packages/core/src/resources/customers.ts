import { Effect, Option, Schema } from "effect"
import { matchGeographyText } from "../catalogs/geography.js"
import { CatalogLookup } from "../catalogs/lookup.js"
import { defineResource } from "../engine/resource.js"
import {
  blockFilters,
  blockOf,
  clearable,
  compact,
  DateString,
  Digits,
  Email,
  mergePatch,
  Metadata,
  present,
  Problems,
  RequiredText,
  StringList,
  Tags,
  Text,
  timestampFilters,
  Timestamps,
  timestampsOf,
  trimmed,
  Url
} from "./common.js"
import { individualTaxIdTypes, inferTaxIdType, normalizeTaxId, TAX_ID_TYPES, type TaxIdType as TaxIdCode } from "./tax-ids.js"

export const BR_KEYS = [
  "ie",
  "ie_exempt",
  "im",
  "suframa",
  "tax_regime",
  "cnae_primary",
  "cnae_secondary",
  "nire",
  "pix_key",
  "pix_key_type",
  "address_number",
  "address_district"
] as const

export const US_KEYS = [
  "w9_on_file",
  "w9_received_date",
  "naics_code",
  "sic_code",
  "tax_classification",
  "sales_tax_exempt",
  "sales_tax_exempt_certificate",
  "sales_tax_exempt_expiry",
  "resale_certificate",
  "state_tax_id",
  "state_of_incorporation",
  "duns_number",
  "cage_code",
  "bank_name",
  "routing_number",
  "ach_authorized",
  "ach_authorization_date"
] as const

const nullable = <A, I>(schema: Schema.Schema<A, I>) => Schema.NullOr(schema)

export const PartyBrData = (owner: string) =>
  Schema.Struct({
    [owner]: Schema.String,
    ie: nullable(Schema.String),
    ie_exempt: nullable(Schema.Boolean),
    im: nullable(Schema.String),
    suframa: nullable(Schema.String),
    tax_regime: nullable(Schema.String),
    cnae_primary: nullable(Schema.String),
    cnae_secondary: nullable(Schema.Array(Schema.String)),
    nire: nullable(Schema.String),
    pix_key: nullable(Schema.String),
    pix_key_type: nullable(Schema.String),
    address_number: nullable(Schema.String),
    address_district: nullable(Schema.String)
  })

export const PartyUsData = (owner: string) =>
  Schema.Struct({
    [owner]: Schema.String,
    w9_on_file: nullable(Schema.Boolean),
    w9_received_date: nullable(Schema.String),
    naics_code: nullable(Schema.String),
    sic_code: nullable(Schema.String),
    tax_classification: nullable(Schema.String),
    sales_tax_exempt: nullable(Schema.Boolean),
    sales_tax_exempt_certificate: nullable(Schema.String),
    sales_tax_exempt_expiry: nullable(Schema.String),
    resale_certificate: nullable(Schema.String),
    state_tax_id: nullable(Schema.String),
    state_of_incorporation: nullable(Schema.String),
    duns_number: nullable(Schema.String),
    cage_code: nullable(Schema.String),
    bank_name: nullable(Schema.String),
    routing_number: nullable(Schema.String),
    ach_authorized: nullable(Schema.Boolean),
    ach_authorization_date: nullable(Schema.String)
  })

const Cnae = Digits(7, "CNAE code")

export const PartyBrDataInput = Schema.Struct({
  ie: clearable(Text(20)),
  ie_exempt: clearable(Schema.Boolean),
  im: clearable(Text(20)),
  suframa: clearable(Text(12)),
  tax_regime: clearable(Schema.Literal("simples_nacional", "simples_nacional_excesso", "mei", "lucro_presumido", "lucro_real", "other")),
  cnae_primary: clearable(Cnae),
  cnae_secondary: clearable(StringList(Cnae, 99)),
  nire: clearable(Text(11)),
  pix_key: clearable(Text(77)),
  pix_key_type: clearable(Schema.Literal("cpf", "cnpj", "email", "phone", "random")),
  address_number: clearable(Text(20)),
  address_district: clearable(Text(100))
}).annotations({ identifier: "PartyBrDataInput" })

export const PartyUsDataInput = Schema.Struct({
  w9_on_file: clearable(Schema.Boolean),
  w9_received_date: clearable(DateString),
  naics_code: clearable(Schema.String.pipe(Schema.pattern(/^\d{2,6}$/, { message: () => "must be a NAICS code of 2 to 6 digits" }))),
  sic_code: clearable(Schema.String.pipe(Schema.pattern(/^\d{4}$/, { message: () => "must be a SIC code of 4 digits" }))),
  tax_classification: clearable(Text(64)),
  sales_tax_exempt: clearable(Schema.Boolean),
  sales_tax_exempt_certificate: clearable(Text(64)),
  sales_tax_exempt_expiry: clearable(DateString),
  resale_certificate: clearable(Text(64)),
  state_tax_id: clearable(Text(32)),
  state_of_incorporation: clearable(Schema.String.pipe(Schema.pattern(/^[A-Z]{2}$/, { message: () => "must be a two-letter state code" }))),
  duns_number: clearable(Schema.String.pipe(Schema.pattern(/^\d{9}$/, { message: () => "must be a D-U-N-S number of 9 digits" }))),
  cage_code: clearable(Schema.String.pipe(Schema.pattern(/^[A-Z0-9]{5}$/, { message: () => "must be a CAGE code of 5 characters" }))),
  bank_name: clearable(Text(100)),
  routing_number: clearable(Schema.String.pipe(Schema.pattern(/^\d{9}$/, { message: () => "must be an ABA routing number of 9 digits" }))),
  ach_authorized: clearable(Schema.Boolean),
  ach_authorization_date: clearable(DateString)
}).annotations({ identifier: "PartyUsDataInput" })

export const PartyType = Schema.Literal("individual", "company")
export const TaxIdType = Schema.Literal(...TAX_ID_TYPES)
export const AccountType = Schema.Literal("checking", "savings", "payment", "salary")

export const Customer = Schema.Struct({
  id: Schema.String,
  type: Schema.String,
  tax_id: Schema.NullOr(Schema.String),
  tax_id_type: Schema.NullOr(Schema.String),
  legal_name: Schema.String,
  trade_name: Schema.NullOr(Schema.String),
  website: Schema.NullOr(Schema.String),
  address_line1: Schema.NullOr(Schema.String),
  address_line2: Schema.NullOr(Schema.String),
  city: Schema.NullOr(Schema.Struct({ id: Schema.Int, name: Schema.String })),
  state: Schema.NullOr(Schema.Struct({ id: Schema.Int, state_code: Schema.String, name: Schema.String })),
  country: Schema.NullOr(Schema.Struct({ id: Schema.Int, iso2: Schema.String, iso3: Schema.String, name: Schema.String })),
  postal_code: Schema.NullOr(Schema.String),
  reference_code: Schema.NullOr(Schema.String),
  bank_code: Schema.NullOr(Schema.String),
  branch_number: Schema.NullOr(Schema.String),
  account_number: Schema.NullOr(Schema.String),
  account_type: Schema.NullOr(Schema.String),
  emails: Schema.Array(Schema.String),
  phones: Schema.Array(Schema.String),
  tags: Schema.Array(Schema.String),
  is_blocked: Schema.Boolean,
  metadata: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  br_data: PartyBrData("customer_id"),
  us_data: PartyUsData("customer_id"),
  ...Timestamps
}).annotations({ identifier: "Customer", description: "Someone the tenant sells to." })
export type Customer = typeof Customer.Type

const Phone = trimmed(
  Schema.String.pipe(Schema.pattern(/^\s*\+?[0-9()\s.-]{6,30}\s*$/, { message: () => "must be a phone number (digits, spaces, + ( ) . -)" }))
)
const GeoId = Schema.Int.pipe(Schema.positive({ message: () => "must be a positive integer id" }))

const partyFields = {
  type: Schema.optional(PartyType),
  tax_id: clearable(RequiredText(32)),
  tax_id_type: clearable(TaxIdType),
  trade_name: clearable(Text(255)),
  website: clearable(Url),
  address_line1: clearable(Text(255)),
  address_line2: clearable(Text(255)),
  city_id: clearable(GeoId),
  state_id: clearable(GeoId),
  country_id: clearable(GeoId),
  city: clearable(RequiredText(100).annotations({ description: "City name, matched within the state (accent- and case-insensitive)" })),
  state: clearable(RequiredText(100).annotations({ description: "State code or name, matched within the country" })),
  country_code: clearable(RequiredText(100).annotations({ description: "Country ISO2, ISO3, numeric code or name (en, pt, es)" })),
  postal_code: clearable(Text(16)),
  reference_code: clearable(RequiredText(100)),
  bank_code: clearable(Text(10)),
  branch_number: clearable(Text(10)),
  account_number: clearable(Text(20)),
  account_type: clearable(AccountType),
  emails: Schema.optional(StringList(Email, 20)),
  phones: Schema.optional(StringList(Phone, 20)),
  tags: Schema.optional(Tags),
  is_blocked: Schema.optional(Schema.Boolean),
  metadata: Schema.optional(Metadata),
  br_data: clearable(PartyBrDataInput),
  us_data: clearable(PartyUsDataInput)
}

export const CustomerCreate = Schema.Struct({ legal_name: RequiredText(255), ...partyFields }).annotations({
  identifier: "CustomerCreate"
})
export const CustomerUpdate = Schema.Struct({ legal_name: Schema.optional(RequiredText(255)), ...partyFields }).annotations({
  identifier: "CustomerUpdate"
})
type PartyInput = Partial<typeof CustomerCreate.Type>

interface Geography {
  readonly city_id: number | null
  readonly state_id: number | null
  readonly country_id: number | null
}

/**
 * Checks the catalog ids and their hierarchy (city in state, state in country),
 * filling the parents a city or state implies. Anything that does not fit is a 422.
 */
export const resolveGeography = (wanted: Geography) =>
  Effect.gen(function* () {
    const catalogs = yield* CatalogLookup
    const problems = new Problems()
    let { city_id, state_id, country_id } = wanted
    if (city_id !== null) {
      const city = yield* catalogs.findCity(city_id)
      if (Option.isNone(city)) problems.add("city_id", "does not match any city")
      else {
        if (state_id !== null && state_id !== city.value.state_id) problems.add("city_id", `is not in state ${state_id}`)
        state_id ??= city.value.state_id
      }
    }
    if (state_id !== null && !problems.any) {
      const state = yield* catalogs.findState(state_id)
      if (Option.isNone(state)) problems.add("state_id", "does not match any state")
      else {
        if (country_id !== null && country_id !== state.value.country_id) problems.add("state_id", `is not in country ${country_id}`)
        country_id ??= state.value.country_id
      }
    }
    if (country_id !== null && !problems.any) {
      const country = yield* catalogs.findCountry(country_id)
      if (Option.isNone(country)) problems.add("country_id", "does not match any country")
    }
    if (problems.any) return yield* problems.fail("The geography fields cannot be matched to the catalogs", "GEOGRAPHY_UNRESOLVED")
    return { city_id, state_id, country_id }
  })

/** Column values shared by customers and suppliers: tax id rules, geography, blocks. */
export const partyColumns = (
  input: PartyInput,
  current: { readonly tax_id: string | null; readonly tax_id_type: string | null; readonly type: string; readonly metadata: Record<string, unknown>; readonly br_data: object; readonly us_data: object; readonly city: { id: number } | null; readonly state: { id: number } | null; readonly country: { id: number } | null } | undefined
) =>
  Effect.gen(function* () {
    const problems = new Problems()
    const values: Record<string, unknown> = {
      ...present(input, [
        "legal_name",
        "trade_name",
        "website",
        "address_line1",
        "address_line2",
        "postal_code",
        "reference_code",
        "bank_code",
        "branch_number",
        "account_number",
        "account_type",
        "emails",
        "phones",
        "tags",
        "is_blocked",
        "tax_id_type"
      ])
    }
    // The tax id is checked against its type whenever either changes; a Brazilian
    // number with valid check digits and no type sent is recognised as CPF or CNPJ.
    const taxId = input.tax_id !== undefined ? input.tax_id : current?.tax_id ?? null
    let taxIdType = (input.tax_id_type !== undefined ? input.tax_id_type : current?.tax_id_type ?? null) as TaxIdCode | null
    const taxIdTouched = input.tax_id !== undefined || input.tax_id_type !== undefined
    if (taxIdTouched && taxId !== null) {
      if (taxIdType === null && input.tax_id_type === undefined) {
        const inferred = inferTaxIdType(taxId)
        if (inferred) values.tax_id_type = taxIdType = inferred
      }
      const normalized = normalizeTaxId(taxIdType, taxId)
      if (normalized.ok) values.tax_id = normalized.value
      else problems.add(input.tax_id !== undefined ? "tax_id" : "tax_id_type", normalized.reason)
    } else if (input.tax_id === null) {
      values.tax_id = null
    }
    const typeChanged = taxIdType !== (current?.tax_id_type ?? null)
    if (input.type !== undefined) values.type = input.type
    else if (!current || typeChanged) values.type = taxIdType && individualTaxIdTypes.includes(taxIdType) ? "individual" : "company"
    if (problems.any) return yield* problems.fail("The tax id is not valid for its type", "INVALID_TAX_ID")

    const geographyTouched = (["city_id", "state_id", "country_id", "city", "state", "country_code"] as const).some((key) => input[key] !== undefined)
    if (geographyTouched) {
      const matched = yield* matchGeographyText(input, { country_id: current?.country?.id ?? null, state_id: current?.state?.id ?? null })
      const given = {
        city_id: input.city_id !== undefined ? input.city_id : matched.city_id,
        state_id: input.state_id !== undefined ? input.state_id : matched.state_id,
        country_id: input.country_id !== undefined ? input.country_id : matched.country_id
      }
      // A new city or state brings its own parents unless they are sent too; clearing
      // a city (or state) keeps the parents it had.
      const keep = (sent: number | null | undefined, stored: { id: number } | null | undefined, replaced: boolean) =>
        sent !== undefined ? sent : replaced ? null : stored?.id ?? null
      const cityChanged = given.city_id !== undefined && given.city_id !== null
      const stateChanged = given.state_id !== undefined && given.state_id !== null
      const geography = yield* resolveGeography({
        city_id: keep(given.city_id, current?.city, false),
        state_id: keep(given.state_id, current?.state, cityChanged),
        country_id: keep(given.country_id, current?.country, cityChanged || stateChanged)
      })
      Object.assign(values, geography)
    }
    if (input.metadata !== undefined) values.metadata = current ? mergePatch(current.metadata, input.metadata) : compact(input.metadata)
    if (input.br_data !== undefined) {
      values.br_data = input.br_data === null ? {} : compact(mergePatch(current ? compact(current.br_data as Record<string, unknown>) : {}, input.br_data))
    }
    if (input.us_data !== undefined) {
      values.us_data = input.us_data === null ? {} : compact(mergePatch(current ? compact(current.us_data as Record<string, unknown>) : {}, input.us_data))
    }
    return values
  })

export const partyFilters = {
  ...timestampFilters,
  type: { type: "string" },
  tax_id: { type: "string", nullable: true },
  tax_id_type: { type: "string", nullable: true },
  legal_name: { type: "string", sortable: true },
  trade_name: { type: "string", nullable: true, sortable: true },
  website: { type: "string", nullable: true },
  postal_code: { type: "string", nullable: true },
  reference_code: { type: "string", nullable: true, sortable: true },
  bank_code: { type: "string", nullable: true },
  account_type: { type: "string", nullable: true },
  city_id: { type: "number", nullable: true },
  state_id: { type: "number", nullable: true },
  emails: { type: "string", array: true },
  phones: { type: "string", array: true },
  tags: { type: "string", array: true },
  is_blocked: { type: "boolean" },
  ...blockFilters("br_data", ["ie", "im", "suframa", "tax_regime", "cnae_primary", "pix_key"]),
  ...blockFilters("br_data", ["ie_exempt"], "boolean"),
  ...blockFilters("us_data", ["naics_code", "sic_code", "tax_classification", "state_tax_id", "duns_number"]),
  ...blockFilters("us_data", ["w9_on_file", "sales_tax_exempt", "ach_authorized"], "boolean")
} as const

export const partyColumnTypes = {
  type: "text",
  tax_id: "text",
  tax_id_type: "text",
  legal_name: "text",
  trade_name: "text",
  website: "text",
  address_line1: "text",
  address_line2: "text",
  city_id: "integer",
  state_id: "integer",
  postal_code: "text",
  reference_code: "text",
  bank_code: "text",
  branch_number: "text",
  account_number: "text",
  account_type: "text",
  emails: "jsonb",
  phones: "jsonb",
  tags: "jsonb",
  is_blocked: "boolean",
  metadata: "jsonb",
  br_data: "jsonb",
  us_data: "jsonb"
} as const

const partyRecord = (row: Readonly<Record<string, unknown>>, owner: string) => ({
  id: row.id as string,
  type: row.type as string,
  tax_id: row.tax_id as string | null,
  tax_id_type: row.tax_id_type as string | null,
  legal_name: row.legal_name as string,
  trade_name: row.trade_name as string | null,
  website: row.website as string | null,
  address_line1: row.address_line1 as string | null,
  address_line2: row.address_line2 as string | null,
  city: row.city_id === null ? null : { id: row.city_id as number, name: row.city_name as string },
  state: row.state_id === null
    ? null
    : { id: row.state_id as number, state_code: row.state_code as string, name: row.state_name as string },
  postal_code: row.postal_code as string | null,
  reference_code: row.reference_code as string | null,
  bank_code: row.bank_code as string | null,
  branch_number: row.branch_number as string | null,
  account_number: row.account_number as string | null,
  account_type: row.account_type as string | null,
  emails: row.emails as Array<string>,
  phones: row.phones as Array<string>,
  tags: row.tags as Array<string>,
  is_blocked: row.is_blocked as boolean,
  metadata: row.metadata as Record<string, unknown>,
  br_data: blockOf(row.br_data, BR_KEYS, { key: owner, id: row.id as string }),
  us_data: blockOf(row.us_data, US_KEYS, { key: owner, id: row.id as string }),
  ...timestampsOf(row)
})

export const customers = defineResource({
  name: "customers",
  singular: "customer",
  title: "Customer",
  description: "Customers (people and companies the tenant sells to), with geography from the catalogs.",
  notFoundCode: "CUSTOMER_NOT_FOUND",
  emitsEvents: true,
  record: Customer,
  table: "customers",
  columns: { ...partyColumnTypes, country_id: "integer" },
  joins: {
    sql: "LEFT JOIN cities ci ON ci.id = r.city_id LEFT JOIN states st ON st.id = r.state_id LEFT JOIN countries co ON co.id = r.country_id",
    select: "ci.name AS city_name, st.state_code AS state_code, st.name AS state_name, co.iso2 AS country_iso2, co.iso3 AS country_iso3, co.name_en AS country_name"
  },
  filters: { ...partyFilters, country_id: { type: "number", nullable: true } },
  defaultSort: { field: "created_at", order: "asc" },
  search: { payload: true },
  toRecord: (row): Customer => ({
    ...partyRecord(row, "customer_id"),
    country: row.country_id === null
      ? null
      : { id: row.country_id as number, iso2: row.country_iso2 as string, iso3: row.country_iso3 as string, name: row.country_name as string }
  }) as Customer,
  write: {
    createInput: CustomerCreate,
    updateInput: CustomerUpdate,
    example: {
      legal_name: "Padaria Pão Quente Ltda",
      trade_name: "Pão Quente",
      tax_id: "11.222.333/0001-81",
      tax_id_type: "CNPJ",
      emails: ["compras@paoquente.example"],
      city_id: 3550308
    },
    fromCreate: (input: typeof CustomerCreate.Type) => partyColumns(input, undefined),
    fromUpdate: (input: typeof CustomerUpdate.Type, current: Customer) => partyColumns(input, current)
  }
})
