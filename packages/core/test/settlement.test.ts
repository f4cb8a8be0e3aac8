import { describe, expect, it } from "@effect/vitest"
import { Result, Schema } from "effect"
import {
  addMonths,
  allocate,
  cancel,
  decimal,
  dueDates,
  EDITABLE,
  planProblem,
  refusedFields,
  type Settlement,
  splitToCents,
  statusOf,
  storedStatus,
  unallocate
} from "../src/index.js"

const DUE = "2024-03-10"
const BEFORE = "2024-03-09"
const ON = "2024-03-10"
const AFTER = "2024-03-11"

const settlement = (allocated: string, options: { cancelled?: boolean; due?: string } = {}): Settlement => ({
  due: decimal(options.due ?? "100"),
  allocated: decimal(allocated),
  cancelled: options.cancelled ?? false,
  dueDate: DUE
})

const right = <A, E>(result: Result.Result<A, E>): A => {
  if (Result.isFailure(result)) throw new Error(`expected Success, got ${JSON.stringify(result.failure)}`)
  return result.success
}

describe("the payable state machine (spec \"States and transitions\")", () => {
  describe("status by settlement and day", () => {
    it.each([
      ["nothing allocated, due in the future", "0", BEFORE, "pending"],
      ["nothing allocated, due today (not yet late)", "0", ON, "pending"],
      ["nothing allocated, due date passed", "0", AFTER, "overdue"],
      ["some allocated, due in the future", "40", BEFORE, "partial"],
      ["some allocated, due date passed: still partial", "40", AFTER, "partial"],
      ["all allocated", "100", BEFORE, "paid"],
      ["all allocated, due date passed", "100", AFTER, "paid"]
    ] as const)("%s → %s", (_, allocated, today, expected) => {
      expect(statusOf(settlement(allocated), today)).toBe(expected)
    })

    it("cancelled stays cancelled whatever the day", () => {
      expect(statusOf(settlement("0", { cancelled: true }), BEFORE)).toBe("cancelled")
      expect(statusOf(settlement("0", { cancelled: true }), AFTER)).toBe("cancelled")
    })

    it("never stores overdue: it is read from the day", () => {
      expect(storedStatus(settlement("0"))).toBe("pending")
    })
  })

  describe("table \"Editable fields on PATCH\"", () => {
    it("pending, overdue: all accepted fields", () => {
      expect(EDITABLE.pending).toBe("all")
      expect(EDITABLE.overdue).toBe("all")
      expect(refusedFields("pending", ["amount", "due_date", "notes"])).toEqual([])
      expect(refusedFields("overdue", ["amount", "supplier_id"])).toEqual([])
    })

    it.each(["paid", "partial"] as const)("%s: only notes, financial_category_id, metadata; each other field named", (status) => {
      expect(refusedFields(status, ["notes", "financial_category_id", "metadata"])).toEqual([])
      expect(refusedFields(status, ["notes", "amount", "due_date"])).toEqual(["amount", "due_date"])
    })

    it("cancelled: none, not even an empty body", () => {
      expect(refusedFields("cancelled", [])).toBe("all")
      expect(refusedFields("cancelled", ["notes"])).toBe("all")
    })
  })

  describe("table of transitions", () => {
    it("paid → allocation removed, due date not passed → pending (full editing again)", () => {
      const paid = right(allocate(settlement("0"), decimal("100")))
      expect(statusOf(paid, BEFORE)).toBe("paid")
      const undone = unallocate(paid, decimal("100"))
      expect(statusOf(undone, BEFORE)).toBe("pending")
      expect(EDITABLE[statusOf(undone, BEFORE)]).toBe("all")
    })

    it("paid → allocation removed, due date passed → overdue", () => {
      expect(statusOf(unallocate(settlement("100"), decimal("100")), AFTER)).toBe("overdue")
    })

    it("partial → allocation removed, nothing left, due date not passed → pending; passed → overdue", () => {
      const partial = settlement("30")
      expect(statusOf(unallocate(partial, decimal("30")), BEFORE)).toBe("pending")
      expect(statusOf(unallocate(partial, decimal("30")), AFTER)).toBe("overdue")
    })

    it("partial → a settlement removed, due date in the future, an allocated amount remains → partial (stays restricted)", () => {
      const after = unallocate(settlement("70"), decimal("30"))
      expect(statusOf(after, BEFORE)).toBe("partial")
      expect(EDITABLE[statusOf(after, BEFORE)]).not.toBe("all")
    })

    it("paid → one of two allocations removed → partial", () => {
      expect(statusOf(unallocate(settlement("100"), decimal("40")), BEFORE)).toBe("partial")
    })

    it("pending → allocate part → partial → allocate the rest → paid; overdue → allocate part → partial", () => {
      const partial = right(allocate(settlement("0"), decimal("40")))
      expect(statusOf(partial, BEFORE)).toBe("partial")
      expect(statusOf(right(allocate(partial, decimal("60"))), BEFORE)).toBe("paid")
      expect(statusOf(right(allocate(settlement("0"), decimal("10"))), AFTER)).toBe("partial")
    })

    it("refuses allocating beyond what is left, nothing, or to a cancelled record", () => {
      expect(allocate(settlement("40"), decimal("60.000001"))).toEqual(Result.fail(expect.objectContaining({ field: "allocated_amount", code: "OVER_ALLOCATION" })))
      expect(allocate(settlement("0"), decimal("0"))).toEqual(Result.fail(expect.objectContaining({ field: "allocated_amount" })))
      expect(allocate(settlement("0", { cancelled: true }), decimal("1"))).toEqual(Result.fail(expect.objectContaining({ code: "SETTLEMENT_CANCELLED" })))
    })

    it("cancels from pending or overdue only", () => {
      expect(right(cancel(settlement("0"))).cancelled).toBe(true)
      expect(cancel(settlement("40"))).toEqual(Result.fail(expect.objectContaining({ code: "HAS_ALLOCATIONS" })))
      expect(cancel(settlement("100"))).toEqual(Result.fail(expect.objectContaining({ code: "HAS_ALLOCATIONS" })))
      expect(cancel(settlement("0", { cancelled: true }))).toEqual(Result.fail(expect.objectContaining({ code: "ALREADY_CANCELLED" })))
    })
  })
})

