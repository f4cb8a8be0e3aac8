import { addDays, todayIn } from "@erp/core"
import * as boletoUtils from "@mrmgomes/boleto-utils"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestHost, type TestHost, type TestTenant } from "../../../test/support/host.js"
import { storeKinds, testStore } from "../../../test/support/stores.js"


/** A Bradesco CNAB 400 return file: a record per title at the layout's positions, numbered from 1, a header and a trailer. */
const bradescoReturn = (titles: ReadonlyArray<{ ourNumber: string; occurrence: string; day: string; title: string; paid: string }>) => {
  const put = (line: string, from: number, text: string) => line.slice(0, from - 1) + text + line.slice(from - 1 + text.length)
  const cents = (amount: string, width: number) => Math.round(Number(amount) * 100).toString().padStart(width, "0")
  const ddmmyy = (day: string) => `${day.slice(8, 10)}${day.slice(5, 7)}${day.slice(2, 4)}`
  const number = (line: string, n: number) => put(line, 395, String(n).padStart(6, "0"))
  const header = number("02RETORNO01COBRANCA       00000000000004567890PADARIA SAO JOAO LTDA         237BRADESCO       150324016".padEnd(400, " "), 1)
  const details = titles.map((title, index) => {
    let line = "1".padEnd(400, " ")
    line = put(line, 71, title.ourNumber)
    line = put(line, 109, title.occurrence)
    line = put(line, 111, ddmmyy(title.day))
    line = put(line, 153, cents(title.title, 13))
    line = put(line, 176, "0".repeat(13))
    line = put(line, 241, "0".repeat(13))
    line = put(line, 254, cents(title.paid, 13))
    line = put(line, 267, "0".repeat(13))
    line = put(line, 296, ddmmyy(title.day))
    return number(line, index + 2)
  })
  const trailer = number("9201237".padEnd(400, " "), titles.length + 2)
  return [header, ...details, trailer].join("\r\n") + "\r\n"
}

