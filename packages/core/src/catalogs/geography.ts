import { Effect } from "effect"
import { Problems } from "../resources/common.js"
import { CatalogLookup } from "./lookup.js"

/** Geography as a client may send it: catalog ids, or text to match against the catalogs. */
export interface GeographyInput {
  readonly country_id?: number | null | undefined
  readonly country_code?: string | null | undefined
  readonly state_id?: number | null | undefined
  readonly state?: string | null | undefined
  readonly city_id?: number | null | undefined
  readonly city?: string | null | undefined
}

export interface GeographyIds {
  readonly country_id?: number | null
  readonly state_id?: number | null
  readonly city_id?: number | null
}

const several = (what: string, names: ReadonlyArray<string>, hint: string) =>
  `matches ${names.length} ${what} (${names.join(", ")}); ${hint}`

/**
 * Turns `country_code`, `state` and `city` into catalog ids (spec, 422 case 1).
 * Countries match by ISO2, ISO3, numeric code or name in English, Portuguese or
 * Spanish; a state by code or name within the country; a city by name within the
 * state; all accent- and case-insensitive. Anything without exactly one match, or
 * contradicting an id sent beside it, is refused naming the field: never a guess.
 * `stored` is the record's current geography (PATCH), the context for text sent alone.
 */
export const matchGeographyText = (input: GeographyInput, stored: { readonly country_id: number | null; readonly state_id: number | null }) =>
  Effect.gen(function* () {
    const catalogs = yield* CatalogLookup
    const problems = new Problems()
    const matched: { country_id?: number | null; state_id?: number | null; city_id?: number | null } = {}

    if (input.country_code === null) matched.country_id = null
    else if (input.country_code !== undefined) {
      const found = yield* catalogs.matchCountries(input.country_code)
      if (found.length === 0) problems.add("country_code", "matches no country by ISO2, ISO3, numeric code or name (en, pt, es)")
      else if (found.length > 1) problems.add("country_code", several("countries", found.map((country) => country.iso2), "send country_id"))
      else if (input.country_id != null && input.country_id !== found[0].id) {
        problems.add("country_code", `names ${found[0].iso2} (id ${found[0].id}) but country_id is ${input.country_id}`)
      } else matched.country_id = found[0].id
    }
    const countryChanged = input.country_id !== undefined || input.country_code !== undefined
    const country = matched.country_id ?? input.country_id ?? (countryChanged ? null : stored.country_id)

    if (input.state === null) matched.state_id = null
    else if (input.state !== undefined) {
      const found = yield* catalogs.matchStates(input.state, country)
      const where = country === null ? "" : " in that country"
      if (found.length === 0) problems.add("state", `matches no state by code or name${where}`)
      else if (found.length > 1) {
        problems.add("state", several("states", found.map((state) => `${state.state_code} in ${state.country_code}`), "send country_code or state_id"))
      } else if (input.state_id != null && input.state_id !== found[0].id) {
        problems.add("state", `names ${found[0].state_code} (id ${found[0].id}) but state_id is ${input.state_id}`)
      } else matched.state_id = found[0].id
    }
    const stateChanged = countryChanged || input.state_id !== undefined || input.state !== undefined
    const state = matched.state_id ?? input.state_id ?? (stateChanged ? null : stored.state_id)

    if (input.city === null) matched.city_id = null
    else if (input.city !== undefined) {
      const found = yield* catalogs.matchCities(input.city, { stateId: state, countryId: state === null ? country : null })
      const where = state !== null ? " in that state" : country !== null ? " in that country" : ""
      if (found.length === 0) problems.add("city", `matches no city by name${where}`)
      else if (found.length > 1) problems.add("city", several("cities", found.map((city) => `${city.name}/${city.state_code}`), "send state or city_id"))
      else if (input.city_id != null && input.city_id !== found[0].id) {
        problems.add("city", `names ${found[0].name} (id ${found[0].id}) but city_id is ${input.city_id}`)
      } else matched.city_id = found[0].id
    }

    if (problems.any) return yield* problems.fail("The geography fields cannot be matched safely to the catalogs", "GEOGRAPHY_UNRESOLVED")
    return matched as GeographyIds
  })
