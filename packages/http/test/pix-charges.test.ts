import { addDays, todayIn } from "@erp/core"
import { hasError, isStaticPix, parsePix } from "pix-utils"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestHost, type TestHost, type TestTenant } from "../../../test/support/host.js"
import { storeKinds, testStore } from "../../../test/support/stores.js"


/** PIX charges of receivables over HTTP on every store, each BR Code read back by another implementation (pix-utils). */
describe.each(storeKinds)("PIX charges on %s", (kind) => {
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

  beforeAll(async () => {
    host = await startTestHost(testStore(kind))
    tenant = await host.createTenant("BR")
    today = todayIn("America/Sao_Paulo")
    account = (await ok("POST", "/financial-accounts", { name: "Itaú", type: "checking" })).id
    customer = (await ok("POST", "/customers", { legal_name: "Padaria Lima" })).id
  })
  afterAll(() => host?.close())

  it("keeps an account's PIX key as the directory writes it, and refuses one that is none", async () => {
    const wrong = await call("PATCH", `/financial-accounts/${account}`, { br_data: { pix_key: "123.456.789-00" } })
    expect([wrong.status, Object.keys(wrong.body.details.fields)]).toEqual([422, ["br_data.pix_key"]])
    const saved = await ok("PATCH", `/financial-accounts/${account}`, {
      br_data: { pix_key: "04.252.011/0001-10", pix_merchant_name: "Torrefação Serra Azul Ltda", pix_merchant_city: "São Paulo" }
    })
    expect(saved.br_data).toMatchObject({ pix_key: "04252011000110", pix_key_type: "cnpj", pix_merchant_city: "São Paulo" })
  })

  it("answers a BR Code for what is open, with the same txid each time, which a statement line carrying it matches at 1", async () => {
    const receivable = await ok("POST", "/receivables", { customer_id: customer, amount: "150.00", due_date: addDays(today, 5), financial_account_id: account })
    const charge = await ok("POST", `/receivables/${receivable.id}/pix`)
    expect(charge).toMatchObject({ receivable_id: receivable.id, financial_account_id: account, amount: "150.00" })
    expect(charge.qr_code_svg).toMatch(/^<svg[^>]*viewBox/)
    const read = parsePix(charge.br_code)
    if (hasError(read) || !isStaticPix(read)) throw new Error(`pix-utils could not read ${charge.br_code}`)
    expect(read).toMatchObject({ pixKey: "04252011000110", transactionAmount: 150, merchantName: "Torrefacao Serra Azul Ltd", merchantCity: "Sao Paulo", txid: charge.txid })
    expect((await ok("GET", `/receivables/${receivable.id}`)).pix_txid).toBe(charge.txid)

    // Part paid: the next charge asks for the rest, under the same txid.
    const money = await ok("POST", "/financial-transactions", { account_id: account, posted_at: today, amount: "50.00" })
    await ok("POST", `/receivables/${receivable.id}/allocate`, { financial_transaction_id: money.id, allocated_amount: "50.00" })
    const rest = await ok("POST", `/receivables/${receivable.id}/pix`)
    expect([rest.txid, rest.amount]).toEqual([charge.txid, "100.00"])

    const line = await ok("POST", "/financial-transactions", { account_id: account, posted_at: today, amount: "100.00", name: "PIX RECEBIDO", memo: `TXID ${charge.txid}` })
    const [best] = (await ok("GET", `/financial-transactions/${line.id}/match-suggestions`)).data
    expect(best).toMatchObject({ score: 1, allocations: [{ receivable_id: receivable.id, amount: "100.000000" }] })
    expect(best.reasons).toContain("pix_txid_in_line")
  })

  it("refuses a paid receivable, and one whose account has no PIX key, changing nothing", async () => {
    const bare = (await ok("POST", "/financial-accounts", { name: "Caixa", type: "cash" })).id
    const unset = await ok("POST", "/receivables", { customer_id: customer, amount: "10.00", due_date: today, financial_account_id: bare })
    const refused = await call("POST", `/receivables/${unset.id}/pix`)
    expect([refused.status, refused.body.code, Object.keys(refused.body.details.fields)]).toEqual([422, "PIX_NOT_SET_UP", ["financial_account_id"]])
    expect((await ok("GET", `/receivables/${unset.id}`)).pix_txid).toBeNull()
    const cancelled = await ok("POST", "/receivables", { customer_id: customer, amount: "10.00", due_date: today, financial_account_id: account })
    await ok("POST", `/receivables/${cancelled.id}/cancel`)
    expect((await call("POST", `/receivables/${cancelled.id}/pix`)).body.code).toBe("NOT_CHARGEABLE")
  })
})
