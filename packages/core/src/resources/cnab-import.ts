import { Effect, Option, Schema } from "effect"
import { resourceNamed } from "../engine/registry.js"
import type { AnyResource, ResourceAction } from "../engine/resource.js"
import { unprocessable } from "../errors.js"
import { decimal, formatDecimal } from "../money/decimal.js"
import { type CnabEntry, readCnabReturn } from "../payments/cnab/index.js"
import { MatchCandidates, sameOurNumber } from "../reconciliation/candidates.js"
import { transactionsByFitid } from "./ofx-import.js"
import { openAmountOfRecord } from "./settlement.js"

/** Largest return file taken at once: some 25,000 lines of CNAB 400. */
export const MAX_CNAB_BYTES = 10 * 1024 * 1024

export const CnabImportSummary = Schema.Struct({
  account_id: Schema.String,
  layout: Schema.Literals(["240", "400"]),
  bank_code: Schema.String,
  settled: Schema.Int.annotate({ description: "Titles settled: a financial transaction and its allocation each" }),
  duplicates: Schema.Int.annotate({ description: "Settlements already imported (the same title, occurrence and date), left alone" }),
  transactions: Schema.Array(Schema.Struct({ receivable_id: Schema.String, financial_transaction_id: Schema.String, amount: Schema.String, our_number: Schema.String })),
  unplaced: Schema.Array(Schema.Struct({ line: Schema.Int, our_number: Schema.String, occurrence: Schema.String, reason: Schema.String })).annotate({
    description: "Lines that say a title was paid but name no receivable of this account that can take it, with why: never guessed"
  }),
  other_occurrences: Schema.Int.annotate({ description: "Lines of other occurrences (registered, rejected, written off…): nothing to settle" }),
  unreadable: Schema.Array(Schema.Struct({ line: Schema.Int, reason: Schema.String }))
}).annotate({ identifier: "CnabImportSummary" })

const transactions = (): AnyResource => resourceNamed("financial-transactions")
const receivables = (): AnyResource => resourceNamed("receivables")

/** A settlement's own id in the account, so the same file imported again finds it: title, occurrence and day. */
const fitidOf = (entry: CnabEntry) => `cnab:${entry.ourNumber}:${entry.occurrence}:${entry.paymentDate ?? entry.occurrenceDate ?? "undated"}`

export const importCnab: ResourceAction = {
  name: "import_cnab",
  method: "POST",
  path: "cnab",
  permission: "update",
  summary: "Import a bank's CNAB return file",
  description: "Reads a CNAB 240 (segments T and U) or CNAB 400 return file of the account's boleto collection: each settled title, found by its " +
    "our number among the account's receivables, becomes a financial transaction of what was paid (source cnab, posted on the credit date) " +
    "and its allocation, so the receivable moves to paid or partial. Importing the same file again changes nothing. Lines naming no receivable, " +
    "one that is paid or cancelled, or two, are listed in unplaced, never guessed. Needs financial-transactions:create and receivables:update too.",
  raw: {
    contentType: "text/plain",
    maxBytes: MAX_CNAB_BYTES,
    argument: "cnab",
    description: "The return file as the bank sends it (CNAB 240 or 400, fixed-width lines, Latin-1 or UTF-8)."
  },
  importer: { format: "cnab", option: "account" },
  output: CnabImportSummary,
  successStatus: 201,
  emits: false,
  run: (context, content) =>
    Effect.gen(function* () {
      const file = readCnabReturn(content instanceof Uint8Array || typeof content === "string" ? content : "")
      if (!file.ok) return yield* Effect.fail(unprocessable(`The file is not a CNAB return file we can read: ${file.message}`, { file: [file.message] }, "INVALID_CNAB"))
      const accountId = String(context.current.id)
      const candidates = yield* MatchCandidates
      const paid = file.entries.filter((entry) => entry.settled)
      const stored = yield* candidates.byOurNumbers(context.principal.tenantId, accountId, paid.map((entry) => entry.ourNumber))
      const summary: { settled: number; duplicates: number; transactions: Array<typeof CnabImportSummary.Type["transactions"][number]>; unplaced: Array<typeof CnabImportSummary.Type["unplaced"][number]> } = {
        settled: 0,
        duplicates: 0,
        transactions: [],
        unplaced: []
      }
      const unplaced = (entry: CnabEntry, reason: string) => summary.unplaced.push({ line: entry.line, our_number: entry.ourNumber, occurrence: entry.occurrence, reason })
      const imported = yield* transactionsByFitid(context.store, accountId, paid.map(fitidOf))
      for (const entry of paid) {
        const fitid = fitidOf(entry)
        if (imported.has(fitid)) {
          summary.duplicates++
          continue
        }
        const named = stored.filter((receivable) => sameOurNumber(entry.ourNumber, receivable.ourNumber))
        if (named.length !== 1) {
          unplaced(entry, named.length === 0 ? "no receivable of this account has this our number" : `${named.length} receivables of this account have this our number`)
          continue
        }
        const receivable = Option.getOrUndefined(yield* context.store.findById(receivables(), named[0].id, { forUpdate: true }))
        if (!receivable || receivable.status === "paid" || receivable.status === "cancelled") {
          unplaced(entry, `its receivable is ${receivable ? String(receivable.status) : "gone"}`)
          continue
        }
        const amount = decimal(entry.paidAmount)
        if (!amount.gt(0)) {
          unplaced(entry, "the file gives no amount paid")
          continue
        }
        const postedAt = entry.creditDate ?? entry.paymentDate ?? entry.occurrenceDate
        if (postedAt === null) {
          unplaced(entry, "the file gives no date of payment or credit")
          continue
        }
        const money = yield* context.store.createRecord(transactions(), {
          account_id: accountId,
          source: "cnab",
          fitid,
          posted_at: postedAt,
          amount: formatDecimal(amount),
          name: `CNAB ${file.bankCode} ${entry.ourNumber}`,
          memo: `Occurrence ${entry.occurrence}; title ${entry.titleAmount}, interest ${entry.interest}, discount ${entry.discount}, fees ${entry.fees}`
        })
        // Paid above what is open (interest the receivable did not hold): what is open is allocated, the rest stays on the transaction.
        const open = openAmountOfRecord(receivable)
        const allocated = amount.gt(open) ? open : amount
        yield* context.store.runAction(receivables(), "allocate", named[0].id, {
          financial_transaction_id: String(money.id),
          allocated_amount: formatDecimal(allocated),
          notes: `CNAB return, line ${entry.line}`
        })
        imported.set(fitid, money)
        summary.settled++
        summary.transactions.push({ receivable_id: named[0].id, financial_transaction_id: String(money.id), amount: formatDecimal(amount), our_number: entry.ourNumber })
      }
      return {
        account_id: accountId,
        layout: file.layout,
        bank_code: file.bankCode,
        ...summary,
        other_occurrences: file.entries.length - paid.length,
        unreadable: file.unreadable.map((entry) => ({ line: entry.line, reason: entry.reason }))
      }
    })
}
