import { Effect, Option, Schema } from "effect"
import { resourceNamed } from "../engine/registry.js"
import type { ActionContext, AnyResource, ResourceAction } from "../engine/resource.js"
import { Conflict, unprocessable } from "../errors.js"
import { decimal, formatDecimal, NonNegativeDecimal } from "../money/decimal.js"
import { candidateQuery, MatchCandidates } from "../reconciliation/candidates.js"
import { leftOf, type LineRecord, lineOf, matchLineOf, sideOf } from "../reconciliation/line.js"
import { planAutoReconcile } from "../reconciliation/auto.js"
import { MATCH_REASONS, type OpenDocument, suggest, type Suggestion } from "../reconciliation/match.js"
import type { SettlementSide } from "../reports/queries.js"
import { Uuid } from "./common.js"
import { openAmountOfRecord } from "./settlement.js"

const REASONS = MATCH_REASONS

const transactions = (): AnyResource => resourceNamed("financial-transactions")
const documentsOf = (side: SettlementSide): AnyResource => resourceNamed(side)
const keyOf = (side: SettlementSide) => (side === "receivables" ? "receivable_id" : "payable_id")

const Allocation = Schema.Struct({
  receivable_id: Schema.optionalKey(Schema.String),
  payable_id: Schema.optionalKey(Schema.String),
  amount: Schema.String
}).annotate({ identifier: "ReconcileAllocation" })

const SuggestedDocument = Schema.Struct({
  id: Schema.String,
  due_date: Schema.String,
  open_amount: Schema.String,
  party_id: Schema.NullOr(Schema.String),
  party_name: Schema.NullOr(Schema.String),
  reference_code: Schema.NullOr(Schema.String)
}).annotate({ identifier: "MatchSuggestionDocument" })

const SuggestionOutput = Schema.Struct({
  score: Schema.Number.annotate({ description: "From 0 to 1: how surely the line pays these documents" }),
  reasons: Schema.Array(Schema.Literals(REASONS)),
  allocations: Schema.Array(Allocation).annotate({ description: "What accepting it sends to POST …/reconcile, as it is" }),
  documents: Schema.Array(SuggestedDocument)
}).annotate({ identifier: "MatchSuggestion" })

export const MatchSuggestions = Schema.Struct({
  transaction_id: Schema.String,
  side: Schema.Literals(["receivables", "payables"]).annotate({ description: "Money in is matched to receivables, money out to payables" }),
  left: Schema.String.annotate({ description: "What is left of the line to allocate" }),
  data: Schema.Array(SuggestionOutput)
}).annotate({ identifier: "MatchSuggestions" })

const answerOf = (side: SettlementSide, suggestion: Suggestion, documents: ReadonlyMap<string, OpenDocument>) => ({
  score: suggestion.score,
  reasons: suggestion.reasons,
  allocations: suggestion.allocations.map((allocation) => ({ [keyOf(side)]: allocation.documentId, amount: allocation.amount })),
  documents: suggestion.allocations.map((allocation) => {
    const document = documents.get(allocation.documentId)!
    return {
      id: document.id,
      due_date: document.dueDate,
      open_amount: document.open,
      party_id: document.partyId,
      party_name: document.partyNames[0] ?? null,
      reference_code: document.referenceCode
    }
  })
})

/** The line's suggestions from the documents open now. */
const suggestionsFor = (tenantId: string, line: LineRecord) =>
  Effect.gen(function* () {
    const side = sideOf(line)
    const match = matchLineOf(line)
    const candidates = yield* MatchCandidates
    const documents = yield* candidates.open(candidateQuery(tenantId, side, [match]))
    return { side, documents: new Map(documents.map((document) => [document.id, document])), suggestions: suggest(match, documents) }
  })

const refuseSettled = (line: LineRecord) =>
  line.ignored_at !== null
    ? Effect.fail(unprocessable("The transaction is ignored", { id: ["is ignored: bring it back (ignored_at: null) first"] }, "TRANSACTION_IGNORED"))
    : line.is_reconciled
    ? Effect.fail(new Conflict({ message: "The transaction is reconciled already: undo it (DELETE …/reconcile) first", code: "ALREADY_RECONCILED" }))
    : Effect.void

const matchSuggestions: ResourceAction = {
  name: "match_suggestions",
  method: "GET",
  path: "match-suggestions",
  permission: "read",
  summary: "Suggest the documents a statement line pays",
  description: "For a transaction not yet reconciled: open receivables (money in) or payables (money out) it may settle, best first, at most 10, " +
    "each with a score from 0 to 1 and its reasons (the amount equal, or the sum of several of one party's documents; the due date near; the party's tax id " +
    "or name in the line's name or memo; a reference code, our number or PIX txid in the line). A line paying several documents is one suggestion.",
  output: MatchSuggestions,
  run: (context) =>
    Effect.gen(function* () {
      const line = yield* lineOf(context.current)
      yield* refuseSettled(line)
      const found = yield* suggestionsFor(context.principal.tenantId, line)
      return {
        transaction_id: line.id,
        side: found.side,
        left: formatDecimal(leftOf(line)),
        data: found.suggestions.map((suggestion) => answerOf(found.side, suggestion, found.documents))
      }
    })
}

