import BigNumber from "bignumber.js"
import { createRequire } from "node:module"
import { formatDecimal } from "../money/decimal.js"

/**
 * US state sales-tax rates from the `sales-tax` npm package (MIT, kept up to date by its
 * maintainers): its `res/sales_tax_rates.json` lists each state's rate as a fraction. We
 * read the state entries only, as percents with six fractional digits. A tenant's fiscal
 * rules override them.
 */
interface RatesFile {
  readonly US?: { readonly states?: Readonly<Record<string, { readonly rate: number }>> }
}

const PACKAGE = "sales-tax"

let cache: ReadonlyMap<string, string> | undefined

const load = (): ReadonlyMap<string, string> => {
  if (cache) return cache
  const require = createRequire(import.meta.url)
  const file = require(`${PACKAGE}/res/sales_tax_rates.json`) as RatesFile
  const version = (require(`${PACKAGE}/package.json`) as { version: string }).version
  packageVersion = version
  // The package's fractions are JSON numbers: their shortest decimal text is exact enough for a percent.
  cache = new Map(Object.entries(file.US?.states ?? {}).map(([state, entry]) => [state.toUpperCase(), formatDecimal(new BigNumber(String(entry.rate)).times(100))]))
  return cache
}

let packageVersion = ""

export interface UsStateRate {
  readonly state: string
  /** Percent, six fractional digits. */
  readonly rate: string
  readonly source: string
}

/** The state's rate; states the package does not list (no sales tax: OR, MT, NH, DE, AK) answer zero. */
export const usStateRate = (state: string): UsStateRate | undefined => {
  if (!/^[A-Z]{2}$/.test(state)) return undefined
  const rates = load()
  return { state, rate: rates.get(state) ?? formatDecimal(0), source: `${PACKAGE}@${packageVersion}` }
}
