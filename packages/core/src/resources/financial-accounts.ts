import { Effect, Option, Schema } from "effect"
import { banks } from "../catalogs/banks.js"
import { expression, id, timestamps } from "../engine/field.js"
import { defineResource, type RecordType } from "../engine/resource.js"
import { unprocessable } from "../errors.js"
import { block, choice, flag, freeText, integer, metadata, money, reference, text } from "./common.js"
import { financialTransactions } from "./financial-transactions.js"
import { importCnab } from "./cnab-import.js"
import { importOfx } from "./ofx-import.js"
import { AccountCollection, accountCollectionInput, accountCollectionRules } from "./account-collection.js"
import { autoReconcile } from "./reconciliation.js"

export const ACCOUNT_TYPES = ["checking", "savings", "cash", "credit_card", "investment", "other"] as const

/** The initial balance plus every live, not ignored transaction of the account. */
const CURRENT_BALANCE = `(r.initial_balance + coalesce((SELECT sum(t.amount) FROM financial_transactions t
  WHERE t.tenant_id = r.tenant_id AND t.account_id = r.id AND t.deleted_at IS NULL AND t.ignored_at IS NULL), 0))::numeric(20, 6)`

export const financialAccounts = defineResource({
  name: "financial-accounts",
  singular: "financial-account",
  title: "Financial account",
  description: "Where the tenant's money is: bank accounts, cash, cards, investments. current_balance is the initial balance plus its transactions.",
  notFoundCode: "FINANCIAL_ACCOUNT_NOT_FOUND",
  events: true,
  table: "financial_accounts",
  fields: {
    id: id(),
    bank_id: reference(() => banks, { description: "A bank of the tenant's country (GET /banks)" }),
    name: text(120, { required: true, filter: { sortable: true } }),
    reference_code: text(60, { nullable: true }),
    type: choice(ACCOUNT_TYPES, { required: true }),
    initial_balance: money({ signed: true, filter: { sortable: true }, description: "Balance before the first transaction; may be negative" }),
    current_balance: expression({
      sql: CURRENT_BALANCE,
      type: "numeric",
      output: Schema.String,
      description: "initial_balance plus the amounts of its transactions (deleted and ignored ones left out)"
    }),
    description: freeText(1000),
    is_blocked: flag(),
    display_order: integer({ filter: { sortable: true } }),
    br_data: block({
      identifier: "FinancialAccountBrData",
      keys: AccountCollection.fields,
      input: accountCollectionInput,
      filters: { pix_key: "string", boleto_bank_code: "string" }
    }),
    metadata: metadata(),
    ...timestamps()
  },
  defaultSort: { field: "display_order", order: "asc" },
  search: { payload: true },
  writes: {
    example: { name: "Itaú conta corrente", type: "checking", reference_code: "0341-1234-56789-0", initial_balance: "1500.00", display_order: 1 }
  },
  rules: accountCollectionRules,
  actions: [importOfx, importCnab, autoReconcile],
  // Transactions belong to their account: remove them (or ignore them) first.
  beforeRemove: ({ current, store }) =>
    Effect.flatMap(
      store.findOne(financialTransactions, { kind: "condition", field: "account_id", op: "eq", value: String(current.id) }),
      Option.match({
        onNone: () => Effect.void,
        onSome: () =>
          Effect.fail(unprocessable("This account has transactions: delete them before the account", { id: ["has transactions"] }, "ACCOUNT_HAS_TRANSACTIONS"))
      })
    )
})

export type FinancialAccount = RecordType<typeof financialAccounts>
