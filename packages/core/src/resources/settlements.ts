import { Effect, Option, Result, Schema } from "effect"
import { randomUUID } from "node:crypto"
import { paymentMethods } from "../catalogs/payment-methods.js"
import { children } from "../engine/children.js"
import { type AnySchema, column, expression, type Fields, id, inputOnly, type ResourceRef, stored, timestamp, timestamps } from "../engine/field.js"
import {
  type ActionContext,
  type AnyResource,
  type Draft,
  defineResource,
  type NewRecord,
  type ResourceAction,
  type Row,
  type StatusMachine,
  type WriteContext
} from "../engine/resource.js"
import { invalid, NotFound, unprocessable } from "../errors.js"
import { decimal, formatDecimal, NonNegativeDecimal } from "../money/decimal.js"
import { date, freeText, metadata, money, Problems, reference, Text, text, Uuid } from "./common.js"
import { financialAccounts } from "./financial-accounts.js"
import { financialCategories } from "./financial-categories.js"
import { financialTransactions } from "./financial-transactions.js"
import { dueDates, InstallmentPlan, InstallmentPosition, MAX_INSTALLMENT_POSITION, planProblem, splitToCents } from "./installments.js"
import {
  allocate,
  amountDue,
  cancel,
  EDITABLE,
  type Refusal,
  type Settlement,
  SETTLEMENT_STATUSES,
  STATUS_SQL,
  storedStatus,
  unallocate
} from "./settlement.js"

/**
 * Payables and receivables are one machine (spec "States and transitions") over
 * money going out or coming in: the same fields, installments, allocations against
 * financial transactions, cancelling. This module declares both from one description.
 */
export interface SettlementSpec {
  readonly name: string
  readonly singular: string
  readonly title: string
  readonly description: string
  readonly notFoundCode: string
  readonly table: string
  readonly allocationsTable: string
  /** The allocation's key to its record: `payable_id`. */
  readonly parentKey: string
  /** Which transactions settle it: outgoing money (negative amounts) for payables, incoming for receivables. */
  readonly direction: "outgoing" | "incoming"
  /** The fields only one of them has (the supplier, the purchase invoice; the customer, the sales order). */
  readonly own: Fields
  /** Fields of `own` the server sets; a change of `amount` on a record linked this way is refused (the link's total depends on it). */
  readonly lockedBy?: string
  readonly example: Row
  /** Actions only one of them has (a receivable's PIX charge). */
  readonly actions?: ReadonlyArray<ResourceAction>
}

const allocationFields = (parentKey: string) => ({
  id: id(),
  [parentKey]: stored("uuid", Schema.String),
  financial_transaction_id: stored("uuid", Schema.String),
  allocated_amount: stored("numeric", Schema.String),
  notes: stored("text", Schema.String, { nullable: true }),
  created_at: timestamp(),
  updated_at: timestamp()
})

const AllocationInput = Schema.Struct({
  financial_transaction_id: Uuid.annotate({ description: "The financial transaction that settles it (of this tenant)" }),
  // Described on the encoded side (what JSON Schemas show), inline rather than as the shared NonNegativeDecimal.
  allocated_amount: NonNegativeDecimal.pipe(
    Schema.annotateEncoded({ description: "How much of the transaction goes to this record (more than zero)", identifier: undefined })
  ),
  notes: Schema.optionalKey(Schema.NullOr(Text(500)))
})

/** The settlement of a stored record (with its allocations). */
const settlementOf = (record: Row): Settlement => ({
  due: amountDue(record as { amount: unknown }),
  allocated: ((record.allocations as ReadonlyArray<Row> | undefined) ?? []).reduce((sum, allocation) => sum.plus(String(allocation.allocated_amount)), decimal(0)),
  cancelled: record.status === "cancelled",
  dueDate: String(record.due_date)
})

/**
 * A record created alone may say which installment of another system's plan it is
 * (an integrator moving open installments): both numbers, 1 ≤ number ≤ count.
 */
