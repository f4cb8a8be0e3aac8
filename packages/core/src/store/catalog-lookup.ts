import * as SqlClient from "effect/sql/SqlClient"
import { Effect, Layer, Option } from "effect"
import { CatalogLookup, type CityRef, type CountryRef, type StateRef, type UnitRef } from "../catalogs/lookup.js"
import { isUuid } from "../engine/filter.js"

const first = <A>(rows: ReadonlyArray<A>) => Option.fromNullishOr(rows[0])

/** Runs of white space, as a SQL regular expression literal. */
const WHITESPACE = String.raw`'\s+'`

export const layerCatalogLookup = Layer.effect(
  CatalogLookup,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    /** Accent-, case- and spacing-insensitive form of a column or of the text sent. */
    const folded = (column: string) => sql.literal(`lower(unaccent(regexp_replace(trim(${column}), ${WHITESPACE}, ' ', 'g')))`)
    const normalized = (text: string) => sql`lower(unaccent(regexp_replace(trim(${text}::text), ${sql.literal(WHITESPACE)}, ' ', 'g')))`
    return CatalogLookup.of({
      findUnit: (reference) => {
        const query = isUuid(reference)
          ? sql<UnitRef>`SELECT id, code, symbol, country_codes FROM units_of_measurement WHERE id = ${reference}::uuid`
          : sql<UnitRef>`SELECT id, code, symbol, country_codes FROM units_of_measurement
              WHERE upper(code) = upper(${reference}) OR EXISTS (
                SELECT 1 FROM jsonb_each_text(fiscal_codes) AS f(k, v) WHERE upper(f.v) = upper(${reference}))
              ORDER BY (upper(code) = upper(${reference})) DESC, display_order LIMIT 1`
        return query.pipe(Effect.map(first), Effect.orDie)
      },
      findCountry: (id) =>
        sql<CountryRef>`SELECT id, iso2, iso3, name_en AS name FROM countries WHERE id = ${id}`.pipe(Effect.map(first), Effect.orDie),
      findState: (id) =>
        sql<StateRef>`SELECT id, country_id, state_code, name FROM states WHERE id = ${id}`.pipe(Effect.map(first), Effect.orDie),
      findCity: (id) =>
        sql<CityRef>`SELECT id, state_id, country_id, name FROM cities WHERE id = ${id}`.pipe(Effect.map(first), Effect.orDie),
      // Candidates are capped: a handful is enough to tell "one" from "several".
      matchCountries: (text) =>
        sql<CountryRef>`SELECT id, iso2, iso3, name_en AS name FROM countries
          WHERE upper(iso2) = upper(${text}) OR upper(iso3) = upper(${text})
            OR (${text} ~ '^[0-9]{1,3}$' AND numeric_code = lpad(${text}, 3, '0'))
            OR ${normalized(text)} IN (${folded("name_en")}, ${folded("name_pt")}, ${folded("name_es")})
          ORDER BY id LIMIT 5`.pipe(Effect.orDie),
      matchStates: (text, countryId) =>
        sql<StateRef & { country_code: string }>`SELECT id, country_id, state_code, name, country_code::text AS country_code FROM states
          WHERE (${countryId}::integer IS NULL OR country_id = ${countryId}::integer)
            AND (upper(state_code) = upper(${text}) OR ${folded("name")} = ${normalized(text)})
          ORDER BY id LIMIT 5`.pipe(Effect.orDie),
      matchCities: (text, within) =>
        sql<CityRef & { state_code: string }>`SELECT id, state_id, country_id, name, state_code FROM cities
          WHERE (${within.stateId}::integer IS NULL OR state_id = ${within.stateId}::integer)
            AND (${within.countryId}::integer IS NULL OR country_id = ${within.countryId}::integer)
            AND ${folded("name")} = ${normalized(text)}
          ORDER BY population DESC NULLS LAST, id LIMIT 5`.pipe(Effect.orDie)
    })
  })
)
