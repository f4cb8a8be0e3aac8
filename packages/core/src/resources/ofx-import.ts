import { Effect, Option, Schema } from "effect"
import type { FilterNode } from "../engine/filter.js"
import type { ActionContext, ActionStore, ResourceAction, Row } from "../engine/resource.js"
import { unprocessable } from "../errors.js"
import { OfxError } from "../ofx/parse.js"
import { readStatement, type StatementLine } from "../ofx/statement.js"
import { financialTransactions } from "./financial-transactions.js"

/** Largest statement file taken at once (4 MiB: some 15,000 lines; the line limit comes first). */
export const MAX_OFX_BYTES = 4 * 1024 * 1024

export const OfxImportSummary = Schema.Struct({
  account_id: Schema.String,
  imported: Schema.Int.annotate({ description: "Transactions created" }),
  duplicates: Schema.Int.annotate({ description: "Lines already imported (same FITID in this account), left alone" }),
  corrected: Schema.Int.annotate({ description: "Earlier transactions replaced or deleted by a CORRECTACTION line" }),
  skipped: Schema.Array(Schema.Struct({ fitid: Schema.String, reason: Schema.String })).annotate({
    description: "Lines not applied, with why (a correction of an allocated transaction)"
  })
}).annotate({ identifier: "OfxImportSummary" })

/** How many FITIDs one lookup asks for. */
const LOOKUP_CHUNK = 200

const byFitids = (accountId: string, fitids: ReadonlyArray<string>): FilterNode => ({
  kind: "group",
  logic: "and",
  conditions: [
    { kind: "condition", field: "account_id", op: "eq", value: accountId },
    { kind: "group", logic: "or", conditions: fitids.map((fitid) => ({ kind: "condition", field: "fitid", op: "eq", value: fitid })) }
  ]
})

/** An account's transactions (deleted ones too) with these FITIDs, by FITID: read in chunks rather than one by one. */
export const transactionsByFitid = (store: ActionStore, accountId: string, fitids: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const wanted = [...new Set(fitids)]
    const known = new Map<string, Row>()
    for (let start = 0; start < wanted.length; start += LOOKUP_CHUNK) {
      const chunk = wanted.slice(start, start + LOOKUP_CHUNK)
      const rows = yield* store.findMany(financialTransactions, byFitids(accountId, chunk), { limit: chunk.length, withDeleted: true })
      for (const row of rows) known.set(String(row.fitid), row)
    }
    return known
  })

const transactionValues = (line: StatementLine): Row => ({
  trn_type: line.trn_type,
  posted_at: line.posted_at,
  user_initiated_at: line.user_initiated_at,
  amount: line.amount,
  name: line.name,
  extd_name: line.extd_name,
  memo: line.memo,
  refnum: line.refnum,
  checknum: line.checknum,
  srvrtid: line.srvrtid,
  orig_currency_code: line.orig_currency_code,
  orig_amount: line.orig_amount
})

const isAllocated = (row: Row) => String(row.allocated_total ?? "0").replace(/[0.]/g, "") !== ""

/**
 * Imports a statement into the account: one transaction per `STMTTRN`, each with
 * its own `financial-transactions.create` event. A FITID the account already has
 * (deleted ones included: a line deleted on purpose stays deleted) is a duplicate;
 * `CORRECTACTION` REPLACE rewrites the transaction its `CORRECTFITID` names, DELETE
 * deletes it.
 */
