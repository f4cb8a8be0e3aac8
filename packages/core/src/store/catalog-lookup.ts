import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Layer, Option } from "effect"
import { CatalogLookup, type CityRef, type CountryRef, type StateRef, type UnitRef } from "../catalogs/lookup.js"
import { isUuid } from "../engine/filter.js"

const first = <A>(rows: ReadonlyArray<A>) => Option.fromNullable(rows[0])

export const layerCatalogLookup = Layer.effect(
  CatalogLookup,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
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
        sql<CityRef>`SELECT id, state_id, country_id, name FROM cities WHERE id = ${id}`.pipe(Effect.map(first), Effect.orDie)
    })
  })
)
