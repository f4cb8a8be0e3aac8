import type BigNumber from "bignumber.js"
import { Result } from "effect"
import type { Editable } from "../engine/resource.js"
import { decimal, formatDecimal } from "../money/decimal.js"

/**
 * The state machine of payables and receivables (spec "States and transitions"),
 * as pure functions over a settlement: what is due, what is allocated, whether it
 * was cancelled, and its due date. The SQL read expression and the actions both
 * follow these functions; every row of the spec's tables has a unit test.
 */

export type SettlementStatus = "pending" | "overdue" | "paid" | "partial" | "cancelled"

/** The status a row stores: `overdue` is never stored, only read (it depends on the day). */
export type StoredStatus = Exclude<SettlementStatus, "overdue">

export const SETTLEMENT_STATUSES: ReadonlyArray<SettlementStatus> = ["pending", "overdue", "paid", "partial", "cancelled"]

export interface Settlement {
  /** What settles it: amount − discount_amount + surcharge_amount. */
  readonly due: BigNumber
  /** The sum of its allocations. */
  readonly allocated: BigNumber
  readonly cancelled: boolean
  /** `YYYY-MM-DD`. */
  readonly dueDate: string
}

/** Spec: paid and partial records take only these fields on PATCH. */
export const SETTLED_EDITABLE: ReadonlyArray<string> = ["notes", "financial_category_id", "metadata"]

/** Spec table "Editable fields on PATCH": all accepted fields, three fields, or none (not even `{}`). */
export const EDITABLE: Readonly<Record<SettlementStatus, Editable>> = {
  pending: "all",
  overdue: "all",
  paid: SETTLED_EDITABLE,
  partial: SETTLED_EDITABLE,
  cancelled: "none"
}

/** The amount that settles a record. */
export const amountDue = (values: { readonly amount: unknown; readonly discount_amount?: unknown; readonly surcharge_amount?: unknown }): BigNumber =>
  decimal(String(values.amount ?? "0")).minus(String(values.discount_amount ?? "0")).plus(String(values.surcharge_amount ?? "0"))

/** What is open on a stored receivable or payable, read from its record: what settles it less its `allocated_total`. */
export const openAmountOfRecord = (record: Readonly<Record<string, unknown>>): BigNumber =>
  amountDue({ amount: record.amount, discount_amount: record.discount_amount, surcharge_amount: record.surcharge_amount }).minus(String(record.allocated_total ?? "0"))

/** What its allocations say, the day aside: cancelled stays; nothing allocated is pending; all of it paid; some partial. */
export const storedStatus = (settlement: Settlement): StoredStatus => {
  if (settlement.cancelled) return "cancelled"
  if (settlement.allocated.isZero()) return "pending"
  return settlement.allocated.gte(settlement.due) ? "paid" : "partial"
}

/** A pending record whose due date has passed (in the tenant's time zone: `today`) is overdue; due today is not yet. */
export const statusOn = (stored: StoredStatus, dueDate: string, today: string): SettlementStatus =>
  stored === "pending" && dueDate < today ? "overdue" : stored

/** The status as read on `today`. */
export const statusOf = (settlement: Settlement, today: string): SettlementStatus => statusOn(storedStatus(settlement), settlement.dueDate, today)

/**
 * The same rule over a row (alias `r`): read, never stored, so a list filtered by
 * `status=overdue` is right on the day a due date passes, in the tenant's time zone.
 */
export const STATUS_SQL =
  "(CASE WHEN r.status = 'pending' AND r.due_date < (SELECT (now() AT TIME ZONE t.time_zone)::date FROM tenants t WHERE t.id = r.tenant_id) THEN 'overdue' ELSE r.status END)"

/** Why an operation is refused: the field it is about and the reason (a 422 naming it). */
export interface Refusal {
  readonly field: string
  readonly reason: string
  readonly code: string
}

const refuse = (field: string, reason: string, code: string) => Result.fail<Refusal>({ field, reason, code })

/** What is left to settle. */
export const openAmount = (settlement: Settlement): BigNumber => atLeastZero(settlement.due.minus(settlement.allocated))

const atLeastZero = (value: BigNumber) => (value.isNegative() ? decimal(0) : value)

/** An allocation of `amount`: never on a cancelled record, never beyond what is left to settle. */
export const allocate = (settlement: Settlement, amount: BigNumber): Result.Result<Settlement, Refusal> => {
  if (settlement.cancelled) return refuse("financial_transaction_id", "cannot be allocated to a cancelled record", "SETTLEMENT_CANCELLED")
  if (!amount.gt(0)) return refuse("allocated_amount", "must be more than zero", "VALIDATION_FAILED")
  const open = openAmount(settlement)
  if (amount.gt(open)) return refuse("allocated_amount", `is more than what is left to settle (${formatDecimal(open)})`, "OVER_ALLOCATION")
  return Result.succeed({ ...settlement, allocated: settlement.allocated.plus(amount) })
}

/** An allocation removed: the status is recalculated from what remains (spec: paid or partial → pending, overdue or partial). */
export const unallocate = (settlement: Settlement, amount: BigNumber): Settlement => ({
  ...settlement,
  allocated: atLeastZero(settlement.allocated.minus(amount))
})

/** Cancelling: only from pending or overdue (a record with allocations has them removed first). */
export const cancel = (settlement: Settlement): Result.Result<Settlement, Refusal> => {
  const status = storedStatus(settlement)
  if (status === "cancelled") return refuse("status", "is already cancelled", "ALREADY_CANCELLED")
  if (status === "paid" || status === "partial") {
    return refuse("status", `is ${status}: remove its allocations before cancelling`, "HAS_ALLOCATIONS")
  }
  return Result.succeed({ ...settlement, cancelled: true })
}

/** Of the fields a PATCH sends, those the status refuses (spec: 422 naming each). `{}` on a cancelled record is refused as a whole. */
export const refusedFields = (status: SettlementStatus, sent: ReadonlyArray<string>): ReadonlyArray<string> | "all" => {
  const editable = EDITABLE[status]
  if (editable === "all") return []
  if (editable === "none") return "all"
  return sent.filter((name) => !editable.includes(name))
}