const run = (context: ActionContext, content: unknown) =>
  Effect.gen(function* () {
    const statement = yield* Effect.try({
      try: () => readStatement(content as Uint8Array | string),
      catch: (error) =>
        error instanceof OfxError
          ? unprocessable(`The file is not an OFX statement we can read: ${error.message}`, { file: [error.message] }, "INVALID_OFX")
          : unprocessable("The file is not an OFX statement we can read", { file: ["could not be read as OFX"] }, "INVALID_OFX")
    })
    if (statement.accounts.length > 1) {
      return yield* Effect.fail(unprocessable(
        `The file holds statements of ${statement.accounts.length} accounts (${statement.accounts.join(", ")}): import each account's file separately`,
        { file: ["holds statements of several accounts"] },
        "OFX_SEVERAL_ACCOUNTS"
      ))
    }
    const accountId = String(context.current.id)
    const transactions = financialTransactions
    const { store } = context
    // The account's transactions with the file's FITIDs (corrected ones included).
    const known = yield* transactionsByFitid(store, accountId, statement.lines.flatMap((line) => [line.fitid, ...(line.correct_fitid ? [line.correct_fitid] : [])]))
    const find = (fitid: string) => Effect.succeed(Option.fromNullishOr(known.get(fitid)))
    let imported = 0
    let duplicates = 0
    let corrected = 0
    const skipped: Array<{ fitid: string; reason: string }> = []
    for (const line of statement.lines) {
      if (Option.isSome(yield* find(line.fitid))) {
        duplicates++
        continue
      }
      const target = line.correct_fitid && line.correct_action ? Option.getOrUndefined(yield* find(line.correct_fitid)) : undefined
      if (target && line.correct_action === "DELETE") {
        if (target.deleted_at !== null) duplicates++
        else if (isAllocated(target)) skipped.push({ fitid: line.fitid, reason: `deletes ${line.correct_fitid}, which is allocated` })
        else {
          yield* store.removeRecord(transactions, String(target.id))
          known.set(line.correct_fitid!, { ...target, deleted_at: new Date().toISOString() })
          corrected++
        }
        continue
      }
      if (target && line.correct_action === "REPLACE" && target.deleted_at === null) {
        if (isAllocated(target) && target.amount !== line.amount) {
          skipped.push({ fitid: line.fitid, reason: `replaces ${line.correct_fitid}, which is allocated, with another amount` })
          continue
        }
        yield* store.updateRecord(transactions, String(target.id), {
          ...transactionValues(line),
          correct_fitid: line.correct_fitid,
          correct_action: line.correct_action
        }, { fitid: line.fitid })
        known.delete(line.correct_fitid!)
        known.set(line.fitid, { ...target, fitid: line.fitid })
        corrected++
        continue
      }
      if (line.correct_action === "DELETE") {
        // Deleting a line never imported: nothing to do, now or on the next import.
        duplicates++
        continue
      }
      yield* store.createRecord(transactions, {
        account_id: accountId,
        source: "ofx",
        fitid: line.fitid,
        ...Object.fromEntries(Object.entries(transactionValues(line)).filter(([, value]) => value !== null)),
        ...(line.correct_fitid ? { correct_fitid: line.correct_fitid, correct_action: line.correct_action } : {})
      }, undefined, { answer: "id" })
      known.set(line.fitid, { fitid: line.fitid, deleted_at: null })
      imported++
    }
    return { account_id: accountId, imported, duplicates, corrected, skipped }
  })

export const importOfx: ResourceAction = {
  name: "import_ofx",
  method: "POST",
  path: "ofx",
  permission: "update",
  summary: "Import an OFX bank statement",
  description: "Imports an OFX statement (1.x SGML or 2.x XML, as Brazilian and US banks export it) into the account: one financial " +
    "transaction per STMTTRN, deduplicated by FITID so importing a file again adds nothing; CORRECTACTION lines replace or delete " +
    "earlier ones. Answers {imported, duplicates, corrected, skipped}. Needs financial-transactions:create too.",
  raw: {
    contentType: "application/x-ofx",
    maxBytes: MAX_OFX_BYTES,
    argument: "ofx",
    description: "The OFX file as exported by the bank (any text encoding the file declares: UTF-8, Windows-1252, Latin-1)."
  },
  importer: { format: "ofx", option: "account" },
  output: OfxImportSummary,
  successStatus: 201,
  emits: false,
  run
}
