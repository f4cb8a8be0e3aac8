import BigNumber from "bignumber.js"
import { Effect, Layer } from "effect"
import { formatDecimal } from "../money/decimal.js"
import { type FiscalRule, type ItemTaxes, TaxEngine, type TaxItem, type TaxLine, type TaxRequest } from "./engine.js"
import { usStateRate } from "./us-rates.js"

export const BUILT_IN_TAX_ENGINE = "erp-built-in"

const text = (value: unknown): string | null => (typeof value === "string" && value.trim() !== "" ? value.trim() : null)

/** The item's NCM: its own, else its product's. */
const ncmOf = (item: TaxItem) => text(item.br_data.ncm_code) ?? text(item.product?.br_data.ncm_code)

const same = (wanted: string | null, actual: string | null) => wanted === null || (actual !== null && wanted.toUpperCase() === actual.toUpperCase())

/** Whether a rule applies to an item: every criterion it sets must hold (an NCM prefix, a CFOP, the operation, the states). */
export const ruleMatches = (rule: FiscalRule, item: TaxItem, request: TaxRequest): boolean => {
  const ncm = ncmOf(item)
  return (rule.ncm_prefix === null || (ncm !== null && ncm.startsWith(rule.ncm_prefix))) &&
    same(rule.cfop, text(item.br_data.cfop)) &&
    same(rule.operation_type, request.invoice.operation_type) &&
    same(rule.origin_state_code, request.invoice.origin_state_code) &&
    same(rule.destination_state_code, request.invoice.destination_state_code)
}

/** The most specific matching rule: highest priority, then most criteria set, then the longest NCM prefix. */
export const bestRule = (rules: ReadonlyArray<FiscalRule>, item: TaxItem, request: TaxRequest): FiscalRule | undefined => {
  const criteria = (rule: FiscalRule) =>
    [rule.ncm_prefix, rule.cfop, rule.operation_type, rule.origin_state_code, rule.destination_state_code].filter((value) => value !== null).length
  return rules
    .filter((rule) => ruleMatches(rule, item, request))
    .sort((a, b) => b.priority - a.priority || criteria(b) - criteria(a) || (b.ncm_prefix?.length ?? 0) - (a.ncm_prefix?.length ?? 0) || a.id.localeCompare(b.id))[0]
}

/** base = amount × (1 − base_reduction %); tax = base × rate %; each rounded once to six digits. */
export const taxLine = (amount: string, tax: FiscalRule["taxes"][number], source: string): TaxLine => {
  const base = new BigNumber(amount).times(new BigNumber(100).minus(tax.base_reduction)).dividedBy(100)
  const roundedBase = formatDecimal(base)
  return {
    tax_code: tax.tax_code,
    tax_name: tax.tax_name ?? tax.tax_code,
    base_amount: roundedBase,
    rate: formatDecimal(tax.rate),
    amount: formatDecimal(new BigNumber(roundedBase).times(tax.rate).dividedBy(100)),
    jurisdiction: tax.jurisdiction,
    is_withheld: tax.is_withheld,
    is_included: tax.is_included,
    source
  }
}

const EXEMPT_CATEGORIES = new Set(["exempt", "nontaxable", "non_taxable"])

/**
 * A US item without a tenant rule: the destination state's base rate on the invoice date, unless
 * the item or customer is exempt. Local taxes are not in that rate, and the tax's name says so.
 */
const stateSalesTax = (item: TaxItem, request: TaxRequest): ItemTaxes => {
  const state = text(request.invoice.destination_state_code)?.toUpperCase() ?? null
  const category = (text(item.us_data.sales_tax_category) ?? text(item.product?.us_data.sales_tax_category))?.toLowerCase() ?? null
  if (state === null) return { taxes: [], used: { us_state_rate: null, reason: "no destination_state_code" } }
  if ((category !== null && EXEMPT_CATEGORIES.has(category)) || request.invoice.customer_tax_type === "exempt") {
    return { taxes: [], used: { us_state_rate: null, reason: "exempt", sales_tax_category: category } }
  }
  const rate = usStateRate(state, request.invoice.invoice_date)
  if (rate === undefined) return { taxes: [], used: { us_state_rate: null, reason: "not a US state or DC" } }
  if (new BigNumber(rate.rate).isZero()) return { taxes: [], used: { us_state_rate: rate } }
  return {
    taxes: [taxLine(item.amount, {
      tax_code: "SALES_TAX",
      tax_name: `${state} sales tax, state base rate (local taxes not included)`,
      rate: rate.rate,
      base_reduction: "0",
      is_withheld: false,
      is_included: false,
      jurisdiction: `US-${state}`
    }, "us_state_rate")],
    used: { us_state_rate: rate }
  }
}

/**
 * The built-in engine: each item takes the taxes of the tenant's most specific matching
 * fiscal rule; a US item with no rule takes the destination state's base sales-tax rate.
 */
export const resolveTaxes = (request: TaxRequest): ReadonlyArray<ItemTaxes> =>
  request.items.map((item) => {
    const rule = bestRule(request.fiscalRules, item, request)
    if (rule) {
      return {
        taxes: rule.taxes.map((tax) => taxLine(item.amount, tax, "fiscal_rule")),
        used: { fiscal_rule: { id: rule.id, name: rule.name, taxes: rule.taxes } }
      }
    }
    return request.tenantCountry === "US" ? stateSalesTax(item, request) : { taxes: [], used: { fiscal_rule: null } }
  })

export const builtInTaxEngine = Layer.succeed(
  TaxEngine,
  TaxEngine.of({ name: BUILT_IN_TAX_ENGINE, resolve: (request) => Effect.succeed({ items: resolveTaxes(request) }) })
)
