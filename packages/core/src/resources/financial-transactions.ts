import { Effect, Schema, SchemaTransformation } from "effect"
import { column, expression, id, stored, timestamps } from "../engine/field.js"
import type { ResourceRef } from "../engine/field.js"
import { type AnyResource, defineResource, type Draft, type RecordType } from "../engine/resource.js"
import { unprocessable } from "../errors.js"
import { decimal } from "../money/decimal.js"
import { TRANSACTION_TYPES } from "../ofx/statement.js"
import { choice, date, datetime, freeText, metadata, money, Problems, reference, text, Uuid } from "./common.js"
import { resourceNamed } from "../engine/registry.js"
import { reconciliationActions } from "./reconciliation.js"

/** What is allocated of a transaction: to payables (money out) and receivables (money in). */
export const ALLOCATED_SQL = `(coalesce((SELECT sum(a.allocated_amount) FROM payable_allocations a
    WHERE a.tenant_id = r.tenant_id AND a.financial_transaction_id = r.id), 0)
  + coalesce((SELECT sum(a.allocated_amount) FROM receivable_allocations a
    WHERE a.tenant_id = r.tenant_id AND a.financial_transaction_id = r.id), 0))::numeric(20, 6)`

const SOURCES = ["manual", "api", "ofx", "cnab"] as const

/**
 * A transaction with allocations keeps its account, amount and sign (its settlements
 * depend on them) and cannot be ignored; the type follows the sign when not sent.
 */
const rules = (draft: Draft<typeof transactionFields>) =>
  Effect.gen(function* () {
    const problems = new Problems()
    const allocated = decimal(String(draft.current?.allocated_total ?? "0"))
    if (draft.operation === "update" && !allocated.isZero()) {
      for (const name of ["amount", "account_id"] as const) {
        if (draft.input[name] !== undefined && draft.values[name] !== draft.current?.[name]) problems.add(name, "cannot change while the transaction is allocated to payables or receivables")
      }
      if (draft.values.ignored_at !== null && draft.values.ignored_at !== undefined) problems.add("ignored_at", "cannot be set while the transaction is allocated")
    }
    if (problems.any) return yield* problems.fail("The transaction is allocated", "TRANSACTION_ALLOCATED")
    if (draft.values.trn_type === undefined || draft.values.trn_type === null) {
      const negative = decimal(String(draft.values.amount ?? "0")).isNegative()
      return { ...draft, values: { ...draft.values, trn_type: negative ? "DEBIT" : "CREDIT" } }
    }
    return draft
  })

/** The fields of a transaction, named so that its rules take a draft keyed by them. */
const transactionFields = {
  id: id(),
  account_id: reference((): ResourceRef => resourceNamed("financial-accounts"), { nullable: false, required: true, description: "The financial account" }),
  transfer_id: column({ type: "uuid", output: Schema.String, inputSchema: Uuid, nullable: true, description: "Pairs the two sides of a transfer between accounts" }),
  source: choice(SOURCES, { input: "create", description: "manual (default), api, ofx (imported statement) or cnab (a bank's collection return file)" }),
  fitid: text(255, { nullable: true, input: "create", description: "The bank's unique id of the transaction (OFX FITID); unique per account" }),
  trn_type: choice(TRANSACTION_TYPES, { description: "OFX TRNTYPE; defaults to CREDIT or DEBIT by the sign of amount" }),
  posted_at: date({ required: true, filter: { sortable: true }, description: "The day the bank posted it" }),
  user_initiated_at: date({ nullable: true, description: "The day it was initiated (OFX DTUSER)" }),
  amount: money({ signed: true, required: true, filter: { sortable: true }, description: "Positive: money in; negative: money out" }),
  orig_currency_code: column({
    type: "text",
    output: Schema.String,
    inputSchema: Schema.String.check(Schema.isPattern(/^[A-Za-z]{3}$/u, { message: "must be an ISO 4217 code" })).pipe(
      Schema.decodeTo(Schema.String, SchemaTransformation.transform({ decode: (code: string) => code.toUpperCase(), encode: (code: string) => code }))
    ),
    nullable: true
  }),
  orig_amount: money({ signed: true, nullable: true }),
  name: text(255, { nullable: true, nonBlank: false, filter: { sortable: true } }),
  extd_name: text(255, { nullable: true, nonBlank: false }),
  memo: freeText(1000, {}),
  refnum: text(64, { nullable: true }),
  checknum: text(64, { nullable: true }),
  srvrtid: text(64, { nullable: true }),
  correct_fitid: text(255, { nullable: true }),
  correct_action: choice(["REPLACE", "DELETE"], { nullable: true }),
  is_reconciled: stored("boolean", Schema.Boolean, { filter: true }),
  reconciled_at: stored("timestamptz", Schema.String, { nullable: true }),
  ignored_at: datetime({ nullable: true, filter: true, description: "Set to leave it out of balances and allocations (a duplicate, a reversal); null brings it back" }),
  allocated_total: expression({
    sql: ALLOCATED_SQL,
    type: "numeric",
    output: Schema.String,
    description: "How much of it is allocated to payables and receivables; fully allocated makes it reconciled"
  }),
  metadata: metadata(),
  ...timestamps()
}

export const financialTransactions = defineResource({
  name: "financial-transactions",
  singular: "financial-transaction",
  title: "Financial transaction",
  description: "Money in (positive amount) and out (negative) of a financial account, typed in or imported from OFX statements; allocated to payables and receivables.",
  notFoundCode: "FINANCIAL_TRANSACTION_NOT_FOUND",
  events: true,
  table: "financial_transactions",
  fields: transactionFields,
  defaultSort: { field: "posted_at", order: "desc" },
  search: { payload: true },
  writes: {
    example: { account_id: "00000000-0000-4000-8000-000000000000", posted_at: "2024-01-15", amount: "-1250.00", name: "PIX Torrefação Serra Azul", memo: "NF 1234" },
    references: { account_id: (): AnyResource => resourceNamed("financial-accounts") }
  },
  rules,
  actions: reconciliationActions,
  beforeRemove: ({ current }) =>
    decimal(String(current.allocated_total ?? "0")).isZero()
      ? Effect.void
      : Effect.fail(unprocessable("This transaction is allocated: remove its allocations first", { id: ["is allocated to payables or receivables"] }, "TRANSACTION_ALLOCATED"))
})

export type FinancialTransaction = RecordType<typeof financialTransactions>