describe("installments", () => {
  it("split to the cent with the remainder on the last one", () => {
    expect(splitToCents("100", 3)).toEqual(["33.330000", "33.330000", "33.340000"])
    expect(splitToCents("1000.01", 4)).toEqual(["250.000000", "250.000000", "250.000000", "250.010000"])
    expect(splitToCents("0.05", 3)).toEqual(["0.010000", "0.010000", "0.030000"])
    expect(splitToCents("10.123456", 2)).toEqual(["5.060000", "5.063456"])
  })

  it.prop("the parts always add up to the total", { cents: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 10_000_000 })), count: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 120 })) }, ({ cents, count }) => {
    const total = decimal(cents).dividedBy(100)
    const parts = splitToCents(total, count)
    expect(parts.reduce((sum, part) => sum.plus(part), decimal(0)).eq(total)).toBe(true)
    expect(new Set(parts.slice(0, -1)).size).toBeLessThanOrEqual(1)
  })

  it("spaces due dates by days or by months, keeping the day or taking the month's last", () => {
    expect(dueDates({ count: 3, first_due_date: "2024-01-31", interval_days: 30 })).toEqual(["2024-01-31", "2024-03-01", "2024-03-31"])
    expect(dueDates({ count: 4, first_due_date: "2024-01-31", interval_months: 1 })).toEqual(["2024-01-31", "2024-02-29", "2024-03-31", "2024-04-30"])
    expect(addMonths("2023-11-15", 3)).toBe("2024-02-15")
    expect(planProblem({ count: 2, first_due_date: "2024-01-01" })).toContain("interval")
    expect(planProblem({ count: 2, first_due_date: "2024-01-01", interval_days: 1, interval_months: 1 })).toContain("not both")
    expect(planProblem({ count: 1, first_due_date: "2024-01-01" })).toBeUndefined()
  })
})