/** Boletos and the bank's return file over HTTP on every store: digits checked by another implementation, a file imported twice. */
describe.each(storeKinds)("boletos and CNAB return files on %s", (kind) => {
  let host: TestHost
  let tenant: TestTenant
  let today: string
  let account: string
  let customer: string

  const call = (method: string, path: string, body?: unknown) => host.request(method, path, { token: tenant.token, body })
  const ok = async (method: string, path: string, body?: unknown) => {
    const response = await call(method, path, body)
    expect(response.status, `${method} ${path}: ${JSON.stringify(response.body)}`).toBeLessThan(300)
    return response.body
  }
  /** A request whose body or answer is not JSON: a file, a page. */
  const send = async (path: string, options: { body?: string; accept?: string } = {}) => {
    const response = await fetch(host.url + path, {
      method: "POST",
      headers: { authorization: `Bearer ${tenant.token}`, ...(options.body ? { "content-type": "text/plain" } : {}), ...(options.accept ? { accept: options.accept } : {}) },
      ...(options.body ? { body: options.body } : {})
    })
    const text = await response.text()
    return { status: response.status, headers: response.headers, text, body: response.headers.get("content-type")?.includes("json") ? JSON.parse(text) : undefined }
  }
  const receivable = (amount: string) => ok("POST", "/receivables", { customer_id: customer, amount, due_date: addDays(today, 10), financial_account_id: account })

  beforeAll(async () => {
    host = await startTestHost(testStore(kind))
    tenant = await host.createTenant("BR")
    today = todayIn("America/Sao_Paulo")
    customer = (await ok("POST", "/customers", { legal_name: "Padaria Lima" })).id
    account = (await ok("POST", "/financial-accounts", { name: "Bradesco", type: "checking" })).id
  })
  afterAll(() => host?.close())

  it("issues a boleto from the account's agreement, its digits read back by boleto-utils, the same our number each time", async () => {
    const wrong = await call("PATCH", `/financial-accounts/${account}`, { br_data: { boleto_bank_code: "999" } })
    expect([wrong.status, Object.keys(wrong.body.details.fields)]).toEqual([422, ["br_data.boleto_bank_code"]])
    await ok("PATCH", `/financial-accounts/${account}`, {
      br_data: { boleto_bank_code: "237", boleto_agency: "1234", boleto_wallet: "09", boleto_account: "0012345", boleto_next_our_number: 42, pix_merchant_name: "Torrefação Serra Azul" }
    })
    const owed = await receivable("1234.56")
    const boleto = await ok("POST", `/receivables/${owed.id}/boleto`)
    expect(boleto).toMatchObject({ receivable_id: owed.id, bank_code: "237", bank_name: "Bradesco", amount: "1234.56", payer_name: "Padaria Lima", beneficiary_name: "Torrefação Serra Azul" })
    expect(boleto.our_number).toMatch(/^09\/00000000042-[0-9P]$/)
    expect(boleto.barcode).toMatch(/^\d{44}$/)
    expect(boleto.digitable_line).toMatch(/^\d{47}$/)
    const read = boletoUtils.validarBoleto(boleto.digitable_line)
    expect(read.sucesso, read.mensagem).toBe(true)
    expect(read.codigoBarras).toBe(boleto.barcode)
    expect(Number(boletoUtils.identificarValor(boleto.digitable_line, "LINHA_DIGITAVEL"))).toBe(1234.56)
    expect(boletoUtils.identificarDataComNovoFator2025(boleto.digitable_line, "LINHA_DIGITAVEL").toISOString().slice(0, 10)).toBe(owed.due_date)

    expect((await ok("GET", `/receivables/${owed.id}`)).our_number).toBe(boleto.our_number)
    expect((await ok("POST", `/receivables/${owed.id}/boleto`)).our_number).toBe(boleto.our_number)
    expect((await ok("GET", `/financial-accounts/${account}`)).br_data.boleto_next_our_number).toBe(43)

    const page = await send(`/receivables/${owed.id}/boleto`, { accept: "text/html" })
    expect(page.status).toBe(200)
    expect(page.headers.get("content-type")).toMatch(/^text\/html/)
    expect(page.headers.get("content-security-policy")).toContain("default-src 'none'")
    expect(page.text).toContain(boleto.formatted_line)
    expect(page.text).toMatch(/<svg[^>]*viewBox/)
    expect(page.text).not.toContain("<script")
  })

  it("settles the titles a return file says were paid, lists what it cannot place, and changes nothing when imported again", async () => {
    const whole = await receivable("100.00")
    const part = await receivable("300.00")
    const [first, second] = [await ok("POST", `/receivables/${whole.id}/boleto`), await ok("POST", `/receivables/${part.id}/boleto`)]
    // Bradesco writes the our number with its check digit, without the wallet.
    const inFile = (printed: string) => printed.replace(/^\d+\//, "").replace("-", "")
    const file = bradescoReturn([
      { ourNumber: inFile(first.our_number), occurrence: "06", day: today, title: "100.00", paid: "100.00" },
      { ourNumber: inFile(second.our_number), occurrence: "06", day: today, title: "300.00", paid: "120.00" },
      { ourNumber: "000009999990", occurrence: "06", day: today, title: "50.00", paid: "50.00" },
      { ourNumber: inFile(second.our_number), occurrence: "02", day: today, title: "300.00", paid: "0" }
    ])
    const imported = await send(`/financial-accounts/${account}/cnab`, { body: file })
    expect(imported.status, JSON.stringify(imported.body)).toBe(201)
    expect(imported.body).toMatchObject({ layout: "400", bank_code: "237", settled: 2, duplicates: 0, other_occurrences: 1, unreadable: [] })
    expect(imported.body.unplaced).toEqual([{ line: 4, our_number: "000009999990", occurrence: "06", reason: "no receivable of this account has this our number" }])
    expect((await ok("GET", `/receivables/${whole.id}`)).status).toBe("paid")
    const partly = await ok("GET", `/receivables/${part.id}`)
    expect([partly.status, partly.allocated_total]).toEqual(["partial", "120.000000"])
    const money = await ok("GET", `/financial-transactions/${imported.body.transactions[0].financial_transaction_id}`)
    expect(money).toMatchObject({ source: "cnab", amount: "100.000000", posted_at: today, is_reconciled: true })

    const again = await send(`/financial-accounts/${account}/cnab`, { body: file })
    expect(again.body).toMatchObject({ settled: 0, duplicates: 2 })
    expect((await ok("GET", `/receivables/${part.id}`)).allocated_total).toBe("120.000000")

    const junk = await send(`/financial-accounts/${account}/cnab`, { body: "not a return file\r\n" })
    expect([junk.status, junk.body.code]).toEqual([422, "INVALID_CNAB"])
  })
})
