import { addDays, todayIn } from "@erp/core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestHost, type TestHost, type TestTenant } from "../../../test/support/host.js"
import { storeKinds, testStore } from "../../../test/support/stores.js"

type Json = Record<string, any>

/**
 * Statement lines matched to the documents they pay, over HTTP on every store: suggestions with
 * their reasons, a reconciliation and its undo with their events, refusals that change nothing,
 * and the automatic run on a small statement with a known answer.
 */
describe.each(storeKinds)("bank reconciliation on %s", (kind) => {
  let host: TestHost
  let tenant: TestTenant
  let other: TestTenant
  let today: string
  let account: string
  const customers: Record<string, string> = {}

  const call = (method: string, path: string, body?: unknown, token = tenant.token) => host.request(method, path, { token, body })
  const ok = async (method: string, path: string, body?: unknown, token = tenant.token) => {
    const response = await call(method, path, body, token)
    expect(response.status, `${method} ${path}: ${JSON.stringify(response.body)}`).toBeLessThan(300)
    return response.body
  }
  const receivable = (customer: string, amount: string, due: string, extra: Json = {}) =>
    ok("POST", "/receivables", { customer_id: customer, amount, due_date: due, financial_account_id: account, ...extra })
  const line = (amount: string, postedAt: string, name: string, memo?: string) =>
    ok("POST", "/financial-transactions", { account_id: account, posted_at: postedAt, amount, name, ...(memo ? { memo } : {}) })

  beforeAll(async () => {
    host = await startTestHost(testStore(kind))
    tenant = await host.createTenant("BR")
    other = await host.createTenant("BR")
    today = todayIn("America/Sao_Paulo")
    account = (await ok("POST", "/financial-accounts", { name: "Itaú", type: "checking" })).id
    customers.maria = (await ok("POST", "/customers", { legal_name: "Maria Aparecida Souza", tax_id: "529.982.247-25", type: "individual" })).id
    customers.torre = (await ok("POST", "/customers", { legal_name: "Torrefação Serra Azul Ltda", tax_id: "04.252.011/0001-10" })).id
    customers.lima = (await ok("POST", "/customers", { legal_name: "Padaria Lima" })).id
  })
  afterAll(() => host?.close())

  it("suggests the document a line pays, a customer's installments as one group, and the right one of two equal amounts", async () => {
    const due = addDays(today, -2)
    const single = await receivable(customers.torre, "1250.00", due)
    const equal = await receivable(customers.lima, "1250.00", due)
    const installments = await ok("POST", "/receivables", {
      customer_id: customers.maria, amount: "900.00", financial_account_id: account,
      installments: { count: 3, first_due_date: addDays(today, -60), interval_days: 30 }
    })
    const group = installments.data.map((record: Json) => record.id)

    const torre = await line("1250.00", today, "PIX RECEBIDO TORREFACAO SERRA AZUL", "CNPJ 04.252.011/0001-10")
    const suggestions = await ok("GET", `/financial-transactions/${torre.id}/match-suggestions`)
    expect(suggestions).toMatchObject({ transaction_id: torre.id, side: "receivables", left: "1250.000000" })
    const [best, second] = suggestions.data
    expect(best.allocations).toEqual([{ receivable_id: single.id, amount: "1250.000000" }])
    expect(best.reasons).toEqual(expect.arrayContaining(["amount_equal", "tax_id_in_line", "name_in_line", "due_date_near"]))
    expect(best.score).toBeGreaterThanOrEqual(0.95)
    expect(best.documents[0]).toMatchObject({ id: single.id, party_name: "Torrefação Serra Azul Ltda", open_amount: "1250.000000" })
    // The other customer's equal amount is suggested too, below: nothing names its party.
    expect(second.allocations).toEqual([{ receivable_id: equal.id, amount: "1250.000000" }])
    expect(second.score).toBeLessThan(0.95)

    const maria = await line("900.00", addDays(today, -29), "TED MARIA APARECIDA SOUZA")
    const grouped = (await ok("GET", `/financial-transactions/${maria.id}/match-suggestions`)).data[0]
    expect(grouped.reasons).toEqual(expect.arrayContaining(["amount_sum_of_documents", "name_in_line"]))
    expect(grouped.allocations.map((allocation: Json) => allocation.receivable_id)).toEqual(group.slice(0, 3))
    expect(grouped.allocations.map((allocation: Json) => allocation.amount)).toEqual(["300.000000", "300.000000", "300.000000"])

    // Another tenant's line is not found; theirs suggests nothing of ours.
    expect((await call("GET", `/financial-transactions/${torre.id}/match-suggestions`, undefined, other.token)).status).toBe(404)
  })

  it("suggests and reconciles money out with the payable of the supplier it names", async () => {
    const supplier = (await ok("POST", "/suppliers", { legal_name: "Distribuidora Vale Verde Ltda" })).id
    const payable = await ok("POST", "/payables", { supplier_id: supplier, amount: "612.35", due_date: today, financial_account_id: account })
    const paid = await line("-612.35", today, "PAGTO BOLETO DISTRIBUIDORA VALE VERDE")
    const suggestions = await ok("GET", `/financial-transactions/${paid.id}/match-suggestions`)
    expect(suggestions).toMatchObject({ side: "payables", left: "612.350000" })
    expect(suggestions.data[0]).toMatchObject({ allocations: [{ payable_id: payable.id, amount: "612.350000" }], reasons: expect.arrayContaining(["amount_equal", "name_in_line"]) })
    await ok("POST", `/financial-transactions/${paid.id}/reconcile`, { allocations: suggestions.data[0].allocations })
    expect((await ok("GET", `/payables/${payable.id}`)).status).toBe("paid")
  })

  it("reconciles a line with several documents in one go and undoes it whole, one event per document and one for the line", async () => {
    const first = await receivable(customers.lima, "100.00", today)
    const second = await receivable(customers.lima, "250.00", today)
    const money = await line("300.00", today, "PIX PADARIA LIMA")
    const eventsOf = async (id: string): Promise<Array<string>> => (await ok("GET", `/events?resource_id=${id}&limit=100`)).data.map((event: Json) => event.type)
    const before = await Promise.all([first.id, second.id, money.id].map(eventsOf))

    // Refusals name the field and change nothing.
    const over = await call("POST", `/financial-transactions/${money.id}/reconcile`, { allocations: [{ receivable_id: first.id, amount: "150.00" }] })
    expect([over.status, over.body.details.fields["allocations.0.amount"]]).toEqual([422, ["is more than is open on it (100.000000)"]])
    const past = await call("POST", `/financial-transactions/${money.id}/reconcile`, {
      allocations: [{ receivable_id: first.id, amount: "100.00" }, { receivable_id: second.id, amount: "250.00" }]
    })
    expect([past.status, Object.keys(past.body.details.fields)]).toEqual([422, ["allocations.1.amount"]])
    const wrongSide = await call("POST", `/financial-transactions/${money.id}/reconcile`, { allocations: [{ payable_id: first.id, amount: "10" }] })
    expect(wrongSide.status).toBe(422)
    expect(Object.keys(wrongSide.body.details.fields).sort()).toEqual(["allocations.0.payable_id", "allocations.0.receivable_id"])
    expect((await ok("GET", `/receivables/${first.id}`)).status).toBe("pending")

    const done = await ok("POST", `/financial-transactions/${money.id}/reconcile`, {
      allocations: [{ receivable_id: first.id, amount: "100.00" }, { receivable_id: second.id, amount: "200.00" }]
    })
    expect(done).toMatchObject({ id: money.id, is_reconciled: true, allocated_total: "300.000000" })
    expect(done.reconciled_at).toEqual(expect.any(String))
    expect((await ok("GET", `/receivables/${first.id}`)).status).toBe("paid")
    expect((await ok("GET", `/receivables/${second.id}`)).status).toBe("partial")
    const again = await call("POST", `/financial-transactions/${money.id}/reconcile`, { allocations: [{ receivable_id: second.id, amount: "1" }] })
    expect([again.status, again.body.code]).toEqual([409, "ALREADY_RECONCILED"])
    const after = await Promise.all([first.id, second.id, money.id].map(eventsOf))
    expect(after.map((types, index) => types.length - before[index].length)).toEqual([1, 1, 1])
    expect(after.map((types) => types.at(-1))).toEqual(["receivables.update", "receivables.update", "financial-transactions.update"])

    const undone = await ok("DELETE", `/financial-transactions/${money.id}/reconcile`)
    expect(undone).toMatchObject({ is_reconciled: false, reconciled_at: null, allocated_total: "0.000000" })
    expect((await ok("GET", `/receivables/${first.id}`)).status).toBe("pending")
    expect((await ok("GET", `/receivables/${second.id}`)).allocations).toEqual([])
  })

  it("reconciles a small statement automatically: the sure lines, not the ambiguous or unknown ones; a dry run changes nothing", async () => {
    const own = (await ok("POST", "/financial-accounts", { name: "Bradesco", type: "checking" })).id
    const at = (days: number) => addDays(today, days)
    const make = (customer: string, amount: string, due: string) => ok("POST", "/receivables", { customer_id: customer, amount, due_date: due, financial_account_id: own })
    const paid = await make(customers.torre, "480.00", at(-1))
    const twinA = await make(customers.lima, "75.00", at(-1))
    await make(customers.maria, "75.00", at(-1))
    const post = (amount: string, name: string) => ok("POST", "/financial-transactions", { account_id: own, posted_at: today, amount, name })
    const sure = await post("480.00", "PIX TORREFACAO SERRA AZUL LTDA 04252011000110")
    const twin = await post("75.00", "PIX PADARIA LIMA")
    const unnamed = await post("75.00", "DEPOSITO")
    const fee = await post("-12.90", "TARIFA PACOTE SERVICOS")

    const dry = await ok("POST", `/financial-accounts/${own}/auto-reconcile`, { dry_run: true })
    expect(dry.matched.map((match: Json) => match.transaction_id).sort()).toEqual([sure.id, twin.id].sort())
    expect(dry.left).toEqual(expect.arrayContaining([
      expect.objectContaining({ transaction_id: unnamed.id, reason: "below_threshold" }),
      expect.objectContaining({ transaction_id: fee.id, reason: "no_suggestion" })
    ]))
    expect((await ok("GET", `/receivables/${paid.id}`)).status).toBe("overdue")

    const real = await ok("POST", `/financial-accounts/${own}/auto-reconcile`, {})
    expect(real.matched.find((match: Json) => match.transaction_id === twin.id).allocations).toEqual([{ receivable_id: twinA.id, amount: "75.000000" }])
    expect((await ok("GET", `/receivables/${paid.id}`)).status).toBe("paid")
    expect((await ok("GET", `/financial-transactions/${sure.id}`)).is_reconciled).toBe(true)
    expect((await ok("GET", `/financial-transactions/${unnamed.id}`)).is_reconciled).toBe(false)
    // Run again: what is reconciled is not taken twice.
    expect((await ok("POST", `/financial-accounts/${own}/auto-reconcile`, {})).matched).toEqual([])
    const bad = await call("POST", `/financial-accounts/${own}/auto-reconcile`, { min_score: 2 })
    expect([bad.status, Object.keys(bad.body.details.fields)]).toEqual([400, ["min_score"]])
  })
})
