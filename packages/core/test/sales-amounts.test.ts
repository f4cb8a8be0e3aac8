import { bestRule, documentAmounts, type FiscalRule, resolveTaxes, taxLine, type TaxItem, type TaxRequest, usStateRate, usStateRates } from "@erp/core"
import * as fs from "node:fs"
import { describe, expect, it } from "vitest"

/** The arithmetic of sales documents and the built-in tax engine, as pure functions: the combinations HTTP tests do not repeat. */
const draft = (items: ReadonlyArray<Record<string, unknown>>, header: Record<string, unknown> = {}) => ({
  values: header,
  children: { items: items.map((values) => ({ id: undefined, current: undefined, values })) }
})

describe("document amounts", () => {
  it.each([
    // quantity, unit price, item discount, header, expected [subtotal, total_discount, total]
    [["3", "19.99", "1.5"], {}, ["59.970000", "1.500000", "58.470000"]],
    [["2.5", "7.333333", "0"], {}, ["18.333332", "0.000000", "18.333332"]],
    [["2.5", "7.333335", "0"], {}, ["18.333338", "0.000000", "18.333338"]],
    [["1", "100", "0"], { discount_rate: "33.333333" }, ["100.000000", "33.333333", "66.666667"]],
    [["1", "0.000001", "0"], { discount_rate: "50" }, ["0.000001", "0.000000", "0.000001"]],
    [["1", "0.000003", "0"], { discount_rate: "50" }, ["0.000003", "0.000002", "0.000001"]],
    [["10", "10", "5"], { discount_amount: "5" }, ["100.000000", "10.000000", "90.000000"]]
  ] as const)("%j with %j rounds once, half to even", (item, header, [subtotal, totalDiscount, total]) => {
    const [quantity, unit_price, discount_amount] = item
    const amounts = documentAmounts(draft([{ quantity, unit_price, discount_amount }], header))
    expect([amounts.subtotal, amounts.total_discount, amounts.total]).toEqual([subtotal, totalDiscount, total])
  })
})

const rule = (overrides: Partial<FiscalRule>): FiscalRule => ({
  id: overrides.id ?? "r",
  name: "rule",
  ncm_prefix: null,
  cfop: null,
  operation_type: null,
  origin_state_code: null,
  destination_state_code: null,
  priority: 0,
  taxes: [{ tax_code: "ICMS", tax_name: null, rate: "18", base_reduction: "0", is_withheld: false, is_included: true, jurisdiction: null }],
  ...overrides
})

const item = (br: Record<string, unknown> = {}, us: Record<string, unknown> = {}): TaxItem => ({
  index: 0, amount: "100.000000", quantity: "1", unit_price: "100", product: null, br_data: br, us_data: us
})

const request = (rules: ReadonlyArray<FiscalRule>, invoice: Partial<TaxRequest["invoice"]> = {}, country = "BR"): TaxRequest => ({
  tenantCountry: country,
  invoice: {
    invoice_date: null, operation_type: null, product_type: null, customer_tax_type: null,
    origin_state_code: "SP", origin_country_code: "BR", destination_state_code: "RJ", destination_country_code: "BR", ...invoice
  },
  items: [],
  fiscalRules: rules
})

