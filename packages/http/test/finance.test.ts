import * as fs from "node:fs"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestHost, type TestHost, type TestTenant } from "../../../test/support/host.js"
import { storeKinds, testStore } from "../../../test/support/stores.js"

const ITAU = "3fe12489-cf24-5c1f-8431-20e79d761713"
const CHASE_US = "d5084b3b-22da-5387-829a-a231601fa6b9"
const MISSING = "00000000-0000-4000-8000-000000000000"

const fixture = (name: string) => fs.readFileSync(new URL(`../../../test/fixtures/ofx/${name}`, import.meta.url))

/** Financial accounts, categories and transactions over HTTP, and OFX statements imported into an account. */
describe.each(storeKinds)("finance on %s", (kind) => {
  let host: TestHost
  let tenant: TestTenant
  let other: TestTenant

  const call = (method: string, path: string, body?: unknown, token = tenant.token) => host.request(method, path, { token, body })
  const ok = async (method: string, path: string, body?: unknown, token = tenant.token) => {
    const response = await call(method, path, body, token)
    expect(response.status, `${method} ${path}: ${JSON.stringify(response.body)}`).toBeLessThan(300)
    return response.body
  }
  const ids = (body: { data: Array<{ id: string }> }) => body.data.map((record) => record.id)
  const feed = async (resource: string) =>
    (await ok("GET", `/events?resource=${resource}&limit=100`)).data.map((event: { type: string; resource_id: string }) => `${event.type} ${event.resource_id}`)
  const importOfx = async (accountId: string, file: Buffer | string, token = tenant.token) => {
    const response = await fetch(`${host.url}/financial-accounts/${accountId}/ofx`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/x-ofx" },
      body: file
    })
    return { status: response.status, body: await response.json() }
  }

  beforeAll(async () => {
    host = await startTestHost(testStore(kind))
    tenant = await host.createTenant("BR")
    other = await host.createTenant("BR")
  })
  afterAll(() => host?.close())

  it("financial accounts: spec fields, a bank of the tenant's country, display_order first, the current balance, no removal while transactions exist", async () => {
    const second = await ok("POST", "/financial-accounts", { name: "Caixa da loja", type: "cash", display_order: 2 })
    const first = await ok("POST", "/financial-accounts", {
      bank_id: ITAU,
      name: "Itaú conta corrente",
      reference_code: "0341-1234-56789-0",
      type: "checking",
      initial_balance: "-150.5",
      description: "Conta principal",
      display_order: 1,
      metadata: { erp: "x" }
    })
    expect(first).toMatchObject({
      bank_id: ITAU,
      type: "checking",
      initial_balance: "-150.500000",
      current_balance: "-150.500000",
      is_blocked: false,
      display_order: 1,
      deleted_at: null
    })
    expect(ids(await ok("GET", "/financial-accounts?limit=100")).slice(0, 2)).toEqual([first.id, second.id])
    expect(ids(await ok("GET", "/financial-accounts?sort=name:asc&type=cash"))).toEqual([second.id])
    const refused = await call("POST", "/financial-accounts", { name: "Chase", type: "checking", bank_id: CHASE_US })
    expect(refused.status).toBe(422)
    expect(refused.body.details.fields).toHaveProperty("bank_id")
    expect((await call("POST", "/financial-accounts", { name: "X", type: "wallet" })).status).toBe(400)

    await ok("POST", "/financial-transactions", { account_id: first.id, posted_at: "2024-01-02", amount: "1000" })
    const ignored = await ok("POST", "/financial-transactions", { account_id: first.id, posted_at: "2024-01-03", amount: "-99" })
    await ok("PATCH", `/financial-transactions/${ignored.id}`, { ignored_at: "2024-01-04T12:00:00-03:00" })
    expect((await ok("GET", `/financial-accounts/${first.id}`)).current_balance).toBe("849.500000")
    const blocked = await call("DELETE", `/financial-accounts/${first.id}`)
    expect(blocked.status).toBe(422)
    expect(blocked.body.code).toBe("ACCOUNT_HAS_TRANSACTIONS")
    expect((await call("DELETE", `/financial-accounts/${second.id}`)).status).toBe(204)
  })

  it("financial categories: a tree ordered by position, same type as the parent, no cycles, no removal with subcategories", async () => {
    const root = await ok("POST", "/financial-categories", { name: "Despesas", type: "expense", code: "2", position: 2 })
    const income = await ok("POST", "/financial-categories", { name: "Receitas", type: "income", code: "1", position: 1 })
    const child = await ok("POST", "/financial-categories", { name: "Aluguel", type: "expense", parent_id: root.id, code: "2.01" })
    const grandchild = await ok("POST", "/financial-categories", { name: "Condomínio", type: "expense", parent_id: child.id })
    expect(child).toMatchObject({ parent_id: root.id, position: 0, is_blocked: false, code: "2.01" })
    expect(ids(await ok("GET", `/financial-categories?id[neq]=${MISSING}`)).indexOf(income.id)).toBeLessThan(
      ids(await ok("GET", `/financial-categories?id[neq]=${MISSING}`)).indexOf(root.id)
    )
    expect(ids(await ok("GET", `/financial-categories?parent_id=${root.id}`))).toEqual([child.id])
    expect(ids(await ok("GET", `/financial-categories?parent_id[is_null]=true&type=income`))).toEqual([income.id])

    const cycle = await call("PATCH", `/financial-categories/${root.id}`, { parent_id: grandchild.id })
    expect(cycle.status).toBe(422)
    expect(cycle.body.code).toBe("CATEGORY_CYCLE")
    expect(cycle.body.details.fields).toHaveProperty("parent_id")
    const own = await call("PATCH", `/financial-categories/${root.id}`, { parent_id: root.id })
    expect(own.status).toBe(422)
    expect(own.body).toMatchObject({ code: "CATEGORY_CYCLE", details: { fields: { parent_id: [expect.stringContaining("its own parent")] } } })
    expect(own.body.details.fields).not.toHaveProperty("body")
    const mixed = await call("POST", "/financial-categories", { name: "Juros", type: "income", parent_id: root.id })
    expect(mixed.status).toBe(422)
    expect(mixed.body.details.fields).toHaveProperty("parent_id")
    const retyped = await call("PATCH", `/financial-categories/${root.id}`, { type: "income" })
    expect(retyped.status).toBe(422)
    expect(retyped.body.details.fields).toHaveProperty("type")
    const foreign = await ok("POST", "/financial-categories", { name: "Alheia", type: "expense" }, other.token)
    expect((await call("POST", "/financial-categories", { name: "Sub", type: "expense", parent_id: foreign.id })).body.details.fields).toHaveProperty("parent_id")
    // Five levels at most.
    let parent = grandchild.id
    for (const level of [4, 5]) parent = (await ok("POST", "/financial-categories", { name: `Level ${level}`, type: "expense", parent_id: parent })).id
    const deep = await call("POST", "/financial-categories", { name: "Level 6", type: "expense", parent_id: parent })
    expect(deep.status).toBe(422)
    expect(deep.body.code).toBe("CATEGORY_TOO_DEEP")
    // Moving a subtree under itself's sibling keeps the limit too.
    const other4 = await ok("POST", "/financial-categories", { name: "Outra", type: "expense", parent_id: grandchild.id })
    expect((await call("PATCH", `/financial-categories/${child.id}`, { parent_id: other4.id })).status).toBe(422)

    const removal = await call("DELETE", `/financial-categories/${root.id}`)
    expect(removal.status).toBe(422)
    expect(removal.body.code).toBe("CATEGORY_HAS_CHILDREN")
    expect((await call("DELETE", `/financial-categories/${income.id}`)).status).toBe(204)
    expect((await ok("GET", `/financial-categories/${income.id}?with_deleted=true`)).deleted_at).toEqual(expect.any(String))
  })

  it("financial transactions: every spec field, filters of the spec's table, posted_at descending by default", async () => {
    const account = (await ok("POST", "/financial-accounts", { name: "Filtros", type: "checking" })).id
    const tag = randomUUID().slice(0, 8)
    const a = await ok("POST", "/financial-transactions", {
      account_id: account,
      posted_at: "2024-03-01",
      amount: "-45.9",
      name: `Padaria ${tag}`,
      memo: "pão",
      trn_type: "POS",
      source: "api",
      fitid: `F-${tag}`,
      checknum: "12",
      orig_currency_code: "usd",
      orig_amount: "-9.5",
      user_initiated_at: "2024-02-29",
      metadata: { k: 1 }
    })
    const b = await ok("POST", "/financial-transactions", { account_id: account, posted_at: "2024-03-05", amount: "1200", name: `Cliente ${tag}` })
    const c = await ok("POST", "/financial-transactions", { account_id: account, posted_at: "2024-02-10", amount: "-10", name: `Tarifa ${tag}` })
    expect(a).toMatchObject({
      account_id: account,
      transfer_id: null,
      source: "api",
      fitid: `F-${tag}`,
      trn_type: "POS",
      posted_at: "2024-03-01",
      user_initiated_at: "2024-02-29",
      amount: "-45.900000",
      orig_currency_code: "USD",
      orig_amount: "-9.500000",
      memo: "pão",
      correct_fitid: null,
      correct_action: null,
      is_reconciled: false,
      reconciled_at: null,
      ignored_at: null,
      allocated_total: "0.000000"
    })
    expect(b).toMatchObject({ source: "manual", trn_type: "CREDIT" })
    expect(c.trn_type).toBe("DEBIT")
    for (const field of ["extd_name", "refnum", "srvrtid", "created_at", "updated_at"]) expect(a).toHaveProperty(field)
    const mine = `&account_id=${account}`
    const cases: Array<[string, Array<string>]> = [
      ["", [b.id, a.id, c.id]],
      ["&sort=amount:asc", [a.id, c.id, b.id]],
      ["&posted_at=2024-03-01", [a.id]],
      ["&posted_at[lt]=2024-03-01", [c.id]],
      ["&amount[lt]=0", [a.id, c.id]],
      ["&amount=-45.9", [a.id]],
      ["&source=api", [a.id]],
      ["&source[neq]=api", [b.id, c.id]],
      ["&trn_type=CREDIT", [b.id]],
      [`&name[contains]=padaria ${tag}`, [a.id]],
      ["&name[not_contains]=Tarifa", [b.id, a.id]],
      ["&is_reconciled=false", [b.id, a.id, c.id]],
      ["&ignored_at[is_null]=true", [b.id, a.id, c.id]],
      [`&created_at[gte]=2020-01-01`, [b.id, a.id, c.id]]
    ]
    for (const [query, expected] of cases) expect(ids(await ok("GET", `/financial-transactions?limit=100${mine}${query}`)), query).toEqual(expected)
    await ok("PATCH", `/financial-transactions/${c.id}`, { ignored_at: "2024-03-02T10:00:00Z" })
    expect(ids(await ok("GET", `/financial-transactions?${mine}&ignored_at[gte]=2024-03-02`))).toEqual([c.id])
    expect(ids(await ok("GET", `/financial-transactions?${mine}&ignored_at[is_not_null]=true`))).toEqual([c.id])
    for (const bad of ["amount=abc", "posted_at=yesterday", "is_reconciled=maybe", "no_such_field=x"]) {
      expect((await call("GET", `/financial-transactions?${bad}`)).status, bad).toBe(400)
    }
    expect((await call("POST", "/financial-transactions", { account_id: account, posted_at: "2024-03-01", amount: "1", fitid: `F-${tag}` })).status).toBe(409)
    const foreignAccount = (await ok("POST", "/financial-accounts", { name: "Alheia", type: "cash" }, other.token)).id
    const refused = await call("POST", "/financial-transactions", { account_id: foreignAccount, posted_at: "2024-03-01", amount: "1" })
    expect(refused.status).toBe(422)
    expect(Object.keys(refused.body.details.fields)).toEqual(["account_id"])
    expect((await call("POST", "/financial-transactions", { account_id: account, amount: "1" })).status).toBe(400)
  })

  it("imports a Brazilian bank's OFX statement: one transaction per STMTTRN, a second import adds nothing, corrections apply once", async () => {
    const account = (await ok("POST", "/financial-accounts", { name: "Itaú", type: "checking", bank_id: ITAU, initial_balance: "100" })).id
    const first = await importOfx(account, fixture("itau-2024-01.ofx"))
    expect(first.status, JSON.stringify(first.body)).toBe(201)
    expect(first.body).toEqual({ account_id: account, imported: 6, duplicates: 0, corrected: 0, skipped: [] })
    // Two lines share a day: order by FITID to compare.
    const listed = await ok("GET", `/financial-transactions?account_id=${account}&sort=posted_at:asc`)
    const byFitid = (rows: Array<Record<string, unknown>>) => [...rows].sort((a, b) => String(a.fitid).localeCompare(String(b.fitid)))
    expect(byFitid(listed.data).map((record: Record<string, unknown>) => [record.fitid, record.posted_at, record.amount, record.source])).toEqual([
      ["20240102001", "2024-01-02", "4850.000000", "ofx"],
      ["20240105001", "2024-01-05", "-1250.000000", "ofx"],
      ["20240110001", "2024-01-10", "-389.900000", "ofx"],
      ["20240110001#2", "2024-01-10", "-54.900000", "ofx"],
      ["20240115001", "2024-01-15", "1200.000000", "ofx"],
      ["20240131001", "2024-01-31", "-2.350000", "ofx"]
    ])
    expect(byFitid(listed.data)[0].memo).toBe("PIX RECEBIDO PADARIA SÃO JOÃO LTDA")
    expect((await ok("GET", `/financial-accounts/${account}`)).current_balance).toBe("4452.850000")
    const events = await feed("financial-transactions")
    expect(listed.data.every((record: { id: string }) => events.includes(`financial-transactions.create ${record.id}`))).toBe(true)
    expect((await feed("financial-accounts")).filter((event: string) => event.endsWith(account))).toEqual([`financial-accounts.create ${account}`])

    const again = await importOfx(account, fixture("itau-2024-01.ofx"))
    expect(again.body).toEqual({ account_id: account, imported: 0, duplicates: 6, corrected: 0, skipped: [] })
    expect((await ok("GET", `/financial-transactions?account_id=${account}&limit=100`)).data).toHaveLength(6)

    const corrections = await importOfx(account, fixture("itau-2024-02-corrections.ofx"))
    expect(corrections.body).toEqual({ account_id: account, imported: 1, duplicates: 0, corrected: 2, skipped: [] })
    const after = await ok("GET", `/financial-transactions?account_id=${account}&limit=100&sort=posted_at:asc`)
    expect(byFitid(after.data).map((record: Record<string, unknown>) => record.fitid)).toEqual(["20240102001", "20240105001", "20240110001", "20240110001#2", "20240131001R", "20240202001"])
    expect(after.data.find((record: { fitid: string }) => record.fitid === "20240131001R")).toMatchObject({ amount: "-2.530000", correct_fitid: "20240131001", correct_action: "REPLACE" })
    expect((await importOfx(account, fixture("itau-2024-02-corrections.ofx"))).body).toMatchObject({ imported: 0, corrected: 0, duplicates: 3 })
  })

  it("imports a US card's OFX 2.x, refuses what is not OFX, and keeps to the tenant and the permissions", async () => {
    const card = (await ok("POST", "/financial-accounts", { name: "Chase Sapphire", type: "credit_card" })).id
    expect((await importOfx(card, fixture("chase-card-2024-01.qfx"))).body).toMatchObject({ imported: 3, duplicates: 0 })
    const paris = (await ok("GET", `/financial-transactions?account_id=${card}&name=CAFE PARIS`)).data[0]
    expect(paris).toMatchObject({ amount: "-20.000000", orig_currency_code: "EUR", orig_amount: "-18.181818" })

    const garbage = await importOfx(card, "this is not a statement")
    expect(garbage.status).toBe(422)
    expect(garbage.body).toMatchObject({ code: "INVALID_OFX", details: { fields: { file: [expect.any(String)] } } })
    expect((await importOfx(card, "")).status).toBe(400)
    expect((await importOfx(card, fixture("itau-2024-01.ofx"), other.token)).status).toBe(404)
    expect((await importOfx(MISSING, fixture("itau-2024-01.ofx"))).status).toBe(404)
    const { token } = await host.createKey(tenant.id, [{ resource_code: "financial-accounts", can_read: true, can_create: false, can_update: true, can_delete: false }])
    const forbidden = await importOfx(card, fixture("itau-2024-01.ofx"), token)
    expect(forbidden.status).toBe(403)
    expect((await ok("GET", `/financial-transactions?account_id=${card}&limit=100`)).data).toHaveLength(3)
  })

  it("imports names and memos held in CDATA sections as written", async () => {
    const card = (await ok("POST", "/financial-accounts", { name: "Card with CDATA", type: "credit_card" })).id
    const statement = `<?xml version="1.0" encoding="UTF-8"?>
<?OFX OFXHEADER="200" VERSION="220"?>
<OFX><CREDITCARDMSGSRSV1><CCSTMTTRNRS><CCSTMTRS><CURDEF>USD</CURDEF><CCACCTFROM><ACCTID>4000</ACCTID></CCACCTFROM><BANKTRANLIST>
  <STMTTRN><TRNTYPE>DEBIT</TRNTYPE><DTPOSTED>20240105</DTPOSTED><TRNAMT>-15.00</TRNAMT><FITID>CD1</FITID>
    <NAME><![CDATA[AT&T <Wireless> &amp; Co]]]></NAME>
    <MEMO><![CDATA[Plan a]]b
second line]]></MEMO>
  </STMTTRN>
</BANKTRANLIST></CCSTMTRS></CCSTMTTRNRS></CREDITCARDMSGSRSV1></OFX>`
    expect((await importOfx(card, statement)).body).toMatchObject({ imported: 1, duplicates: 0 })
    const [stored] = (await ok("GET", `/financial-transactions?account_id=${card}`)).data
    expect(stored).toMatchObject({ fitid: "CD1", amount: "-15.000000", name: "AT&T <Wireless> &amp; Co]", memo: "Plan a]]b\nsecond line" })
  })
})
