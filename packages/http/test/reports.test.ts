import { addDays, parsePermissionSpecs, todayIn } from "@erp/core"
import BigNumber from "bignumber.js"
import { Result } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestHost, type TestHost, type TestTenant } from "../../../test/support/host.js"
import { storeKinds, testStore } from "../../../test/support/stores.js"

type Json = Record<string, any>

const six = (value: BigNumber.Value) => new BigNumber(value).toFixed(6)
const sum = (values: ReadonlyArray<BigNumber.Value>) => values.reduce<BigNumber>((total, value) => total.plus(value), new BigNumber(0))
const grants = (...specs: Array<string>) => Result.getOrThrow(parsePermissionSpecs(specs))

/** What settles a document less its allocations, as its record reads. */
const openOf = (record: Json) => new BigNumber(record.amount).minus(record.discount_amount).plus(record.surcharge_amount).minus(record.allocated_total)

/**
 * The reports over HTTP on every store: documents, allocations and transactions placed on every
 * bucket and period edge, each figure recomputed from the API's own lists.
 */
describe.each(storeKinds)("reports on %s", (kind) => {
  let host: TestHost
  let tenant: TestTenant
  let other: TestTenant
  let today: string
  let account: string
  const customers: Record<string, string> = {}
  let supplier: string
  const categories: Record<string, string> = {}

  const call = (method: string, path: string, body?: unknown, token = tenant.token) => host.request(method, path, { token, body })
  const ok = async (method: string, path: string, body?: unknown, token = tenant.token) => {
    const response = await call(method, path, body, token)
    expect(response.status, `${method} ${path}: ${JSON.stringify(response.body)}`).toBeLessThan(300)
    return response.body
  }
  const all = async (path: string): Promise<Array<Json>> => {
    const records: Array<Json> = []
    for (let cursor: string | null = null; ;) {
      const page: Json = await ok("GET", `${path}${path.includes("?") ? "&" : "?"}limit=100${cursor ? `&cursor=${cursor}` : ""}`)
      records.push(...page.data)
      if (!page.pagination.has_next_page) return records
      cursor = page.pagination.next_cursor
    }
  }
  const daysAgo = (days: number) => addDays(today, -days)
  const transaction = (amount: string, postedAt: string) => ok("POST", "/financial-transactions", { account_id: account, posted_at: postedAt, amount })
  const settle = async (resource: string, id: string, amount: string, postedAt = today) => {
    const money = await transaction(resource === "receivables" ? amount : `-${amount}`, postedAt)
    await ok("POST", `/${resource}/${id}/allocate`, { financial_transaction_id: money.id, allocated_amount: amount })
  }

  beforeAll(async () => {
    host = await startTestHost(testStore(kind))
    tenant = await host.createTenant("BR")
    other = await host.createTenant("BR")
    today = todayIn("America/Sao_Paulo")
    account = (await ok("POST", "/financial-accounts", { name: "Itaú", type: "checking", initial_balance: "1000" })).id
    customers.acme = (await ok("POST", "/customers", { legal_name: "Acme Comércio Ltda" })).id
    customers.beta = (await ok("POST", "/customers", { legal_name: "Beta Serviços" })).id
    supplier = (await ok("POST", "/suppliers", { legal_name: "Torrefação Serra Azul" })).id
    categories.sales = (await ok("POST", "/financial-categories", { name: "Vendas", type: "income" })).id
    categories.products = (await ok("POST", "/financial-categories", { name: "Produtos", type: "income", parent_id: categories.sales })).id
    categories.costs = (await ok("POST", "/financial-categories", { name: "Custos", type: "expense" })).id

    const receivable = (customer: string, amount: string, due: string, extra: Json = {}) =>
      ok("POST", "/receivables", { customer_id: customer, amount, due_date: due, issue_date: daysAgo(100), financial_account_id: account, financial_category_id: categories.products, ...extra })
    // Every edge: due today (current), in the future, 1, 30, 31, 60, 61, 90 and 91 days ago.
    await receivable(customers.acme, "100", today)
    await receivable(customers.acme, "50.5", addDays(today, 12))
    await receivable(customers.acme, "10", daysAgo(1))
    await receivable(customers.acme, "20", daysAgo(30))
    await receivable(customers.beta, "30", daysAgo(31))
    await receivable(customers.beta, "40", daysAgo(60), { discount_amount: "5", surcharge_amount: "1.25" })
    const partial = await receivable(customers.beta, "100", daysAgo(61))
    await settle("receivables", partial.id, "40", daysAgo(2))
    await receivable(customers.beta, "70", daysAgo(90))
    await receivable(customers.acme, "80", daysAgo(91), { financial_category_id: categories.sales })
    await receivable(customers.acme, "0.000001", daysAgo(400), { financial_category_id: null })
    // Left out: paid, cancelled, deleted.
    const paid = await receivable(customers.acme, "25", daysAgo(45))
    await settle("receivables", paid.id, "25", daysAgo(3))
    const cancelled = await receivable(customers.beta, "33", daysAgo(10))
    await ok("POST", `/receivables/${cancelled.id}/cancel`, {})
    const deleted = await receivable(customers.beta, "44", daysAgo(10))
    expect((await call("DELETE", `/receivables/${deleted.id}`)).status).toBe(204)

    const payable = (amount: string, due: string, extra: Json = {}) =>
      ok("POST", "/payables", { supplier_id: supplier, amount, due_date: due, issue_date: daysAgo(20), financial_account_id: account, financial_category_id: categories.costs, ...extra })
    await payable("300", addDays(today, 5))
    const partlyPaid = await payable("200", daysAgo(15))
    await settle("payables", partlyPaid.id, "120", daysAgo(1))
    await payable("15", daysAgo(31), { financial_category_id: null })
    await transaction("500", daysAgo(200))
    await transaction("-75.25", daysAgo(200))

    // Another tenant's documents never show.
    await ok("POST", "/receivables", { amount: "999", due_date: daysAgo(5) }, other.token)
  })
  afterAll(() => host?.close())

  describe("aging", () => {
    const bucketOf = (due: string, asOf: string, bounds: ReadonlyArray<number>) => {
      const days = Math.round((Date.parse(asOf) - Date.parse(due)) / 86_400_000)
      if (days <= 0) return "current"
      let from = 1
      for (const bound of bounds) {
        if (days <= bound) return `${from}-${bound}`
        from = bound + 1
      }
      return `over-${bounds[bounds.length - 1]}`
    }

    for (const side of ["receivables", "payables"] as const) {
      it(`recomputes ${side} aging from the ${side} list, bucket by bucket and party by party`, async () => {
        const party = side === "receivables" ? "customer_id" : "supplier_id"
        for (const [query, bounds] of [["", [30, 60, 90]], ["?buckets=15,45", [15, 45]]] as const) {
          const report = await ok("GET", `/reports/${side}-aging${query}`)
          const open = (await all(`/${side}`)).filter((record) => record.status !== "paid" && record.status !== "cancelled")
          const expected = new Map<string | null, { amounts: Record<string, BigNumber>; count: number }>()
          for (const record of open) {
            const row = expected.get(record[party]) ?? { amounts: {}, count: 0 }
            const key = bucketOf(record.due_date, today, bounds)
            row.amounts[key] = (row.amounts[key] ?? new BigNumber(0)).plus(openOf(record))
            row.count += 1
            expected.set(record[party], row)
          }
          expect(report.as_of).toBe(today)
          expect(report.buckets.map((bucket: Json) => bucket.key)).toEqual(["current", ...bounds.map((bound, index) => `${index === 0 ? 1 : bounds[index - 1] + 1}-${bound}`), `over-${bounds[bounds.length - 1]}`])
          expect(report.rows).toHaveLength(expected.size)
          for (const row of report.rows) {
            const mine = expected.get(row[party])!
            for (const bucket of report.buckets) expect(row.amounts[bucket.key], `${row.name} ${bucket.key}`).toBe(six(mine.amounts[bucket.key] ?? 0))
            expect(row.total).toBe(six(sum(Object.values(mine.amounts))))
            expect(row.count).toBe(mine.count)
          }
          const totals = report.rows.map((row: Json) => new BigNumber(row.total))
          expect(totals).toEqual([...totals].sort((a, b) => b.comparedTo(a) ?? 0))
          expect(report.totals.total).toBe(six(sum(open.map(openOf))))
          expect(report.totals.count).toBe(open.length)
        }
      })
    }

    it("puts due today in current, 30 days ago in 1-30 and 31 in 31-60; a partial counts what is open; paid, cancelled and deleted stay out", async () => {
      const report = await ok("GET", `/reports/receivables-aging?customer_id=${customers.acme}`)
      expect(report.rows).toHaveLength(1)
      expect(report.rows[0]).toMatchObject({
        customer_id: customers.acme,
        name: "Acme Comércio Ltda",
        amounts: { current: "150.500000", "1-30": "30.000000", "31-60": "0.000000", "61-90": "0.000000", "over-90": "80.000001" },
        count: 6
      })
      const beta = await ok("GET", `/reports/receivables-aging?customer_id=${customers.beta}`)
      expect(beta.rows[0].amounts).toEqual({ current: "0.000000", "1-30": "0.000000", "31-60": "66.250000", "61-90": "130.000000", "over-90": "0.000000" })
      const earlier = await ok("GET", `/reports/receivables-aging?customer_id=${customers.beta}&as_of=${daysAgo(1)}`)
      expect(earlier.rows[0].amounts).toMatchObject({ "1-30": "30.000000", "31-60": "96.250000", "61-90": "70.000000" })
      const category = await ok("GET", `/reports/receivables-aging?financial_category_id=${categories.sales}`)
      expect(category.totals).toMatchObject({ total: "80.000000", count: 1 })
    })

    it("answers CSV with Accept: text/csv", async () => {
      const response = await fetch(`${host.url}/reports/receivables-aging?customer_id=${customers.acme}`, { headers: { authorization: `Bearer ${tenant.token}`, accept: "text/csv" } })
      expect(response.status).toBe(200)
      expect(response.headers.get("content-type")).toMatch(/^text\/csv/)
      expect(response.headers.get("content-disposition")).toContain("receivables-aging.csv")
      expect((await response.text()).split("\r\n")).toEqual([
        "customer_id,name,current,1-30,31-60,61-90,over-90,total,count",
        `${customers.acme},Acme Comércio Ltda,150.500000,30.000000,0.000000,0.000000,80.000001,260.500001,6`,
        "total,,150.500000,30.000000,0.000000,0.000000,80.000001,260.500001,6",
        ""
      ])
    })
  })

  it("recomputes the cash flow from the transactions, receivables and payables lists, period by period", async () => {
    const from = daysAgo(20)
    const to = addDays(today, 40)
    for (const interval of ["week", "month", "day"] as const) {
      const report = await ok("GET", `/reports/cash-flow?from=${from}&to=${to}&interval=${interval}`)
      expect(report).toMatchObject({ from, to, interval })
      const transactions = await all("/financial-transactions")
      const opening = sum([(await ok("GET", `/financial-accounts/${account}`)).initial_balance, ...transactions.filter((t) => t.posted_at < from).map((t) => t.amount)])
      expect(report.periods[0].opening).toBe(six(opening))
      expect(report.periods[0].start).toBe(from)
      expect(report.periods.at(-1).end).toBe(to)
      const receivables = (await all("/receivables")).filter((r) => r.status !== "paid" && r.status !== "cancelled")
      const payables = (await all("/payables")).filter((r) => r.status !== "paid" && r.status !== "cancelled")
      let balance = opening
      for (const [index, period] of report.periods.entries()) {
        const first = index === 0
        const within = (date: string) => (first ? date <= period.end : date >= period.start && date <= period.end)
        const posted = transactions.filter((t) => t.posted_at >= period.start && t.posted_at <= period.end)
        const expected = {
          opening: six(balance),
          realized_in: six(sum(posted.filter((t) => new BigNumber(t.amount).gt(0)).map((t) => t.amount))),
          realized_out: six(sum(posted.filter((t) => new BigNumber(t.amount).lt(0)).map((t) => new BigNumber(t.amount).negated()))),
          projected_in: six(sum(receivables.filter((r) => within(r.due_date)).map(openOf))),
          projected_out: six(sum(payables.filter((r) => within(r.due_date)).map(openOf)))
        }
        balance = balance.plus(expected.realized_in).minus(expected.realized_out).plus(expected.projected_in).minus(expected.projected_out)
        expect(period, `${interval} ${period.start}`).toMatchObject({ ...expected, closing: six(balance) })
        if (index > 0) expect(period.start).toBe(addDays(report.periods[index - 1].end, 1))
      }
      if (interval === "week") expect(new Date(`${report.periods[1].start}T00:00:00Z`).getUTCDay()).toBe(1)
      if (interval === "month") expect(report.periods[1].start.endsWith("-01")).toBe(true)
    }
  })

  it("recomputes the income statement on both bases from the lists, with each level's subtotal", async () => {
    const from = daysAgo(120)
    const to = today
    const accrual = await ok("GET", `/reports/income-statement?from=${from}&to=${to}`)
    const counted = (records: Array<Json>) => records.filter((r) => r.status !== "cancelled" && (r.issue_date ?? r.due_date) >= from && (r.issue_date ?? r.due_date) <= to)
    const due = (r: Json) => new BigNumber(r.amount).minus(r.discount_amount).plus(r.surcharge_amount)
    const receivables = counted(await all("/receivables"))
    const payables = counted(await all("/payables"))
    const byCategory = (records: Array<Json>, category: string | null) => six(sum(records.filter((r) => r.financial_category_id === category).map(due)))
    expect(accrual.basis).toBe("accrual")
    expect(accrual.revenue.total).toBe(six(sum(receivables.map(due))))
    expect(accrual.expenses.total).toBe(six(sum(payables.map(due))))
    expect(accrual.result).toBe(six(new BigNumber(accrual.revenue.total).minus(accrual.expenses.total)))
    const line = (section: Json, id: string | null) => section.lines.find((candidate: Json) => candidate.financial_category_id === id)
    expect(line(accrual.revenue, categories.sales)).toMatchObject({ level: 0, parent_id: null, name: "Vendas", amount: byCategory(receivables, categories.sales) })
    expect(line(accrual.revenue, categories.products)).toMatchObject({ level: 1, parent_id: categories.sales, amount: byCategory(receivables, categories.products) })
    expect(line(accrual.revenue, categories.sales).subtotal).toBe(six(new BigNumber(byCategory(receivables, categories.sales)).plus(byCategory(receivables, categories.products))))
    expect(line(accrual.expenses, null)).toMatchObject({ name: "Uncategorized", amount: byCategory(payables, null) })
    expect(accrual.revenue.lines.map((l: Json) => l.financial_category_id)).toEqual([categories.sales, categories.products, null])

    const cash = await ok("GET", `/reports/income-statement?from=${from}&to=${to}&basis=cash`)
    // Allocations by the posting date of their transaction: 40 + 25 received, 120 paid.
    expect([cash.revenue.total, cash.expenses.total, cash.result]).toEqual(["65.000000", "120.000000", "-55.000000"])
    expect(line(cash.revenue, categories.sales).subtotal).toBe("65.000000")
  })

  it("sums sales per product, customer, salesperson and month from the orders as listed; drafts and cancelled orders stay out", async () => {
    const product = (await ok("POST", "/products", { name: "Café 1 kg" })).id
    const item = (quantity: string, unitPrice: string, discount = "0") => ({ product_id: product, item_description: "Café", quantity, unit_price: unitPrice, discount_amount: discount })
    const order = async (customer: string, date: string, status: string, body: Json = {}) => {
      const created = await ok("POST", "/sales-orders", { customer_id: customer, order_date: date, salesperson_name: "Ana", items: [item("2", "10.5", "1"), { item_description: "Frete", quantity: "1", unit_price: "7" }], ...body })
      if (status !== "draft") await ok("PATCH", `/sales-orders/${created.id}`, { status: "confirmed" })
      if (status === "cancelled") await ok("PATCH", `/sales-orders/${created.id}`, { status: "cancelled" })
      return created
    }
    await order(customers.acme, daysAgo(40), "confirmed", { discount_amount: "2" })
    await order(customers.beta, daysAgo(5), "confirmed", { salesperson_name: "Bruno" })
    await order(customers.beta, daysAgo(5), "draft")
    await order(customers.acme, daysAgo(5), "cancelled")
    // The product twice in one order, and an order whose first line of it is removed before it is confirmed:
    // each still counts once among the product's documents.
    await order(customers.beta, daysAgo(3), "confirmed", { items: [item("1", "10.5"), item("3", "10.5")] })
    const edited = await order(customers.acme, daysAgo(3), "draft", { items: [item("1", "10.5"), item("1", "10.5"), { item_description: "Frete", quantity: "1", unit_price: "7" }] })
    await ok("PATCH", `/sales-orders/${edited.id}`, { items: edited.items.slice(1).map((i: Json) => ({ id: i.id })) })
    await ok("PATCH", `/sales-orders/${edited.id}`, { status: "confirmed" })
    const from = daysAgo(60)
    const orders = (await all(`/sales-orders?order_date[gte]=${from}&order_date[lte]=${today}`)).filter((o) => o.status === "confirmed" || o.status === "fulfilled")
    expect(orders).toHaveLength(4)

    const byCustomer = await ok("GET", `/reports/sales?from=${from}&to=${today}&group_by=customer`)
    expect(byCustomer).toMatchObject({ source: "sales-orders", group_by: "customer" })
    expect(byCustomer.totals).toMatchObject({
      documents: 4,
      quantity: six(sum(orders.flatMap((o) => o.items.map((i: Json) => i.quantity)))),
      subtotal: six(sum(orders.map((o) => o.subtotal))),
      discounts: six(sum(orders.map((o) => o.total_discount))),
      taxes: null,
      total: six(sum(orders.map((o) => o.total)))
    })
    for (const row of byCustomer.rows) {
      const mine = orders.filter((o) => o.customer_id === row.key)
      expect(row).toMatchObject({ documents: mine.length, quantity: six(sum(mine.flatMap((o) => o.items.map((i: Json) => i.quantity)))), total: six(sum(mine.map((o) => o.total))) })
    }
    expect(byCustomer.rows.map((row: Json) => row.label)).toContain("Acme Comércio Ltda")

    const byProduct = await ok("GET", `/reports/sales?from=${from}&to=${today}&group_by=product`)
    const items = orders.flatMap((o) => o.items)
    const productFigures = (productId: string | null) => {
      const mine = items.filter((i: Json) => i.product_id === productId)
      return {
        key: productId,
        documents: orders.filter((o) => o.items.some((i: Json) => i.product_id === productId)).length,
        quantity: six(sum(mine.map((i: Json) => i.quantity))),
        subtotal: six(sum(mine.map((i: Json) => i.subtotal))),
        discounts: six(sum(mine.map((i: Json) => i.discount_amount))),
        total: six(sum(mine.map((i: Json) => i.total)))
      }
    }
    expect(productFigures(product)).toMatchObject({ documents: 4, quantity: "9.000000" })
    expect(byProduct.rows).toEqual([
      expect.objectContaining({ ...productFigures(product), label: "Café 1 kg" }),
      expect.objectContaining({ ...productFigures(null), label: null })
    ])
    expect(byProduct.totals.total).toBe(six(sum(items.map((i: Json) => i.total))))

    const bySalesperson = await ok("GET", `/reports/sales?from=${from}&to=${today}&group_by=salesperson_name`)
    expect(bySalesperson.rows.map((row: Json) => row.key).sort()).toEqual(["Ana", "Bruno"])
    const byMonth = await ok("GET", `/reports/sales?from=${from}&to=${today}&group_by=month`)
    expect(byMonth.rows.map((row: Json) => row.key)).toEqual([...new Set(orders.map((o) => o.order_date.slice(0, 7)))].sort())
    expect(byMonth.totals.total).toBe(byCustomer.totals.total)
    const invoices = await ok("GET", `/reports/sales?from=${from}&to=${today}&source=invoices`)
    expect(invoices.totals).toMatchObject({ documents: 0, total: "0.000000", taxes: "0.000000" })
  })

  it("needs reports:read, refuses unknown or malformed parameters and periods over five years with 400 naming them", async () => {
    const { token: without } = await host.createKey(tenant.id, grants("receivables:read"))
    const refused = await call("GET", "/reports/receivables-aging", undefined, without)
    expect([refused.status, refused.body.message]).toEqual([403, "This credential lacks the reports:read permission"])
    const { token: reader } = await host.createKey(tenant.id, grants("reports:read"))
    expect((await call("GET", "/reports/cash-flow", undefined, reader)).status).toBe(200)

    for (const [query, field] of [
      ["receivables-aging?bucket=30", "bucket"],
      ["receivables-aging?buckets=60,30", "buckets"],
      ["receivables-aging?buckets=abc", "buckets"],
      ["receivables-aging?as_of=2026-02-30", "as_of"],
      ["receivables-aging?customer_id=nope", "customer_id"],
      ["cash-flow?interval=year", "interval"],
      ["cash-flow?from=2020-01-01&to=2025-01-01", "to"],
      ["cash-flow?from=2025-01-02&to=2025-01-01", "from"],
      ["sales?group_by=color", "group_by"],
      ["income-statement?basis=cash&basis=accrual", "basis"]
    ]) {
      const response = await call("GET", `/reports/${query}`)
      expect(response.status, query).toBe(400)
      expect(response.body, query).toMatchObject({ status_code: 400, details: { fields: { [field]: [expect.any(String)] } } })
    }
    expect((await call("GET", "/reports/cash-flow?from=2020-01-01&to=2024-12-31")).status).toBe(200)
  })

  it("shows another tenant nothing of this one", async () => {
    const aging = await ok("GET", "/reports/receivables-aging", undefined, other.token)
    expect(aging.totals).toMatchObject({ total: "999.000000", count: 1 })
    expect((await ok("GET", `/reports/receivables-aging?customer_id=${customers.acme}`, undefined, other.token)).rows).toEqual([])
  })
})