describe("the built-in tax engine", () => {
  it("picks the matching rule by priority, then the most criteria, then the longest NCM prefix", () => {
    const rules = [
      rule({ id: "any" }),
      rule({ id: "ncm4", ncm_prefix: "0901" }),
      rule({ id: "ncm6", ncm_prefix: "090121" }),
      rule({ id: "ncm4-rj", ncm_prefix: "0901", destination_state_code: "RJ" }),
      rule({ id: "other-state", ncm_prefix: "090121", destination_state_code: "MG", priority: 9 }),
      rule({ id: "cfop", cfop: "6102" })
    ]
    const coffee = item({ ncm_code: "09012100" })
    expect(bestRule(rules, coffee, request(rules))?.id).toBe("ncm4-rj")
    expect(bestRule(rules, item({ ncm_code: "09012100", cfop: "6102" }), request(rules))?.id).toBe("ncm4-rj")
    expect(bestRule(rules, coffee, request(rules, { destination_state_code: "BA" }))?.id).toBe("ncm6")
    expect(bestRule(rules, item({ ncm_code: "85094050" }), request(rules))?.id).toBe("any")
    expect(bestRule([...rules, rule({ id: "urgent", priority: 1 })], coffee, request(rules))?.id).toBe("urgent")
    expect(bestRule([rule({ id: "x", ncm_prefix: "0901" })], item(), request([]))).toBeUndefined()
  })

  it("applies base reduction before the rate, each rounded once", () => {
    expect(taxLine("333.333333", { tax_code: "ICMS", tax_name: null, rate: "18", base_reduction: "33.33", is_withheld: false, is_included: true, jurisdiction: "SP" }, "fiscal_rule"))
      .toEqual({ tax_code: "ICMS", tax_name: "ICMS", base_amount: "222.233333", rate: "18.000000", amount: "40.002000", jurisdiction: "SP", is_withheld: false, is_included: true, source: "fiscal_rule" })
  })

  it("US: the state's base rate; none for exempt items, exempt customers, states without sales tax; tenant rules win", () => {
    expect(usStateRate("CA")).toMatchObject({ state: "CA", rate: "7.250000", source: expect.stringMatching(/^California Department of Tax and Fee Administration .*; checked \d{4}-\d{2}-\d{2}$/) })
    expect(usStateRate("OR")?.rate).toBe("0.000000")
    const us = (invoice: Partial<TaxRequest["invoice"]>, items: ReadonlyArray<TaxItem>, rules: ReadonlyArray<FiscalRule> = []) =>
      resolveTaxes({ ...request(rules, invoice, "US"), items }).map((resolved) => resolved.taxes.map((tax) => `${tax.tax_code} ${tax.amount}`))
    expect(us({ destination_state_code: "NY" }, [item()])).toEqual([["SALES_TAX 4.000000"]])
    expect(us({ destination_state_code: "NY" }, [item({}, { sales_tax_category: "Exempt" })])).toEqual([[]])
    expect(us({ destination_state_code: "NY", customer_tax_type: "exempt" }, [item()])).toEqual([[]])
    expect(us({ destination_state_code: "OR" }, [item()])).toEqual([[]])
    expect(us({ destination_state_code: null }, [item()])).toEqual([[]])
    expect(us({ destination_state_code: "NY" }, [item()], [rule({ destination_state_code: "NY", taxes: [{ tax_code: "SALES_TAX", tax_name: null, rate: "8.875", base_reduction: "0", is_withheld: false, is_included: false, jurisdiction: "US-NY" }] })]))
      .toEqual([["SALES_TAX 8.875000"]])
  })

  it("US state base rates: the revenue departments' published general rates, local taxes excluded, by invoice date", () => {
    const on = (date: string) => Object.fromEntries(usStateRates(date).map((rate) => [rate.state, rate.rate]))
    expect(on("2026-11-27")).toMatchObject({
      CA: "7.250000", AZ: "5.600000", LA: "5.000000", NY: "4.000000", TX: "6.250000", NC: "4.750000", NM: "4.875000", SD: "4.200000",
      UT: "6.100000", VA: "5.300000", NV: "6.850000", NJ: "6.625000", MO: "4.225000", MN: "6.875000", CO: "2.900000", HI: "4.000000",
      AK: "0.000000", DE: "0.000000", MT: "0.000000", NH: "0.000000", OR: "0.000000"
    })
    // Louisiana's rate went from 4.45% to 5% on 2025-01-01: an invoice takes the rate of its date.
    expect(usStateRate("LA", "2024-12-31")).toMatchObject({ rate: "4.450000", effective_from: null })
    expect(usStateRate("LA", "2025-01-01")).toMatchObject({ rate: "5.000000", effective_from: "2025-01-01" })
    expect(usStateRate("PR", "2026-01-01")).toBeUndefined()
    expect(usStateRate("ca")).toBeUndefined()

    // One rate for each of the catalog's states and DC, none for its territories.
    const catalog = JSON.parse(fs.readFileSync(new URL("../src/catalogs/data/states.json", import.meta.url), "utf8")) as { records: Array<{ country_code: string; state_code: string; type: string }> }
    const states = catalog.records.filter((state) => state.country_code === "US" && state.type !== "territory").map((state) => state.state_code).sort()
    expect(states).toHaveLength(51)
    expect(usStateRates("2026-11-27").map((rate) => rate.state)).toEqual(states)

    const [[line]] = resolveTaxes({ ...request([], { destination_state_code: "LA", invoice_date: "2025-03-01" }, "US"), items: [item()] }).map((resolved) => resolved.taxes)
    expect(line).toMatchObject({ tax_name: "LA sales tax, state base rate (local taxes not included)", rate: "5.000000", amount: "5.000000", jurisdiction: "US-LA", source: "us_state_rate" })
  })
})
