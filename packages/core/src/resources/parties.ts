import { Effect, Option, Schema } from "effect"
import { cities } from "../catalogs/cities.js"
import { matchGeographyText } from "../catalogs/geography.js"
import { CatalogLookup } from "../catalogs/lookup.js"
import { states } from "../catalogs/states.js"
import { column, embedOne, id, timestamps, withInput } from "../engine/field.js"
import type { Draft } from "../engine/resource.js"
import {
  block,
  choice,
  clearable,
  DateString,
  Digits,
  Email,
  flag,
  freeText,
  metadata,
  Problems,
  RequiredText,
  StringList,
  stringList,
  tags,
  Text,
  text,
  trimmed,
  url,
  Int4Id
} from "./common.js"
import { individualTaxIdTypes, inferTaxIdType, normalizeTaxId, TAX_ID_TYPES, type TaxIdType } from "./tax-ids.js"

/**
 * What customers and suppliers share: identity and tax id, address with geography
 * from the catalogs, bank details, contacts, and the Brazilian and US blocks.
 */

const nullable = Schema.NullOr
const Cnae = Digits(7, "CNAE code")

export const PartyBrDataInput = Schema.Struct({
  ie: clearable(Text(20)),
  ie_exempt: clearable(Schema.Boolean),
  im: clearable(Text(20)),
  suframa: clearable(Text(12)),
  tax_regime: clearable(Schema.Literals(["simples_nacional", "simples_nacional_excesso", "mei", "lucro_presumido", "lucro_real", "other"])),
  cnae_primary: clearable(Cnae),
  cnae_secondary: clearable(StringList(Cnae, 99)),
  nire: clearable(Text(11)),
  pix_key: clearable(Text(77)),
  pix_key_type: clearable(Schema.Literals(["cpf", "cnpj", "email", "phone", "random"])),
  address_number: clearable(Text(20)),
  address_district: clearable(Text(100))
}).annotate({ identifier: "PartyBrDataInput" })

export const PartyUsDataInput = Schema.Struct({
  w9_on_file: clearable(Schema.Boolean),
  w9_received_date: clearable(DateString),
  naics_code: clearable(Schema.String.check(Schema.isPattern(/^\d{2,6}$/u, { message: "must be a NAICS code of 2 to 6 digits" }))),
  sic_code: clearable(Schema.String.check(Schema.isPattern(/^\d{4}$/u, { message: "must be a SIC code of 4 digits" }))),
  tax_classification: clearable(Text(64)),
  sales_tax_exempt: clearable(Schema.Boolean),
  sales_tax_exempt_certificate: clearable(Text(64)),
  sales_tax_exempt_expiry: clearable(DateString),
  resale_certificate: clearable(Text(64)),
  state_tax_id: clearable(Text(32)),
  state_of_incorporation: clearable(Schema.String.check(Schema.isPattern(/^[A-Z]{2}$/u, { message: "must be a two-letter state code" }))),
  duns_number: clearable(Schema.String.check(Schema.isPattern(/^\d{9}$/u, { message: "must be a D-U-N-S number of 9 digits" }))),
  cage_code: clearable(Schema.String.check(Schema.isPattern(/^[A-Z0-9]{5}$/u, { message: "must be a CAGE code of 5 characters" }))),
  bank_name: clearable(Text(100)),
  routing_number: clearable(Schema.String.check(Schema.isPattern(/^\d{9}$/u, { message: "must be an ABA routing number of 9 digits" }))),
  ach_authorized: clearable(Schema.Boolean),
  ach_authorization_date: clearable(DateString)
}).annotate({ identifier: "PartyUsDataInput" })

const brKeys = {
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
}

const usKeys = {
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
}

const Phone = trimmed(
  Schema.String.check(Schema.isPattern(/^\s*\+?[0-9()\s.-]{6,30}\s*$/u, { message: "must be a phone number (digits, spaces, + ( ) . -)" }))
)

/** Country text as clients send it: ISO2, ISO3, numeric code or name. */
export const CountryText = RequiredText(100).pipe(Schema.annotateEncoded({ description: "Country ISO2, ISO3, numeric code or name (en, pt, es)" }))

export const GeoId = Int4Id

const geoKey = (description: string) =>
  column<number, number, true>({ type: "integer", output: Schema.Int, inputSchema: GeoId, nullable: true, hidden: true, filter: true, description })

/**
 * The fields of a party record, in answer order. `owner` names the record's id
 * inside its country blocks (`customer_id`, `supplier_id`); the country is the
 * caller's: customers answer a country object, suppliers its ISO2 code.
 */
