import BigNumber from "bignumber.js"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { erp, json } from "../../../test/support/cli.js"
import { testDataDir } from "../../../test/support/stores.js"

type Json = Record<string, any>

const SIZE = ["--customers", "4", "--suppliers", "2", "--products", "5", "--orders", "4", "--payables", "3"]

const sum = (values: ReadonlyArray<unknown>) => values.reduce<BigNumber>((total, value) => total.plus(String(value)), new BigNumber(0))

const isCpf = (digits: string) => {
  const check = (length: number) => {
    const rest = [...digits.slice(0, length)].reduce((total, digit, index) => total + Number(digit) * (length + 1 - index), 0) % 11
    return rest < 2 ? 0 : 11 - rest
  }
  return /^\d{11}$/.test(digits) && check(9) === Number(digits[9]) && check(10) === Number(digits[10])
}

describe("erp seed demo", () => {
  let dir: string
  let flags: Array<string>
  let first: Json
  let again: Json
  const records = (tenant: string, resource: string): Array<Json> =>
    fs.readFileSync(path.join(dir, tenant, `${resource}.ndjson`), "utf8").trim().split("\n").filter(Boolean).map((line) => JSON.parse(line))

  beforeAll(async () => {
    dir = testDataDir()
    flags = ["--data-dir", dir]
    first = json(await erp([...flags, "seed", "demo", "--tenants", "2", "--country", "mixed", "--seed", "5", ...SIZE, "--json"]))
    again = json(await erp([...flags, "seed", "demo", "--tenants", "1", "--country", "mixed", "--seed", "5", ...SIZE, "--json"]))
    for (const tenant of [...first.tenants, ...again.tenants]) {
      expect((await erp([...flags, "export", "all", "--tenant", tenant.id, "--out", path.join(dir, tenant.id)])).code).toBe(0)
    }
  })
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

  it("makes a Brazilian and a US tenant whose records hold together: orders from quotes, invoices with taxes, receivables and payables settled by allocations", () => {
    const [br, us] = first.tenants
    expect([br.country, us.country]).toEqual(["BR", "US"])
    expect(br.records).toMatchObject({ customers: 4, suppliers: 2, products: 5, quotes: 4, "sales-orders": 4, invoices: 4, receivables: 4, payables: 3, "financial-accounts": 2 })
    for (const tenant of first.tenants) {
      const invoices = records(tenant.id, "invoices")
      const receivables = records(tenant.id, "receivables")
      const orders = records(tenant.id, "sales-orders")
      const quotes = records(tenant.id, "quotes")
      expect(quotes.every((quote) => quote.status === "converted")).toBe(true)
      expect(orders.every((order) => order.status === "confirmed" && quotes.some((quote) => quote.id === order.quote_id))).toBe(true)
      for (const invoice of invoices) {
        expect(invoice.status).toBe("issued")
        expect(new BigNumber(invoice.subtotal).eq(sum(invoice.items.map((item: Json) => item.subtotal)))).toBe(true)
        expect(new BigNumber(invoice.total_tax).gt(0)).toBe(true)
        const receivable = receivables.find((candidate) => candidate.invoice_id === invoice.id)!
        expect(receivable.amount).toBe(invoice.net_receivable_total)
      }
      for (const settled of [...receivables, ...records(tenant.id, "payables")]) {
        const allocated = sum(settled.allocations.map((allocation: Json) => allocation.allocated_amount))
        const expected = allocated.isZero() ? ["pending", "overdue"] : allocated.eq(settled.amount) ? ["paid"] : ["partial"]
        expect(expected).toContain(settled.status)
      }
    }
    const brCustomers = records(br.id, "customers")
    expect(brCustomers.filter((customer) => customer.tax_id_type === "CPF").every((customer) => isCpf(customer.tax_id))).toBe(true)
    expect(brCustomers.every((customer) => customer.city?.id && customer.country.iso2 === "BR")).toBe(true)
    expect(records(br.id, "products").every((product) => /^\d{8}$/.test(product.br_data.ncm_code))).toBe(true)
    expect(records(us.id, "products").every((product) => /^\d{4}\.\d{2}\.\d{4}$/.test(product.us_data.hts_code))).toBe(true)
    expect(records(us.id, "customers").filter((customer) => customer.tax_id_type === "EIN").length).toBeGreaterThan(0)
  })

  it("gives the same records for the same seed", () => {
    const [br] = first.tenants
    const [copy] = again.tenants
    expect(copy.name).toBe(br.name)
    const shape = (tenant: string) => ({
      customers: records(tenant, "customers").map((customer) => [customer.legal_name, customer.tax_id, customer.city?.id]),
      products: records(tenant, "products").map((product) => [product.name, product.sale_price]),
      invoices: records(tenant, "invoices").map((invoice) => [invoice.invoice_date, invoice.total, invoice.total_tax])
    })
    expect(shape(copy.id)).toEqual(shape(br.id))
  })
})
