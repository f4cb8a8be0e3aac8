import { formatDecimal } from "../money/decimal.js"

/**
 * US state base sales-tax rates: the general rate a state (or the District of Columbia)
 * levies everywhere in it. County, city, district, regional and transit taxes are not in
 * them, so a sale in most places owes more than this rate; a tenant's fiscal rules carry
 * those (they override the table). Special rates (groceries, lodging, vehicles, prepared
 * food) are not in the table either.
 *
 * Source: each state's revenue department (named per entry), checked on
 * US_STATE_RATES_CHECKED and cross-checked with the Tax Foundation's "State and Local
 * Sales Tax Rates" table (its state column). Like that table, the rate counts the local
 * levies a state imposes at one uniform rate everywhere (California, Nevada, Utah,
 * Virginia), since no sale in those states owes less.
 *
 * A state whose rate changed or is set by statute to change lists the dated rates: a
 * sale takes the rate in force on the invoice date. Changes before the earliest one
 * listed are not kept (an older invoice takes the first rate listed).
 */
export const US_STATE_RATES_CHECKED = "2026-11-27"

interface StateRateEntry {
  /** The rate before the first change listed, or the only one; percent. */
  readonly rate: string
  /** Who publishes it. */
  readonly source: string
  /** `[first day, rate]`, in date order. */
  readonly changes?: ReadonlyArray<readonly [string, string]>
}

const NO_SALES_TAX = "no state sales tax"

const STATE_BASE_RATES: Readonly<Record<string, StateRateEntry>> = {
  AL: { rate: "4", source: "Alabama Department of Revenue" },
  AK: { rate: "0", source: `${NO_SALES_TAX} (boroughs and cities levy their own)` },
  AZ: { rate: "5.6", source: "Arizona Department of Revenue (transaction privilege tax, retail classification)" },
  AR: { rate: "6.5", source: "Arkansas Department of Finance and Administration" },
  CA: { rate: "7.25", source: "California Department of Tax and Fee Administration (statewide base rate: 6% state and 1.25% uniform local)" },
  CO: { rate: "2.9", source: "Colorado Department of Revenue" },
  CT: { rate: "6.35", source: "Connecticut Department of Revenue Services" },
  DE: { rate: "0", source: `${NO_SALES_TAX} (Delaware taxes sellers' gross receipts instead)` },
  // The FY2025 Budget Support Act set 7% from 2026-10-01; the FY2026 one dropped the 6.5%
  // step of 2025-10-01 and kept this one (KPMG, "This Week in State Tax", 2025-12-15).
  DC: { rate: "6", source: "District of Columbia Office of Tax and Revenue (D.C. Code § 47-2002)", changes: [["2026-10-01", "7"]] },
  FL: { rate: "6", source: "Florida Department of Revenue" },
  GA: { rate: "4", source: "Georgia Department of Revenue" },
  HI: { rate: "4", source: "Hawaii Department of Taxation (general excise tax; county surcharges excluded)" },
  ID: { rate: "6", source: "Idaho State Tax Commission" },
  IL: { rate: "6.25", source: "Illinois Department of Revenue" },
  IN: { rate: "7", source: "Indiana Department of Revenue" },
  IA: { rate: "6", source: "Iowa Department of Revenue" },
  KS: { rate: "6.5", source: "Kansas Department of Revenue" },
  KY: { rate: "6", source: "Kentucky Department of Revenue" },
  // Act 11 of the 2024 Third Extraordinary Session: 5% through 2029-12-31, then 4.75%.
  LA: { rate: "4.45", source: "Louisiana Department of Revenue (Act 11, 2024 Third Extraordinary Session)", changes: [["2025-01-01", "5"], ["2030-01-01", "4.75"]] },
  ME: { rate: "5.5", source: "Maine Revenue Services" },
  MD: { rate: "6", source: "Comptroller of Maryland" },
  MA: { rate: "6.25", source: "Massachusetts Department of Revenue" },
  MI: { rate: "6", source: "Michigan Department of Treasury" },
  MN: { rate: "6.875", source: "Minnesota Department of Revenue" },
  MS: { rate: "7", source: "Mississippi Department of Revenue" },
  MO: { rate: "4.225", source: "Missouri Department of Revenue" },
  MT: { rate: "0", source: NO_SALES_TAX },
  NE: { rate: "5.5", source: "Nebraska Department of Revenue" },
  NV: { rate: "6.85", source: "Nevada Department of Taxation (statewide minimum: state, local school support and city-county relief taxes)" },
  NH: { rate: "0", source: NO_SALES_TAX },
  NJ: { rate: "6.625", source: "New Jersey Division of Taxation" },
  NM: { rate: "5", source: "New Mexico Taxation and Revenue Department (gross receipts tax, state portion)", changes: [["2023-07-01", "4.875"]] },
  NY: { rate: "4", source: "New York State Department of Taxation and Finance" },
  NC: { rate: "4.75", source: "North Carolina Department of Revenue" },
  ND: { rate: "5", source: "North Dakota Office of State Tax Commissioner" },
  OH: { rate: "5.75", source: "Ohio Department of Taxation" },
  OK: { rate: "4.5", source: "Oklahoma Tax Commission" },
  OR: { rate: "0", source: NO_SALES_TAX },
  PA: { rate: "6", source: "Pennsylvania Department of Revenue" },
  RI: { rate: "7", source: "Rhode Island Division of Taxation" },
  SC: { rate: "6", source: "South Carolina Department of Revenue" },
  // House Bill 1137 (2023) lowers the rate to 4.2% from 2023-07-01 until it lapses on 2027-06-30.
  SD: { rate: "4.5", source: "South Dakota Department of Revenue (HB 1137, 2023)", changes: [["2023-07-01", "4.2"], ["2027-07-01", "4.5"]] },
  TN: { rate: "7", source: "Tennessee Department of Revenue" },
  TX: { rate: "6.25", source: "Texas Comptroller of Public Accounts" },
  UT: { rate: "6.1", source: "Utah State Tax Commission (4.85% state, 1% local and 0.25% county option, levied in every county)" },
  VT: { rate: "6", source: "Vermont Department of Taxes" },
  VA: { rate: "5.3", source: "Virginia Department of Taxation (4.3% state and 1% local; regional taxes excluded)" },
  WA: { rate: "6.5", source: "Washington State Department of Revenue" },
  WV: { rate: "6", source: "West Virginia Tax Division" },
  WI: { rate: "5", source: "Wisconsin Department of Revenue" },
  WY: { rate: "4", source: "Wyoming Department of Revenue" }
}