export const partyFields = <Country extends Record<string, unknown>>(owner: string, prefix: string, country: Country) => ({
  id: id(),
  type: choice(["individual", "company"], { description: "individual or company (inferred from tax_id_type when absent)" }),
  tax_id: text(32, { nullable: true }),
  tax_id_type: choice(TAX_ID_TYPES, { nullable: true }),
  legal_name: text(255, { required: true, filter: { sortable: true } }),
  trade_name: text(255, { nullable: true, nonBlank: false, filter: { sortable: true } }),
  website: url(),
  address_line1: freeText(255),
  address_line2: freeText(255),
  city: withInput(
    embedOne({ key: "city_id", resource: () => cities, output: Schema.Struct({ id: Schema.Int, name: Schema.String }), pick: ["id", "name"] }),
    RequiredText(100).pipe(Schema.annotateEncoded({ description: "City name, matched within the state (accent- and case-insensitive)" })),
    { nullable: true }
  ),
  state: withInput(
    embedOne({
      key: "state_id",
      resource: () => states,
      output: Schema.Struct({ id: Schema.Int, state_code: Schema.String, name: Schema.String }),
      pick: ["id", "state_code", "name"]
    }),
    RequiredText(100).pipe(Schema.annotateEncoded({ description: "State code or name, matched within the country" })),
    { nullable: true }
  ),
  ...country,
  city_id: geoKey("City id (catalog); fills its state and country"),
  state_id: geoKey("State id (catalog); fills its country"),
  country_id: geoKey("Country id (ISO 3166-1 numeric)"),
  postal_code: freeText(16),
  reference_code: text(100, { nullable: true, filter: { sortable: true } }),
  bank_code: freeText(10),
  branch_number: freeText(10),
  account_number: freeText(20),
  account_type: choice(["checking", "savings", "payment", "salary"], { nullable: true }),
  emails: stringList(Email, 20),
  phones: stringList(Phone, 20),
  tags: tags(),
  is_blocked: flag(),
  metadata: metadata(),
  br_data: block({
    identifier: `${prefix}BrData`,
    keys: brKeys,
    input: PartyBrDataInput,
    owner: { key: owner },
    filters: { ie: "string", im: "string", suframa: "string", tax_regime: "string", cnae_primary: "string", pix_key: "string", ie_exempt: "boolean" }
  }),
  us_data: block({
    identifier: `${prefix}UsData`,
    keys: usKeys,
    input: PartyUsDataInput,
    owner: { key: owner },
    filters: {
      naics_code: "string",
      sic_code: "string",
      tax_classification: "string",
      state_tax_id: "string",
      duns_number: "string",
      w9_on_file: "boolean",
      sales_tax_exempt: "boolean",
      ach_authorized: "boolean"
    }
  }),
  ...timestamps()
})

interface PartyInput {
  readonly type?: string
  readonly tax_id?: string | null
  readonly tax_id_type?: TaxIdType | null
  readonly city_id?: number | null
  readonly state_id?: number | null
  readonly country_id?: number | null
  readonly city?: string | null
  readonly state?: string | null
  readonly country_code?: string | null
}

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

const GEOGRAPHY = ["city_id", "state_id", "country_id", "city", "state", "country_code"] as const

const numberOrNull = (value: unknown): number | null => (typeof value === "number" ? value : null)

/**
 * A party's rules: the tax id is checked against its type whenever either changes
 * (a Brazilian number with valid check digits and no type sent is recognised as
 * CPF or CNPJ), the type follows the tax id type unless sent, and geography text
 * or ids resolve against the catalogs (spec 422 case 1).
 */
export const partyRules = (draft: Draft) =>
  Effect.gen(function* () {
    const input = draft.input as PartyInput
    const current = draft.current
    const values: Record<string, unknown> = { ...draft.values }
    const problems = new Problems()
    const taxId = input.tax_id !== undefined ? input.tax_id : (current?.tax_id as string | null | undefined) ?? null
    let taxIdType = (input.tax_id_type !== undefined ? input.tax_id_type : (current?.tax_id_type as TaxIdType | null | undefined) ?? null)
    if ((input.tax_id !== undefined || input.tax_id_type !== undefined) && taxId !== null) {
      if (taxIdType === null && input.tax_id_type === undefined) {
        const inferred = inferTaxIdType(taxId)
        if (inferred) values.tax_id_type = taxIdType = inferred
      }
      const normalized = normalizeTaxId(taxIdType, taxId)
      if (normalized.ok) values.tax_id = normalized.value
      else problems.add(input.tax_id !== undefined ? "tax_id" : "tax_id_type", normalized.reason)
    }
    const typeChanged = taxIdType !== ((current?.tax_id_type as string | null | undefined) ?? null)
    if (input.type === undefined && (!current || typeChanged)) {
      values.type = taxIdType && individualTaxIdTypes.includes(taxIdType) ? "individual" : "company"
    }
    if (problems.any) return yield* problems.fail("The tax id is not valid for its type", "INVALID_TAX_ID")

    if (GEOGRAPHY.some((key) => input[key] !== undefined)) {
      const stored = { city_id: numberOrNull(current?.city_id), state_id: numberOrNull(current?.state_id), country_id: numberOrNull(current?.country_id) }
      const matched = yield* matchGeographyText(input, stored)
      const given = {
        city_id: input.city_id !== undefined ? input.city_id : matched.city_id,
        state_id: input.state_id !== undefined ? input.state_id : matched.state_id,
        country_id: input.country_id !== undefined ? input.country_id : matched.country_id
      }
      // A new city or state brings its own parents unless they are sent too; clearing
      // a city (or state) keeps the parents it had.
      const keep = (sent: number | null | undefined, storedId: number | null, replaced: boolean) =>
        sent !== undefined ? sent : replaced ? null : storedId
      const cityChanged = given.city_id !== undefined && given.city_id !== null
      const stateChanged = given.state_id !== undefined && given.state_id !== null
      Object.assign(values, yield* resolveGeography({
        city_id: keep(given.city_id, stored.city_id, false),
        state_id: keep(given.state_id, stored.state_id, cityChanged),
        country_id: keep(given.country_id, stored.country_id, cityChanged || stateChanged)
      }))
    }
    return { ...draft, values }
  })