const installmentProblems = (input: Row, problems: Problems) => {
  const number = input.installment_number
  const count = input.installment_count
  const given = (value: unknown): value is number => typeof value === "number"
  if (given(number) && !given(count)) problems.add("installment_count", "is required with installment_number")
  else if (given(count) && !given(number)) problems.add("installment_number", "is required with installment_count")
  else if (given(number) && given(count) && number > count) problems.add("installment_number", `must be at most installment_count (${count})`)
}

const fail = (refusal: Refusal, message: string) => Effect.fail(unprocessable(message, { [refusal.field]: [refusal.reason] }, refusal.code))

export const defineSettlement = (spec: SettlementSpec) => {
  const sign = spec.direction === "outgoing" ? "negative" : "positive"
  const allocations = allocationFields(spec.parentKey)
  const transactions = (): AnyResource => financialTransactions

  /** The transaction, locked, then read again: its allocated total as of after the lock (a concurrent allocation committed). */
  const lockedTransaction = (context: ActionContext, id: string) =>
    Effect.gen(function* () {
      const missing = () =>
        Effect.fail(unprocessable("The financial transaction does not exist", { financial_transaction_id: ["does not match any financial transaction"] }, "REFERENCE_NOT_FOUND"))
      if (Option.isNone(yield* context.store.findById(transactions(), id, { forUpdate: true }))) return yield* missing()
      // In READ COMMITTED the locking statement's snapshot predates the lock; a new statement sees what committed meanwhile.
      const fresh = yield* context.store.findById(transactions(), id)
      return Option.isSome(fresh) ? fresh.value : yield* missing()
    })

  /** After an allocation change: the record's status and paid date, and the transaction's reconciliation. */
  const settle = (context: ActionContext, settlement: Settlement, transactionId: string) =>
    Effect.gen(function* () {
      const status = storedStatus(settlement)
      const after = Option.getOrThrow(yield* context.store.findById(context.resource, String(context.current.id)))
      const postedDates = yield* Effect.forEach(
        (after.allocations as ReadonlyArray<Row>).map((allocation) => String(allocation.financial_transaction_id)),
        (id) => Effect.map(context.store.findById(transactions(), id, { withDeleted: true }), (row) => Option.getOrUndefined(row)?.posted_at as string | undefined)
      )
      const latest = postedDates.filter((value): value is string => value !== undefined).sort().at(-1) ?? null
      yield* context.store.update(context.resource, String(context.current.id), { status, paid_at: status === "paid" ? latest : null })
      const transaction = Option.getOrThrow(yield* context.store.findById(transactions(), transactionId))
      const full = decimal(String(transaction.allocated_total)).eq(decimal(String(transaction.amount)).abs())
      if (full !== transaction.is_reconciled) {
        yield* context.store.update(transactions(), transactionId, { is_reconciled: full, reconciled_at: full ? new Date().toISOString() : null })
      }
    })

  const allocateAction: ResourceAction = {
    name: "allocate",
    method: "POST",
    path: "allocate",
    permission: "update",
    summary: `Allocate a financial transaction to a ${spec.singular}`,
    description: `Settles the ${spec.singular} (all or part) with ${spec.direction} money: a financial transaction whose amount is ${sign}. ` +
      "Answers the allocation (201). Fully covered: paid (paid_at = the latest allocated transaction's posted_at); partly: partial. " +
      "422 beyond what is left to settle or what the transaction has left, for a cancelled record, a transaction of the wrong sign, ignored or missing.",
    input: AllocationInput,
    example: { financial_transaction_id: "6f1c2b9e-3d47-4e8a-9b2f-5a0c7d1e4f36", allocated_amount: "150.00", notes: "Boleto paid on time" },
    output: Schema.suspend((): AnySchema => allocationRecord),
    successStatus: 201,
    run: (context, body) =>
      Effect.gen(function* () {
        const input = body as typeof AllocationInput.Type
        const amount = decimal(input.allocated_amount)
        const current = settlementOf(context.current)
        if (current.cancelled) return yield* fail({ field: "financial_transaction_id", reason: `cannot be allocated to a cancelled ${spec.singular}`, code: "SETTLEMENT_CANCELLED" }, `This ${spec.singular} is cancelled`)
        const transaction = yield* lockedTransaction(context, input.financial_transaction_id)
        const transactionAmount = decimal(String(transaction.amount))
        const wrongSign = spec.direction === "outgoing" ? !transactionAmount.lt(0) : !transactionAmount.gt(0)
        if (wrongSign) {
          return yield* fail(
            { field: "financial_transaction_id", reason: `is ${spec.direction === "outgoing" ? "incoming" : "outgoing"} money; a ${spec.singular} is settled by ${spec.direction} money (a ${sign} amount)`, code: "WRONG_DIRECTION" },
            "The transaction moves money the other way"
          )
        }
        if (transaction.ignored_at !== null) {
          return yield* fail({ field: "financial_transaction_id", reason: "is ignored", code: "TRANSACTION_IGNORED" }, "The transaction is ignored")
        }
        const left = transactionAmount.abs().minus(String(transaction.allocated_total))
        if (amount.gt(left)) {
          return yield* fail(
            { field: "allocated_amount", reason: `is more than the transaction has left to allocate (${formatDecimal(left)})`, code: "OVER_ALLOCATION" },
            "The transaction does not have that much left"
          )
        }
        const next = allocate(current, amount)
        if (Result.isFailure(next)) return yield* fail(next.failure, `The allocation cannot be made: ${next.failure.field} ${next.failure.reason}`)
        const allocationId = randomUUID()
        yield* context.store.insertChild(collection(context.resource), String(context.current.id), {
          id: allocationId,
          financial_transaction_id: input.financial_transaction_id,
          allocated_amount: formatDecimal(amount),
          notes: input.notes ?? null
        })
        yield* settle(context, next.success, input.financial_transaction_id)
        const after = Option.getOrThrow(yield* context.store.findById(context.resource, String(context.current.id)))
        return (after.allocations as ReadonlyArray<Row>).find((allocation) => allocation.id === allocationId)
      })
  }

  const unallocateAction: ResourceAction = {
    name: "unallocate",
    method: "DELETE",
    path: "allocate/:allocationId",
    permission: "update",
    summary: `Remove an allocation of a ${spec.singular}`,
    description: `Removes the allocation; the ${spec.singular} goes back to partial, or to pending (overdue when its due date has passed), ` +
      "and the transaction is no longer reconciled.",
    run: (context) =>
      Effect.gen(function* () {
        const allocation = ((context.current.allocations as ReadonlyArray<Row>) ?? []).find((candidate) => candidate.id === context.params.allocationId)
        if (!allocation) return yield* Effect.fail(new NotFound({ message: "Allocation not found", code: "ALLOCATION_NOT_FOUND" }))
        const transactionId = String(allocation.financial_transaction_id)
        yield* context.store.findById(transactions(), transactionId, { forUpdate: true, withDeleted: true })
        yield* context.store.removeChild(collection(context.resource), String(context.current.id), String(allocation.id))
        yield* settle(context, unallocate(settlementOf(context.current), decimal(String(allocation.allocated_amount))), transactionId)
        return undefined
      })
  }

  const cancelAction: ResourceAction = {
    name: "cancel",
    method: "POST",
    path: "cancel",
    permission: "update",
    summary: `Cancel a ${spec.singular}`,
    description: `Cancels a pending or overdue ${spec.singular} and answers it; one with allocations (partial, paid) has them removed first. ` +
      "A cancelled record takes no changes, not even an empty PATCH.",
    output: Schema.suspend((): AnySchema => resource.record),
    run: (context) =>
      Effect.gen(function* () {
        const next = cancel(settlementOf(context.current))
        if (Result.isFailure(next)) return yield* fail(next.failure, `This ${spec.singular} cannot be cancelled: ${next.failure.field} ${next.failure.reason}`)
        yield* context.store.update(context.resource, String(context.current.id), { status: "cancelled" })
        return Option.getOrThrow(yield* context.store.findById(context.resource, String(context.current.id)))
      })
  }

  const collection = (owner: AnyResource) => owner.children.find((candidate) => candidate.name === "allocations")!

  /** Amounts that settle nothing are refused; a record linked to a document keeps the amount the document's plan gave it. */
  const rules = (draft: Draft) =>
    Effect.gen(function* () {
      const problems = new Problems()
      if (!decimal(String(draft.values.amount ?? "0")).gt(0)) problems.add("amount", "must be more than zero")
      else if (!amountDue(draft.values as { amount: unknown }).gt(0)) problems.add("discount_amount", "leaves nothing to settle: it must be less than amount plus surcharge_amount")
      const link = spec.lockedBy
      if (link && draft.operation === "update" && draft.current?.[link] && draft.input.amount !== undefined && draft.values.amount !== draft.current.amount) {
        problems.add("amount", `is set by the ${link.replace(/_id$/, "").replace(/_/g, " ")}'s plan of ${spec.name}: change it there`)
      }
      if (draft.operation === "create") installmentProblems(draft.input, problems)
      if (problems.any) return yield* problems.fail(`The ${spec.singular} cannot be saved`)
      return draft
    })

  /** `installments` turns one create into the group: amounts split to the cent, the remainder on the last one. */
  const createMany = (input: Row, _context: WriteContext) =>
    Effect.gen(function* () {
      const plan = input.installments as InstallmentPlan | undefined
      if (plan === undefined) {
        if (input.due_date === undefined || input.due_date === null) {
          return yield* Effect.fail(invalid("Invalid request body: due_date is required (or send installments)", "INVALID_BODY", { due_date: ["is required"] }))
        }
        return undefined
      }
      const problems = new Problems()
      const problem = planProblem(plan)
      if (problem) problems.add("installments", problem)
      if (input.due_date !== undefined && input.due_date !== null) problems.add("due_date", "is set by installments.first_due_date: send one or the other")
      for (const name of ["installment_number", "installment_count"]) {
        if (input[name] !== undefined && input[name] !== null) problems.add(name, "is set by installments: send one or the other")
      }
      if (problems.any) return yield* problems.fail("The installments cannot be created", "INVALID_INSTALLMENTS")
      const { installments: _plan, ...rest } = input
      const amounts = splitToCents(String(rest.amount), plan.count)
      const split = (name: string) => (rest[name] === undefined || rest[name] === null ? undefined : splitToCents(String(rest[name]), plan.count))
      const discounts = split("discount_amount")
      const surcharges = split("surcharge_amount")
      const dates = dueDates(plan)
      const group = randomUUID()
      return dates.map((due, index): NewRecord => ({
        input: {
          ...rest,
          amount: amounts[index],
          due_date: due,
          ...(discounts ? { discount_amount: discounts[index] } : {}),
          ...(surcharges ? { surcharge_amount: surcharges[index] } : {})
        },
        values: { installment_group_id: group, installment_number: index + 1, installment_count: plan.count }
      }))
    })

  const status: StatusMachine = {
    field: "status",
    initial: "pending",
    states: Object.fromEntries(Object.entries(EDITABLE).map(([state, editable]) => [state, { editable }])),
    derive: (draft) => storedStatus(settlementOf({ ...draft.values, allocations: draft.current?.allocations ?? [] }))
  }

  const resource = defineResource({
    name: spec.name,
    singular: spec.singular,
    title: spec.title,
    description: spec.description,
    notFoundCode: spec.notFoundCode,
    events: true,
    table: spec.table,
    fields: {
      id: id(),
      record_number: stored("integer", Schema.Int, { filter: { sortable: true } }),
      ...spec.own,
      financial_account_id: reference((): ResourceRef => financialAccounts, { description: "The financial account it is expected to move" }),
      payment_method_id: reference((): ResourceRef => paymentMethods, { description: "A payment method available in the tenant's country" }),
      financial_category_id: reference((): ResourceRef => financialCategories),
      reference_code: text(100, { nullable: true, filter: { sortable: true } }),
      amount: money({ required: true, filter: { sortable: true } }),
      discount_amount: money({}),
      surcharge_amount: money({ description: "Interest, fines and fees added to what is due" }),
      status: column({
        type: "text",
        output: Schema.Literals(["pending", "overdue", "paid", "partial", "cancelled"]),
        read: Schema.Literals(SETTLEMENT_STATUSES),
        input: false,
        select: STATUS_SQL,
        filter: { sortable: true, description: "pending, overdue (pending past its due date in the tenant's time zone), paid, partial or cancelled" },
        // Stored as pending: overdue is how a pending record reads once its due date has passed.
        normalize: (value) => (value === "overdue" ? "pending" : value)
      }),
      issue_date: date({ nullable: true, filter: { sortable: true } }),
      due_date: date({ filter: { sortable: true }, description: "Required unless installments is sent" }),
      paid_at: date({ nullable: true, input: false, filter: { sortable: true }, description: "When it was fully settled: the latest allocated transaction's posted_at" }),
      installment_group_id: column({ type: "uuid", output: Schema.String, nullable: true, input: false, filter: true }),
      installment_number: column({
        type: "integer",
        output: Schema.Int,
        inputSchema: InstallmentPosition,
        nullable: true,
        input: "create",
        filter: { sortable: true },
        description: `Which installment of installment_count this is (1 to ${MAX_INSTALLMENT_POSITION}); set by the server when installments is sent`
      }),
      installment_count: column({
        type: "integer",
        output: Schema.Int,
        inputSchema: InstallmentPosition,
        nullable: true,
        input: "create",
        description: `How many installments the group has (1 to ${MAX_INSTALLMENT_POSITION}); send it with installment_number`
      }),
      installments: inputOnly(InstallmentPlan, { on: "create" }),
      description: freeText(500, { filter: true }),
      notes: freeText(2000, {}),
      allocated_total: expression({
        sql: `coalesce((SELECT sum(a.allocated_amount) FROM ${spec.allocationsTable} a WHERE a.tenant_id = r.tenant_id AND a.${spec.parentKey} = r.id), 0)::numeric(20, 6)`,
        type: "numeric",
        output: Schema.String,
        description: "The sum of its allocations"
      }),
      allocations: children({
        table: spec.allocationsTable,
        parentKey: spec.parentKey,
        fields: allocations,
        identifier: `${spec.title.replace(/\s/g, "")}Allocation`,
        maxItems: 1000,
        writable: false,
        description: `Financial transactions settling it (POST /${spec.name}/{id}/allocate)`
      }),
      metadata: metadata(),
      ...timestamps()
    },
    defaultSort: { field: "due_date", order: "asc" },
    search: { payload: true },
    writes: { example: spec.example },
    numbering: { field: "record_number" },
    status,
    rules,
    createMany,
    actions: [allocateAction, unallocateAction, cancelAction, ...(spec.actions ?? [])],
    beforeRemove: ({ current }) =>
      ((current.allocations as ReadonlyArray<Row> | undefined) ?? []).length === 0
        ? Effect.void
        : Effect.fail(unprocessable(`This ${spec.singular} has allocations: remove them before deleting it`, { id: ["has allocations"] }, "HAS_ALLOCATIONS"))
  })

  // The allocation as answered: the element of the record's `allocations`.
  const allocationRecord = (resource.fields.allocations.output as Schema.$Array<AnySchema>).value
  return resource
}