const ReconcileInput = Schema.Struct({
  allocations: Schema.Array(Schema.Struct({
    receivable_id: Schema.optionalKey(Uuid.annotate({ description: "A receivable the line (money in) settles" })),
    payable_id: Schema.optionalKey(Uuid.annotate({ description: "A payable the line (money out) settles" })),
    amount: NonNegativeDecimal.annotate({ description: "How much of the line goes to it (more than zero)" })
  })).check(Schema.isMinLength(1, { message: "must have at least 1 item" }), Schema.isMaxLength(100, { message: "must have at most 100 items" }))
})

/** Each allocation checked before any is made: the document's side and existence, its open amount, the line's. */
const checkedAllocations = (context: ActionContext, line: LineRecord, input: typeof ReconcileInput.Type) =>
  Effect.gen(function* () {
    const side = sideOf(line)
    const key = keyOf(side)
    const other = keyOf(side === "receivables" ? "payables" : "receivables")
    const problems: Record<string, Array<string>> = {}
    const add = (field: string, reason: string) => (problems[field] ??= []).push(reason)
    const seen = new Set<string>()
    const planned: Array<{ documentId: string; amount: string }> = []
    let total = decimal(0)
    for (const [index, allocation] of input.allocations.entries()) {
      const documentId = allocation[key]
      if (allocation[other] !== undefined) add(`allocations.${index}.${other}`, `does not fit: this line is money ${side === "receivables" ? "in" : "out"}, which settles ${side}`)
      if (documentId === undefined) {
        add(`allocations.${index}.${key}`, "is required")
        continue
      }
      if (seen.has(documentId)) add(`allocations.${index}.${key}`, "names a document already in the list")
      seen.add(documentId)
      const amount = decimal(allocation.amount)
      if (!amount.gt(0)) add(`allocations.${index}.amount`, "must be more than zero")
      total = total.plus(amount)
      if (total.gt(leftOf(line))) add(`allocations.${index}.amount`, `takes the allocations past what the line has left (${formatDecimal(leftOf(line))})`)
      const document = yield* context.store.findById(documentsOf(side), documentId)
      if (Option.isNone(document)) {
        add(`allocations.${index}.${key}`, `does not match any ${side.slice(0, -1)}`)
        continue
      }
      const open = openAmountOfRecord(document.value)
      if (document.value.status === "cancelled" || document.value.status === "paid") add(`allocations.${index}.${key}`, `is ${String(document.value.status)}`)
      else if (amount.gt(open)) add(`allocations.${index}.amount`, `is more than is open on it (${formatDecimal(open)})`)
      planned.push({ documentId, amount: formatDecimal(amount) })
    }
    if (Object.keys(problems).length > 0) return yield* Effect.fail(unprocessable("The reconciliation cannot be made", problems, "INVALID_RECONCILIATION"))
    return { side, planned }
  })

/** Allocates the line to each document through the document's own `allocate` (its state machine, its event), then marks it reconciled. */
const applyReconciliation = (context: ActionContext, lineId: string, side: SettlementSide, planned: ReadonlyArray<{ documentId: string; amount: string }>) =>
  Effect.gen(function* () {
    for (const allocation of planned) {
      yield* context.store.runAction(documentsOf(side), "allocate", allocation.documentId, { financial_transaction_id: lineId, allocated_amount: allocation.amount })
    }
    yield* context.store.update(transactions(), lineId, { is_reconciled: true, reconciled_at: new Date().toISOString() })
    return Option.getOrThrow(yield* context.store.findById(transactions(), lineId))
  })

const reconcile: ResourceAction = {
  name: "reconcile",
  method: "POST",
  path: "reconcile",
  permission: "update",
  summary: "Reconcile a statement line with the documents it pays",
  description: "Creates every allocation in one transaction (each receivable or payable moves to paid or partial as with …/allocate, with its event) " +
    "and marks the line reconciled (is_reconciled, reconciled_at); answers the transaction. 422 naming the field for an amount over what is open on a " +
    "document or over what the line has left, a document of the wrong side or not found; 409 when the line is reconciled already. " +
    "Needs update on the documents' resource too.",
  input: ReconcileInput,
  example: { allocations: [{ receivable_id: "6f1c2b9e-3d47-4e8a-9b2f-5a0c7d1e4f36", amount: "450.00" }, { receivable_id: "0b9e4c1d-7a2f-4e6b-8c3d-9f1a2b3c4d5e", amount: "450.00" }] },
  output: Schema.suspend(() => transactions().record),
  run: (context, body) =>
    Effect.gen(function* () {
      const line = yield* lineOf(context.current)
      yield* refuseSettled(line)
      const { side, planned } = yield* checkedAllocations(context, line, body as typeof ReconcileInput.Type)
      return yield* applyReconciliation(context, line.id, side, planned)
    })
}

