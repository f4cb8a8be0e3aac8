import { Context, type Effect, type Option } from "effect"

export interface UnitRef {
  readonly id: string
  readonly code: string
  readonly symbol: string | null
  readonly country_codes: ReadonlyArray<string>
}

export interface CountryRef {
  readonly id: number
  readonly iso2: string
  readonly iso3: string
  readonly name: string
}

export interface StateRef {
  readonly id: number
  readonly country_id: number
  readonly state_code: string
  readonly name: string
}

export interface CityRef {
  readonly id: number
  readonly state_id: number
  readonly country_id: number
  readonly name: string
}

/** Reads the reference catalogs that business records point at. */
export class CatalogLookup extends Context.Service<CatalogLookup, {
  /** A unit by id, UN/ECE code or fiscal code (e.g. the NF-e `KG`). */
  readonly findUnit: (reference: string) => Effect.Effect<Option.Option<UnitRef>>
  readonly findCountry: (id: number) => Effect.Effect<Option.Option<CountryRef>>
  readonly findState: (id: number) => Effect.Effect<Option.Option<StateRef>>
  readonly findCity: (id: number) => Effect.Effect<Option.Option<CityRef>>
  /** Countries whose ISO2, ISO3, numeric code or name (en, pt, es) is `text`, accent- and case-insensitively. */
  readonly matchCountries: (text: string) => Effect.Effect<ReadonlyArray<CountryRef>>
  /** States whose code or name is `text`, within a country when given. */
  readonly matchStates: (text: string, countryId: number | null) => Effect.Effect<ReadonlyArray<StateRef & { readonly country_code: string }>>
  /** Cities named `text`, within a state or country when given. */
  readonly matchCities: (
    text: string,
    within: { readonly stateId: number | null; readonly countryId: number | null }
  ) => Effect.Effect<ReadonlyArray<CityRef & { readonly state_code: string }>>
}>()("erp/core/CatalogLookup") {}