export interface UsStateRate {
  readonly state: string
  /** The state base rate: percent, six fractional digits; local taxes are not in it. */
  readonly rate: string
  /** The day the rate took effect, when the table records it. */
  readonly effective_from: string | null
  /** Who publishes the rate, and the day the table was checked against it. */
  readonly source: string
}

const today = () => new Date().toISOString().slice(0, 10)

/**
 * The state's base rate in force on `date` (`YYYY-MM-DD`, today when absent); states without
 * a sales tax (AK, DE, MT, NH, OR) answer zero, codes that are not a state or DC nothing.
 */
export const usStateRate = (state: string, date?: string | null): UsStateRate | undefined => {
  const entry = Object.hasOwn(STATE_BASE_RATES, state) ? STATE_BASE_RATES[state] : undefined
  if (entry === undefined) return undefined
  const on = (date ?? today()).slice(0, 10)
  let rate = entry.rate
  let effectiveFrom: string | null = null
  for (const [from, changed] of entry.changes ?? []) {
    if (from > on) break
    rate = changed
    effectiveFrom = from
  }
  return { state, rate: formatDecimal(rate), effective_from: effectiveFrom, source: `${entry.source}; checked ${US_STATE_RATES_CHECKED}` }
}

/** Every state and DC with its base rate on `date`, in code order (for docs and checks). */
export const usStateRates = (date?: string | null): ReadonlyArray<UsStateRate> =>
  Object.keys(STATE_BASE_RATES).sort().map((state) => usStateRate(state, date)!)