const unreconcile: ResourceAction = {
  name: "unreconcile",
  method: "DELETE",
  path: "reconcile",
  permission: "update",
  summary: "Undo a statement line's reconciliation",
  description: "Removes every allocation of the line (each document goes back to partial or pending, with its event) and marks it not reconciled; " +
    "answers the transaction.",
  output: Schema.suspend(() => transactions().record),
  run: (context) =>
    Effect.gen(function* () {
      const candidates = yield* MatchCandidates
      for (const allocation of yield* candidates.allocationsOf(context.principal.tenantId, String(context.current.id))) {
        yield* context.store.runAction(documentsOf(allocation.side), "unallocate", allocation.documentId, undefined, { allocationId: allocation.allocationId })
      }
      yield* context.store.update(transactions(), String(context.current.id), { is_reconciled: false, reconciled_at: null })
      return Option.getOrThrow(yield* context.store.findById(transactions(), String(context.current.id)))
    })
}

/** The statement-line actions of financial transactions. */
export const reconciliationActions: ReadonlyArray<ResourceAction> = [matchSuggestions, reconcile, unreconcile]

/** At most this many lines of an account per automatic run; `more` says to call again. */
export const AUTO_RECONCILE_LINES = 1000

const AutoReconcileInput = Schema.Struct({
  min_score: Schema.optionalKey(Schema.Number.check(Schema.isBetween({ minimum: 0.5, maximum: 1 }, { message: "must be from 0.5 to 1" })).annotate({
    description: "Apply suggestions scoring at least this (default 0.95)"
  })),
  dry_run: Schema.optionalKey(Schema.Boolean.annotate({ description: "true: answer what would be matched and change nothing (default false)" }))
})

const Matched = Schema.Struct({ transaction_id: Schema.String, score: Schema.Number, reasons: Schema.Array(Schema.Literals(REASONS)), allocations: Schema.Array(Allocation) })
const Left = Schema.Struct({
  transaction_id: Schema.String,
  reason: Schema.Literals(["no_suggestion", "below_threshold", "ambiguous"]),
  best_score: Schema.NullOr(Schema.Number)
})

export const AutoReconcileResult = Schema.Struct({
  account_id: Schema.String,
  dry_run: Schema.Boolean,
  min_score: Schema.Number,
  matched: Schema.Array(Matched),
  left: Schema.Array(Left),
  more: Schema.Boolean.annotate({ description: `More than ${AUTO_RECONCILE_LINES} lines were waiting: call again for the next` })
}).annotate({ identifier: "AutoReconcileResult" })

export const autoReconcile: ResourceAction = {
  name: "auto_reconcile",
  method: "POST",
  path: "auto-reconcile",
  permission: "update",
  summary: "Reconcile an account's statement lines automatically",
  description: `Takes the account's lines not yet reconciled (the ${AUTO_RECONCILE_LINES} last posted at most, matched oldest first) and applies each suggestion scoring at least ` +
    "min_score that is the only one at that level for its line, as POST …/reconcile would; answers what it matched and what it left (and why). " +
    "A document matched by one line is no longer open to the next. dry_run answers the same and changes nothing.",
  input: AutoReconcileInput,
  example: { min_score: 0.95, dry_run: true },
  output: AutoReconcileResult,
  emits: false,
  run: (context, body) =>
    Effect.gen(function* () {
      const input = body as typeof AutoReconcileInput.Type
      const minScore = input.min_score ?? 0.95
      const dryRun = input.dry_run ?? false
      const accountId = String(context.current.id)
      const rows = yield* context.store.findMany(transactions(), {
        kind: "group",
        logic: "and",
        conditions: [
          { kind: "condition", field: "account_id", op: "eq", value: accountId },
          { kind: "condition", field: "is_reconciled", op: "eq", value: false }
        ]
      }, { limit: AUTO_RECONCILE_LINES + 1 })
      const lines = (yield* Effect.forEach(rows.slice(0, AUTO_RECONCILE_LINES), lineOf)).filter((line) => line.ignored_at === null && leftOf(line).gt(0))
      const candidates = yield* MatchCandidates
      const matched: Array<typeof Matched.Type> = []
      const left: Array<typeof Left.Type> = []
      for (const side of ["receivables", "payables"] as const) {
        const mine = lines.filter((line) => sideOf(line) === side).map(matchLineOf)
        if (mine.length === 0) continue
        const plan = planAutoReconcile(mine, yield* candidates.open(candidateQuery(context.principal.tenantId, side, mine)), minScore)
        for (const { line, suggestion } of plan.matched) {
          const body = { allocations: suggestion.allocations.map((allocation) => ({ [keyOf(side)]: allocation.documentId, amount: allocation.amount })) }
          // Each line as POST …/reconcile reconciles it: the line locked, its checks, its event.
          if (!dryRun) yield* context.store.runAction(transactions(), "reconcile", line.id, body)
          matched.push({ transaction_id: line.id, score: suggestion.score, reasons: suggestion.reasons, allocations: body.allocations })
        }
        left.push(...plan.left.map((entry) => ({ transaction_id: entry.line.id, reason: entry.reason, best_score: entry.best })))
      }
      return { account_id: accountId, dry_run: dryRun, min_score: minScore, matched, left, more: rows.length > AUTO_RECONCILE_LINES }
    })
}
