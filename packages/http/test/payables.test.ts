import { addDays, Tenancy, todayIn } from "@erp/core"
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestHost, type TestHost, type TestTenant } from "../../../test/support/host.js"
import { storeKinds, testStore } from "../../../test/support/stores.js"

const PIX = "d4d3e857-f3ba-56a6-b870-3fff0f4b531c"
const ACH_US_ONLY = "e6d0a0c7-bd22-5b1c-8b42-459d246748f8"
const MISSING = "00000000-0000-4000-8000-000000000000"

// UTC+14 and UTC−11: on every instant their calendars differ by one or two days.
const KIRITIMATI = "Pacific/Kiritimati"
const PAGO_PAGO = "Pacific/Pago_Pago"

/**
 * Payables over HTTP (receivables share the machine; their own pass is at the end):
 * the spec's tables row by row, allocations, overdue in the tenant's time zone,
 * cancelling, installments, references, events.
 */
describe.each(storeKinds)("payables on %s", (kind) => {
  let host: TestHost
  let tenant: TestTenant
  let other: TestTenant
  let account: string

  const call = (method: string, path: string, body?: unknown, token = tenant.token) => host.request(method, path, { token, body })
  const ok = async (method: string, path: string, body?: unknown, token = tenant.token) => {
    const response = await call(method, path, body, token)
    expect(response.status, `${method} ${path}: ${JSON.stringify(response.body)}`).toBeLessThan(300)
    return response.body
  }
  const today = () => todayIn("America/Sao_Paulo")
  const payable = (body: Record<string, unknown> = {}) => ok("POST", "/payables", { amount: "100", due_date: addDays(today(), 10), ...body })
  const transaction = (amount: string, body: Record<string, unknown> = {}, token = tenant.token, accountId = account) =>
    ok("POST", "/financial-transactions", { account_id: accountId, posted_at: "2024-01-15", amount, ...body }, token)
  const allocate = (payableId: string, transactionId: string, amount: string, resource = "payables") =>
    call("POST", `/${resource}/${payableId}/allocate`, { financial_transaction_id: transactionId, allocated_amount: amount })
  const get = (id: string, resource = "payables") => ok("GET", `/${resource}/${id}`)
  const feed = async (id: string) => (await ok("GET", `/events?resource_id=${id}&limit=100`)).data.map((event: { type: string }) => event.type)

  beforeAll(async () => {
    host = await startTestHost(testStore(kind))
    tenant = await host.createTenant("BR")
    other = await host.createTenant("BR")
    account = (await ok("POST", "/financial-accounts", { name: "Itaú", type: "checking" })).id
  })
  afterAll(() => host?.close())

  it("creates a payable with the spec's fields, numbered, pending, with an empty allocation list", async () => {
    const supplier = await ok("POST", "/suppliers", { legal_name: "Torrefação Serra Azul" })
    const category = await ok("POST", "/financial-categories", { name: "Matéria-prima", type: "expense" })
    const created = await payable({
      supplier_id: supplier.id,
      financial_account_id: account,
      payment_method_id: PIX,
      financial_category_id: category.id,
      reference_code: "NF-1234",
      amount: "1250.5",
      discount_amount: "10",
      surcharge_amount: "2.5",
      issue_date: "2024-01-10",
      description: "Café em grãos",
      notes: "Entrega em duas partes",
      metadata: { origin: "test" }
    })
    expect(created).toMatchObject({
      supplier_id: supplier.id,
      financial_account_id: account,
      payment_method_id: PIX,
      financial_category_id: category.id,
      reference_code: "NF-1234",
      amount: "1250.500000",
      discount_amount: "10.000000",
      surcharge_amount: "2.500000",
      status: "pending",
      issue_date: "2024-01-10",
      paid_at: null,
      installment_group_id: null,
      installment_number: null,
      installment_count: null,
      purchase_invoice_id: null,
      allocated_total: "0.000000",
      allocations: [],
      metadata: { origin: "test" },
      deleted_at: null
    })
    expect(created.record_number).toEqual(expect.any(Number))
    for (const field of ["id", "record_number", "created_at", "updated_at", "due_date", "description", "notes"]) expect(created).toHaveProperty(field)
    expect(await feed(created.id)).toEqual(["payables.create"])
  })

  it("lists by due_date ascending unless sorted otherwise, and filters by every field", async () => {
    const group = randomUUID().slice(0, 8)
    const late = await payable({ due_date: "2031-03-01", amount: "30", description: `${group} late` })
    const early = await payable({ due_date: "2031-01-01", amount: "10", description: `${group} early`, reference_code: `R-${group}` })
    const middle = await payable({ due_date: "2031-02-01", amount: "20", description: `${group} middle`, payment_method_id: PIX })
    const ids = (body: { data: Array<{ id: string }> }) => body.data.map((record) => record.id)
    const mine = `description[contains]=${group}`
    expect(ids(await ok("GET", `/payables?${mine}`))).toEqual([early.id, middle.id, late.id])
    expect(ids(await ok("GET", `/payables?${mine}&sort=amount:desc`))).toEqual([late.id, middle.id, early.id])
    expect(ids(await ok("GET", `/payables?${mine}&due_date[gte]=2031-02-01`))).toEqual([middle.id, late.id])
    expect(ids(await ok("GET", `/payables?${mine}&amount[lt]=15`))).toEqual([early.id])
    expect(ids(await ok("GET", `/payables?reference_code=R-${group}`))).toEqual([early.id])
    expect(ids(await ok("GET", `/payables?${mine}&payment_method_id=${PIX}`))).toEqual([middle.id])
    expect(ids(await ok("GET", `/payables?${mine}&status=pending&paid_at[is_null]=true`))).toEqual([early.id, middle.id, late.id])
    expect(ids(await ok("GET", `/payables?${mine}&record_number=${late.record_number}`))).toEqual([late.id])
    expect((await call("GET", "/payables?status[gt]=pending")).status).toBe(400)
    await ok("DELETE", `/payables/${late.id}`)
    expect(ids(await ok("GET", `/payables?${mine}`))).toEqual([early.id, middle.id])
    expect(ids(await ok("GET", `/payables?${mine}&with_deleted=true`))).toEqual([early.id, middle.id, late.id])
  })

  it("reads pending as overdue from the day after the due date in the tenant's time zone, and status=overdue filters by it", async () => {
    const east = await host.createTenant("BR", { timeZone: KIRITIMATI })
    const west = await host.createTenant("BR", { timeZone: PAGO_PAGO })
    const eastToday = todayIn(KIRITIMATI)
    const due = addDays(eastToday, -1)
    // The same due date: a day late in Kiritimati, not yet due in Pago Pago.
    expect(todayIn(PAGO_PAGO) <= due).toBe(true)
    const lateEast = await ok("POST", "/payables", { amount: "10", due_date: due }, east.token)
    const dueTodayEast = await ok("POST", "/payables", { amount: "10", due_date: eastToday }, east.token)
    const onTimeWest = await ok("POST", "/payables", { amount: "10", due_date: due }, west.token)
    expect(lateEast.status).toBe("overdue")
    expect(dueTodayEast.status).toBe("pending")
    expect(onTimeWest.status).toBe("pending")
    expect((await ok("GET", "/payables?status=overdue", undefined, east.token)).data.map((record: { id: string }) => record.id)).toEqual([lateEast.id])
    expect((await ok("GET", "/payables?status=pending", undefined, east.token)).data.map((record: { id: string }) => record.id)).toEqual([dueTodayEast.id])
    expect((await ok("GET", "/payables?status=overdue", undefined, west.token)).data).toEqual([])
    // The tenant's zone decides: moved west, the same record is no longer late.
    await host.run(Effect.flatMap(Tenancy, (tenancy) => tenancy.setTimeZone(east.id, PAGO_PAGO)))
    expect((await ok("GET", `/payables/${lateEast.id}`, undefined, east.token)).status).toBe("pending")
  })

  it("PATCH by status: pending and overdue take every field; partial and paid only notes, financial_category_id, metadata; cancelled nothing, not even {}", async () => {
    const category = await ok("POST", "/financial-categories", { name: "Serviços", type: "expense" })
    const pending = await payable()
    expect((await ok("PATCH", `/payables/${pending.id}`, { amount: "120", due_date: addDays(today(), 20), reference_code: "X" })).amount).toBe("120.000000")
    const overdue = await payable({ due_date: addDays(today(), -3) })
    expect(overdue.status).toBe("overdue")
    // Moving the due date ahead makes it pending again.
    expect((await ok("PATCH", `/payables/${overdue.id}`, { amount: "90", due_date: addDays(today(), 3) })).status).toBe("pending")

    const money = await transaction("-500")
    for (const [status, allocated] of [["partial", "40"], ["paid", "100"]] as const) {
      const record = await payable()
      expect((await allocate(record.id, money.id, allocated)).status).toBe(201)
      expect((await get(record.id)).status).toBe(status)
      const refused = await call("PATCH", `/payables/${record.id}`, { amount: "1", due_date: "2030-01-01", notes: "fine" })
      expect(refused.status).toBe(422)
      expect(refused.body).toMatchObject({ status_code: 422, code: "NOT_EDITABLE" })
      expect(Object.keys(refused.body.details.fields).sort()).toEqual(["amount", "due_date"])
      expect((await get(record.id)).notes).toBeNull()
      const changed = await ok("PATCH", `/payables/${record.id}`, { notes: "ok", financial_category_id: category.id, metadata: { k: 1 } })
      expect(changed).toMatchObject({ status, notes: "ok", financial_category_id: category.id, metadata: { k: 1 } })
    }

    const cancelled = await ok("POST", `/payables/${(await payable()).id}/cancel`)
    expect(cancelled.status).toBe("cancelled")
    for (const body of [{}, { notes: "too late" }]) {
      const refused = await call("PATCH", `/payables/${cancelled.id}`, body)
      expect(refused.status).toBe(422)
      expect(refused.body.code).toBe("NOT_EDITABLE")
      expect(Object.keys(refused.body.details.fields).length).toBeGreaterThan(0)
    }
  })

  it("allocations move pending → partial → paid and back, set paid_at and reconcile the transaction, each one event on the payable", async () => {
    const record = await payable({ amount: "100", discount_amount: "10", surcharge_amount: "5", due_date: addDays(today(), -1) })
    expect(record.status).toBe("overdue")
    const first = await transaction("-40", { posted_at: "2024-02-01" })
    const second = await transaction("-55", { posted_at: "2024-02-20" })

    const allocation = await allocate(record.id, first.id, "40")
    expect(allocation.status).toBe(201)
    expect(allocation.body).toEqual({
      id: expect.any(String),
      payable_id: record.id,
      financial_transaction_id: first.id,
      allocated_amount: "40.000000",
      notes: null,
      created_at: expect.any(String),
      updated_at: expect.any(String)
    })
    const partial = await get(record.id)
    expect(partial).toMatchObject({ status: "partial", paid_at: null, allocated_total: "40.000000", allocations: [allocation.body] })
    expect(await get(first.id, "financial-transactions")).toMatchObject({ is_reconciled: true, reconciled_at: expect.any(String), allocated_total: "40.000000" })

    // 100 − 10 + 5 = 95 settles it.
    const rest = await allocate(record.id, second.id, "55")
    expect(rest.status).toBe(201)
    expect(await get(record.id)).toMatchObject({ status: "paid", paid_at: "2024-02-20", allocated_total: "95.000000" })

    expect((await call("DELETE", `/payables/${record.id}/allocate/${rest.body.id}`)).status).toBe(204)
    expect(await get(record.id)).toMatchObject({ status: "partial", paid_at: null })
    expect(await get(second.id, "financial-transactions")).toMatchObject({ is_reconciled: false, reconciled_at: null, allocated_total: "0.000000" })
    const removed = await call("DELETE", `/payables/${record.id}/allocate/${allocation.body.id}`)
    expect(removed.status).toBe(204)
    expect(removed.body).toBeUndefined()
    // Nothing allocated and the due date passed: overdue, fully editable again.
    expect(await get(record.id)).toMatchObject({ status: "overdue", allocations: [] })
    expect((await call("DELETE", `/payables/${record.id}/allocate/${allocation.body.id}`)).body.code).toBe("ALLOCATION_NOT_FOUND")
    expect(await feed(record.id)).toEqual(["payables.create", "payables.update", "payables.update", "payables.update", "payables.update"])
  })

  it("refuses over-allocation, more than the transaction has left, a missing or another tenant's transaction, the wrong sign, an ignored one, a cancelled payable: 422 naming the field, nothing written", async () => {
    const record = await payable({ amount: "50" })
    const big = await transaction("-80")
    const small = await transaction("-30")
    const incoming = await transaction("80")
    const ignored = await transaction("-80", { ignored_at: "2024-01-20T10:00:00Z" })
    const otherAccount = (await ok("POST", "/financial-accounts", { name: "Other", type: "cash" }, other.token)).id
    const foreign = await transaction("-80", {}, other.token, otherAccount)
    const cases: Array<[string, string, string, string]> = [
      [big.id, "50.000001", "allocated_amount", "OVER_ALLOCATION"],
      [small.id, "30.5", "allocated_amount", "OVER_ALLOCATION"],
      [MISSING, "1", "financial_transaction_id", "REFERENCE_NOT_FOUND"],
      [foreign.id, "1", "financial_transaction_id", "REFERENCE_NOT_FOUND"],
      [incoming.id, "1", "financial_transaction_id", "WRONG_DIRECTION"],
      [ignored.id, "1", "financial_transaction_id", "TRANSACTION_IGNORED"],
      [big.id, "0", "allocated_amount", "VALIDATION_FAILED"]
    ]
    for (const [transactionId, amount, field, code] of cases) {
      const refused = await allocate(record.id, transactionId, amount)
      expect(refused.status, `${code}: ${JSON.stringify(refused.body)}`).toBe(422)
      expect(refused.body.code).toBe(code)
      expect(refused.body.details.fields).toHaveProperty(field)
    }
    expect((await allocate(record.id, "not-a-uuid", "1")).status).toBe(400)
    expect(await get(record.id)).toMatchObject({ status: "pending", allocations: [] })
    expect(await feed(record.id)).toEqual(["payables.create"])
    // The other tenant's payable is not there at all.
    expect((await call("POST", `/payables/${record.id}/allocate`, { financial_transaction_id: foreign.id, allocated_amount: "1" }, other.token)).status).toBe(404)

    const cancelled = await ok("POST", `/payables/${(await payable()).id}/cancel`)
    const refused = await allocate(cancelled.id, big.id, "1")
    expect(refused.status).toBe(422)
    expect(refused.body.code).toBe("SETTLEMENT_CANCELLED")
  })

  it("cancels pending and overdue only; one with allocations is neither cancelled nor deleted", async () => {
    const pending = await payable()
    const cancelled = await call("POST", `/payables/${pending.id}/cancel`)
    expect(cancelled.status).toBe(200)
    expect(cancelled.body).toMatchObject({ id: pending.id, status: "cancelled" })
    expect((await call("POST", `/payables/${pending.id}/cancel`)).body.code).toBe("ALREADY_CANCELLED")
    expect((await ok("GET", `/payables?id=${pending.id}&status=cancelled`)).data).toHaveLength(1)

    const settled = await payable()
    await allocate(settled.id, (await transaction("-10")).id, "10")
    const refused = await call("POST", `/payables/${settled.id}/cancel`)
    expect(refused.status).toBe(422)
    expect(refused.body.code).toBe("HAS_ALLOCATIONS")
    const notRemoved = await call("DELETE", `/payables/${settled.id}`)
    expect(notRemoved.status).toBe(422)
    expect(notRemoved.body.code).toBe("HAS_ALLOCATIONS")
    expect((await get(settled.id)).status).toBe("partial")
  })

  it("creates a whole group of installments in one request: amounts to the cent, the remainder on the last", async () => {
    const created = await call("POST", "/payables", {
      amount: "1000",
      discount_amount: "10",
      description: "Máquina de café",
      installments: { count: 3, first_due_date: "2031-01-31", interval_months: 1 }
    })
    expect(created.status).toBe(201)
    const group = created.body.data
    expect(group.map((record: Record<string, unknown>) => [record.installment_number, record.installment_count, record.amount, record.discount_amount, record.due_date])).toEqual([
      [1, 3, "333.330000", "3.330000", "2031-01-31"],
      [2, 3, "333.330000", "3.330000", "2031-02-28"],
      [3, 3, "333.340000", "3.340000", "2031-03-31"]
    ])
    const groupId = group[0].installment_group_id
    expect(group.every((record: { installment_group_id: string; description: string }) => record.installment_group_id === groupId && record.description === "Máquina de café")).toBe(true)
    const listed = await ok("GET", `/payables?installment_group_id=${groupId}&sort=installment_number:desc`)
    expect(listed.data.map((record: { id: string }) => record.id)).toEqual(group.map((record: { id: string }) => record.id).reverse())
    for (const record of group) expect(await feed(record.id)).toEqual(["payables.create"])

    const badPlans: Array<[Record<string, unknown>, number, string]> = [
      [{ amount: "10", installments: { count: 2, first_due_date: "2031-01-01", interval_days: 30, interval_months: 1 } }, 422, "installments"],
      [{ amount: "10", installments: { count: 2, first_due_date: "2031-01-01" } }, 422, "installments"],
      [{ amount: "10", due_date: "2031-01-01", installments: { count: 2, first_due_date: "2031-01-01", interval_days: 30 } }, 422, "due_date"],
      [{ amount: "10", installments: { count: 0, first_due_date: "2031-01-01", interval_days: 30 } }, 400, "installments.count"],
      [{ amount: "10" }, 400, "due_date"]
    ]
    for (const [body, status, field] of badPlans) {
      const refused = await call("POST", "/payables", body)
      expect(refused.status, JSON.stringify(refused.body)).toBe(status)
      expect(refused.body.details.fields).toHaveProperty(field)
    }
    expect((await call("PATCH", `/payables/${group[0].id}`, { installments: { count: 2, first_due_date: "2031-01-01", interval_days: 1 } })).status).toBe(400)
  })

  it("takes installment_number and installment_count on a record created alone (moved from another system), 1 ≤ number ≤ count", async () => {
    for (const resource of ["payables", "receivables"]) {
      const moved = await ok("POST", `/${resource}`, { amount: "50", due_date: "2031-03-10", installment_number: 2, installment_count: 3 })
      expect(moved).toMatchObject({ installment_number: 2, installment_count: 3, installment_group_id: null })
      expect((await get(moved.id, resource))).toMatchObject({ installment_number: 2, installment_count: 3 })
      const refusals: Array<[Record<string, unknown>, number, string]> = [
        [{ installment_number: 4, installment_count: 3 }, 422, "installment_number"],
        [{ installment_number: 2 }, 422, "installment_count"],
        [{ installment_count: 2 }, 422, "installment_number"],
        [{ installment_number: 0, installment_count: 3 }, 400, "installment_number"],
        [{ installment_number: 1, installment_count: 1000 }, 400, "installment_count"],
        [{ installment_number: 1, installment_count: 2, due_date: undefined, installments: { count: 2, first_due_date: "2031-01-01", interval_days: 30 } }, 422, "installment_number"]
      ]
      for (const [extra, status, field] of refusals) {
        const refused = await call("POST", `/${resource}`, { amount: "50", due_date: "2031-03-10", ...extra })
        expect(refused.status, JSON.stringify(refused.body)).toBe(status)
        expect(refused.body.details.fields).toHaveProperty(field)
      }
      const patched = await call("PATCH", `/${resource}/${moved.id}`, { installment_number: 1 })
      expect(patched.status).toBe(400)
      expect(patched.body.code).toBe("READ_ONLY_FIELD")
    }
  })

  it("checks every reference inside the tenant and the catalogs' scope: 422 naming the field", async () => {
    const foreignSupplier = await ok("POST", "/suppliers", { legal_name: "Alheio" }, other.token)
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ supplier_id: foreignSupplier.id }, "supplier_id"],
      [{ financial_account_id: MISSING }, "financial_account_id"],
      [{ financial_category_id: MISSING }, "financial_category_id"],
      [{ payment_method_id: ACH_US_ONLY }, "payment_method_id"]
    ]
    for (const [body, field] of cases) {
      const refused = await call("POST", "/payables", { amount: "1", due_date: "2031-01-01", ...body })
      expect(refused.status).toBe(422)
      expect(refused.body.code).toBe("REFERENCE_NOT_FOUND")
      expect(Object.keys(refused.body.details.fields)).toEqual([field])
    }
    for (const [body, field] of [[{ amount: "0" }, "amount"], [{ amount: "10", discount_amount: "10" }, "discount_amount"]] as const) {
      const refused = await call("POST", "/payables", { due_date: "2031-01-01", ...body })
      expect(refused.status).toBe(422)
      expect(refused.body.details.fields).toHaveProperty(field)
    }
  })

  it("receivables: the same machine with incoming money, customer references, soft delete", async () => {
    const customer = await ok("POST", "/customers", { legal_name: "Padaria São João" })
    const receivable = await ok("POST", "/receivables", {
      customer_id: customer.id,
      amount: "300",
      due_date: "2031-05-10",
      installments: undefined
    })
    // Its sales order must exist for the tenant (a real reference since sales orders exist).
    const dangling = await call("POST", "/receivables", { customer_id: customer.id, amount: "300", due_date: "2031-05-10", sales_order_id: randomUUID() })
    expect(dangling.status).toBe(422)
    expect(Object.keys(dangling.body.details.fields)).toEqual(["sales_order_id"])
    expect(receivable).toMatchObject({ customer_id: customer.id, status: "pending", record_number: expect.any(Number), allocations: [] })
    const outgoing = await transaction("-300")
    const wrong = await allocate(receivable.id, outgoing.id, "100", "receivables")
    expect(wrong.status).toBe(422)
    expect(wrong.body.code).toBe("WRONG_DIRECTION")
    const incoming = await transaction("300")
    const allocation = await allocate(receivable.id, incoming.id, "300", "receivables")
    expect(allocation.status).toBe(201)
    expect(allocation.body).toMatchObject({ receivable_id: receivable.id, allocated_amount: "300.000000" })
    expect(await get(receivable.id, "receivables")).toMatchObject({ status: "paid", paid_at: "2024-01-15" })
    expect((await call("DELETE", `/receivables/${receivable.id}/allocate/${allocation.body.id}`)).status).toBe(204)
    expect((await call("DELETE", `/receivables/${receivable.id}`)).status).toBe(204)
    expect((await call("GET", `/receivables/${receivable.id}`)).status).toBe(404)
    expect((await ok("GET", `/receivables/${receivable.id}?with_deleted=true`)).deleted_at).toEqual(expect.any(String))
    expect(await feed(receivable.id)).toEqual(["receivables.create", "receivables.update", "receivables.update", "receivables.delete"])
  })

  it.runIf(kind === "postgres")("never over-allocates a transaction under concurrent allocations (row locks)", async () => {
    const money = await transaction("-100")
    const records = await Promise.all(Array.from({ length: 8 }, () => payable({ amount: "30" })))
    const answers = await Promise.all(records.map((record) => allocate(record.id, money.id, "30")))
    const statuses = answers.map((answer) => answer.status).sort()
    expect(statuses).toEqual([201, 201, 201, 422, 422, 422, 422, 422])
    expect(answers.filter((answer) => answer.status === 422).every((answer) => answer.body.code === "OVER_ALLOCATION")).toBe(true)
    expect(await get(money.id, "financial-transactions")).toMatchObject({ allocated_total: "90.000000", is_reconciled: false })

    // And one payable from several transactions at once never goes beyond what it is due.
    const single = await payable({ amount: "50" })
    const sources = await Promise.all(Array.from({ length: 6 }, () => transaction("-20")))
    const results = await Promise.all(sources.map((source) => allocate(single.id, source.id, "20")))
    expect(results.filter((answer) => answer.status === 201)).toHaveLength(2)
    expect(await get(single.id)).toMatchObject({ allocated_total: "40.000000", status: "partial" })
  })
})
