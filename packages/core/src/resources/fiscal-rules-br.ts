import { Effect, Schema, SchemaTransformation } from "effect"
import { children } from "../engine/children.js"
import { column, id, stored, timestamp, timestamps } from "../engine/field.js"
import { type Draft, defineResource, type RecordType } from "../engine/resource.js"
import { decimal } from "../money/decimal.js"
import { flag, freeText, integer, metadata, money, Problems, text } from "./common.js"
import type { FiscalRule } from "../tax/engine.js"

/** Tax codes the built-in engine knows by name; others are accepted as given (upper case). */
export const KNOWN_TAX_CODES = ["ICMS", "ICMS_ST", "IPI", "PIS", "COFINS", "ISS", "IBS", "CBS", "SALES_TAX"] as const

const Code = (pattern: RegExp, message: string, description: string) =>
  Schema.String.check(Schema.isPattern(pattern, { message })).annotate({ description })

const upper = (schema: Schema.Codec<string, string>) =>
  schema.pipe(Schema.decodeTo(Schema.String, SchemaTransformation.transform({ decode: (text: string) => text.trim().toUpperCase(), encode: (text: string) => text })))

const codeColumn = (schema: Schema.Codec<string, string>, description: string) =>
  column<string, string, true>({ type: "text", output: Schema.String, inputSchema: schema, nullable: true, filter: true, description })

const taxFields = {
  id: id(),
  fiscal_rule_id: stored("uuid", Schema.String),
  tax_code: column({
    type: "text",
    output: Schema.String,
    inputSchema: upper(Code(/^\s*[A-Za-z][A-Za-z0-9_]{1,19}\s*$/u, "must be a tax code such as ICMS, IPI, PIS, COFINS, ISS, IBS, CBS", `Tax code: ${KNOWN_TAX_CODES.join(", ")} or another`)),
    required: true
  }),
  tax_name: text(100, { nullable: true }),
  rate: money({ required: true, description: "Percent: \"18\" is 18 %" }),
  base_reduction: money({ description: "Percent of the base taken off before the rate applies (0 to 100)" }),
  is_withheld: flag({ description: "Withheld by the customer (retido): counts in withheld_total" }),
  is_included: flag({ description: "Already inside the price (por dentro): not added to the invoice total" }),
  jurisdiction: text(60, { nullable: true }),
  position: stored("integer", Schema.Int),
  created_at: timestamp(),
  updated_at: timestamp()
}

const rules = (draft: Draft) =>
  Effect.gen(function* () {
    const problems = new Problems()
    ;(draft.children.taxes ?? []).forEach((tax, index) => {
      if (decimal(String(tax.values.base_reduction ?? "0")).gt(100)) problems.add(`taxes.${index}.base_reduction`, "must be at most 100 (percent)")
    })
    if (problems.any) return yield* problems.fail("The fiscal rule cannot be saved")
    return draft
  })

/**
 * The tenant's Brazilian fiscal rules (spec "Events": no public GET): which taxes apply to
 * an invoice item, by NCM prefix, CFOP, operation type and origin and destination states.
 * Managed by the embedding app through core (the admin facade) and by operators with
 * `erp fiscal-rules import|list`; US tenants use the same records to override state rates.
 */
export const fiscalRulesBr = defineResource({
  name: "fiscal-rules-br",
  singular: "fiscal-rule-br",
  title: "Fiscal rule",
  identifier: "FiscalRuleBr",
  description: "Brazilian fiscal rules: the taxes (ICMS, IPI, PIS, COFINS, ISS, IBS, CBS…) an invoice item takes, matched by NCM prefix, CFOP, operation type and states.",
  notFoundCode: "FISCAL_RULE_NOT_FOUND",
  panelOnly: true,
  operatorCommand: { name: "fiscal-rules", key: "name" },
  events: true,
  table: "fiscal_rules_br",
  fields: {
    id: id(),
    name: text(200, { required: true, filter: { sortable: true } }),
    description: freeText(2000, {}),
    ncm_prefix: codeColumn(Code(/^\d{1,8}$/u, "must be 1 to 8 digits of an NCM code", "Matches items whose NCM starts with these digits"), "Matches items whose NCM starts with these digits"),
    cfop: codeColumn(Code(/^\d{4}$/u, "must be a CFOP of 4 digits", "CFOP of 4 digits"), "Matches items with this CFOP"),
    operation_type: text(40, { nullable: true, description: "Matches invoices of this operation type" }),
    origin_state_code: codeColumn(upper(Code(/^\s*[A-Za-z]{2}\s*$/u, "must be a two-letter state code", "Two-letter state code")), "Matches invoices from this state"),
    destination_state_code: codeColumn(upper(Code(/^\s*[A-Za-z]{2}\s*$/u, "must be a two-letter state code", "Two-letter state code")), "Matches invoices to this state"),
    priority: integer({ description: "Among matching rules the highest priority wins, then the most specific" }),
    is_active: column({ type: "boolean", output: Schema.Boolean, filter: true, description: "Inactive rules are never applied" }),
    taxes: children({ table: "fiscal_rule_br_taxes", parentKey: "fiscal_rule_id", fields: taxFields, identifier: "FiscalRuleBrTax", maxItems: 20 }),
    metadata: metadata(),
    ...timestamps()
  },
  defaultSort: { field: "created_at", order: "asc" },
  writes: {
    example: {
      name: "Café torrado, venda dentro de SP",
      ncm_prefix: "0901",
      cfop: "5102",
      origin_state_code: "sp",
      destination_state_code: "sp",
      taxes: [
        { tax_code: "ICMS", rate: "18", is_included: true },
        { tax_code: "PIS", rate: "0.65", is_included: true },
        { tax_code: "COFINS", rate: "3", is_included: true }
      ]
    }
  },
  rules
})

export type FiscalRuleBr = RecordType<typeof fiscalRulesBr>

/** A stored rule as the tax engine reads it. */
export const asFiscalRule = (row: Readonly<Record<string, unknown>>): FiscalRule => ({
  id: String(row.id),
  name: String(row.name),
  ncm_prefix: (row.ncm_prefix as string | null) ?? null,
  cfop: (row.cfop as string | null) ?? null,
  operation_type: (row.operation_type as string | null) ?? null,
  origin_state_code: (row.origin_state_code as string | null) ?? null,
  destination_state_code: (row.destination_state_code as string | null) ?? null,
  priority: Number(row.priority ?? 0),
  taxes: ((row.taxes as ReadonlyArray<Readonly<Record<string, unknown>>> | undefined) ?? []).map((tax) => ({
    tax_code: String(tax.tax_code),
    tax_name: (tax.tax_name as string | null) ?? null,
    rate: String(tax.rate),
    base_reduction: String(tax.base_reduction ?? "0"),
    is_withheld: tax.is_withheld === true,
    is_included: tax.is_included === true,
    jurisdiction: (tax.jurisdiction as string | null) ?? null
  }))
})
