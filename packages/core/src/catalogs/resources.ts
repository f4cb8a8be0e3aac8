import type { AnyResource } from "../engine/resource.js"
import { banks } from "./banks.js"
import { cities } from "./cities.js"
import { countries } from "./countries.js"
import { paymentMethods } from "./payment-methods.js"
import { states } from "./states.js"
import { unitsOfMeasurement } from "./units.js"

/** The reference catalogs, read-only for every tenant (spec "Reference catalogs"). */
export const catalogResources: ReadonlyArray<AnyResource> = [
  banks,
  paymentMethods,
  unitsOfMeasurement,
  countries,
  states,
  cities
]

export { banks, cities, countries, paymentMethods, states, unitsOfMeasurement }
