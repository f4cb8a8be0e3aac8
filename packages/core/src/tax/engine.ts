import { Context, type Effect } from "effect"
import type { Unprocessable } from "../errors.js"

/**
 * The tax engine computes an invoice's taxes, item by item. The core ships one
 * (`builtInTaxEngine`: the tenant's fiscal rules and US state base rates); an embedding
 * app plugs in its own with a Layer (`layerCore(store, { taxEngine })`). The name of
 * the engine that computed an invoice's taxes is kept in `tax_engine_provider`.
 */

/** One tax of a fiscal rule. Rates and base reductions are percents ("18" is 18 %). */
export interface FiscalRuleTax {
  readonly tax_code: string
  readonly tax_name: string | null
  readonly rate: string
  readonly base_reduction: string
  readonly is_withheld: boolean
  readonly is_included: boolean
  readonly jurisdiction: string | null
}

/** A tenant's fiscal rule: which items it applies to (empty criteria match anything) and the taxes it lists. */
export interface FiscalRule {
  readonly id: string
  readonly name: string
  readonly ncm_prefix: string | null
  readonly cfop: string | null
  readonly operation_type: string | null
  readonly origin_state_code: string | null
  readonly destination_state_code: string | null
  readonly priority: number
  readonly taxes: ReadonlyArray<FiscalRuleTax>
}

/** The fiscal fields of a product an item's taxes depend on. */
export interface ProductFiscalData {
  readonly id: string
  readonly type: string | null
  readonly br_data: Readonly<Record<string, unknown>>
  readonly us_data: Readonly<Record<string, unknown>>
}

export interface TaxItem {
  /** Position in the invoice (0-based). */
  readonly index: number
  /** What the taxes are computed on: the item's total (its subtotal less its discount). */
  readonly amount: string
  readonly quantity: string
  readonly unit_price: string
  readonly product: ProductFiscalData | null
  /** The item's own fiscal fields (`cfop`, `ncm_code`, service codes…; `tax_code`, `sales_tax_category`). */
  readonly br_data: Readonly<Record<string, unknown>>
  readonly us_data: Readonly<Record<string, unknown>>
}

export interface TaxRequest {
  readonly tenantCountry: string
  readonly invoice: {
    readonly invoice_date: string | null
    readonly operation_type: string | null
    readonly product_type: string | null
    readonly customer_tax_type: string | null
    readonly origin_state_code: string | null
    readonly origin_country_code: string | null
    readonly destination_state_code: string | null
    readonly destination_country_code: string | null
  }
  readonly items: ReadonlyArray<TaxItem>
  /** The tenant's active fiscal rules (the built-in engine's input; others may ignore them). */
  readonly fiscalRules: ReadonlyArray<FiscalRule>
}

/** One computed tax of an item (spec invoice `taxes[]`, without the ids the invoice gives it). */
export interface TaxLine {
  readonly tax_code: string
  readonly tax_name: string
  readonly base_amount: string
  readonly rate: string
  readonly amount: string
  readonly jurisdiction: string | null
  readonly is_withheld: boolean
  readonly is_included: boolean
  readonly source: string
}

export interface ItemTaxes {
  readonly taxes: ReadonlyArray<TaxLine>
  /** What the engine used beyond the request (the rule, the rates): kept in the item's snapshot. */
  readonly used: Readonly<Record<string, unknown>>
}

export interface TaxResult {
  /** One per request item, in order. */
  readonly items: ReadonlyArray<ItemTaxes>
}

export class TaxEngine extends Context.Service<TaxEngine, {
  /** Recorded in the invoice's `tax_engine_provider`. */
  readonly name: string
  readonly resolve: (request: TaxRequest) => Effect.Effect<TaxResult, Unprocessable>
}>()("erp/core/TaxEngine") {}
