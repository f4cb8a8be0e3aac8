import { Tenancy } from "@erp/core"
import { createFetchHandler } from "@erp/http"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestHost, type TestHost, type TestTenant } from "../../../test/support/host.js"
import { createOAuthUser, FormSession, hiddenFieldsOf, obtainTokens, type OAuthTestUser, TEST_REDIRECT_URI, tokenRequest } from "../../../test/support/oauth.js"
import { storeKinds, testStore } from "../../../test/support/stores.js"

/** A signed-in panel session over plain HTTP: the fast checks the browser tests leave out. */
const signedIn = async (host: TestHost, user: OAuthTestUser, headers: Record<string, string> = {}) => {
  const session = new FormSession()
  const form = await session.request("GET", `${host.url}/panel/sign-in`, { headers })
  const answer = await session.post(`${host.url}/panel/sign-in`, { ...hiddenFieldsOf(form.text), email: user.email, password: user.password })
  expect(answer.status).toBe(303)
  const page = await session.get(`${host.url}/panel`)
  return { session, csrf: hiddenFieldsOf(page.text).csrf, page }
}

describe.each(storeKinds)("The panel over HTTP on %s", (kind) => {
  let host: TestHost
  let tenant: TestTenant
  let other: TestTenant
  let admin: OAuthTestUser
  let member: OAuthTestUser

  beforeAll(async () => {
    host = await startTestHost(testStore(kind))
    tenant = await host.createTenant("BR")
    other = await host.createTenant("BR")
    admin = await createOAuthUser(host, [{ tenantId: tenant.id, role: "admin" }])
    member = await createOAuthUser(host, [{ tenantId: tenant.id, role: "member", permissions: ["products:read"] }])
  })
  afterAll(() => host?.close())

  it("sends a visitor without a session to sign in, and back where they were going after it", async () => {
    const session = new FormSession()
    const first = await session.get(`${host.url}/panel/events?resource=products`)
    expect(first.status).toBe(303)
    expect(first.location?.pathname).toBe("/panel/sign-in")
    const form = await session.get(first.location!)
    expect(form.headers["content-security-policy"]).toContain("script-src 'self'")
    expect(form.headers["content-security-policy"]).toContain("frame-ancestors 'none'")
    expect(form.headers["set-cookie"]?.join("\n")).toMatch(/erp_csrf=[^;]+;.*Path=\/panel.*HttpOnly.*SameSite=Lax/i)
    const answer = await session.post(`${host.url}/panel/sign-in`, { ...hiddenFieldsOf(form.text), email: admin.email, password: admin.password })
    expect(answer.status).toBe(303)
    expect(`${answer.location?.pathname}${answer.location?.search}`).toBe("/panel/events?resource=products")
    // One session for the panel and the OAuth pages: the cookie covers the whole public path.
    expect(answer.headers["set-cookie"]?.join("\n")).toMatch(/erp_session=[^;]+;.*Path=\/;.*HttpOnly.*SameSite=Lax/i)
    expect((await session.get(answer.location!)).status).toBe(200)
  })

  it("refuses a sign-in without its CSRF token or with a wrong password, keeping the email typed", async () => {
    const session = new FormSession()
    const form = await session.get(`${host.url}/panel/sign-in`)
    const forged = await new FormSession().post(`${host.url}/panel/sign-in`, { ...hiddenFieldsOf(form.text), email: admin.email, password: admin.password })
    expect(forged.status).toBe(403)
    expect(forged.headers["set-cookie"]?.join("\n") ?? "").not.toContain("erp_session=")
    const wrong = await session.post(`${host.url}/panel/sign-in`, { ...hiddenFieldsOf(form.text), email: admin.email, password: "not the password" })
    expect(wrong.status).toBe(401)
    expect(wrong.text).toContain(`value="${admin.email}"`)
    expect(wrong.text).toContain("Email or password is not right.")
  })

  it("refuses a form without the session's CSRF token and changes nothing", async () => {
    const { session } = await signedIn(host, admin)
    const before = (await host.request("GET", "/products?limit=100", { token: tenant.token })).body.data.length
    const answer = await session.post(`${host.url}/panel/keys`, { name: "Forged", "perm.products.read": "on", csrf: "not-the-token" })
    expect(answer.status).toBe(403)
    const list = await session.get(`${host.url}/panel/keys`)
    expect(list.text).not.toContain("Forged")
    expect((await host.request("GET", "/products?limit=100", { token: tenant.token })).body.data.length).toBe(before)
  })

  it("keeps what was typed on a 422 and shows each reason next to its field", async () => {
    const { session, csrf } = await signedIn(host, admin)
    const answer = await session.post(`${host.url}/panel/keys`, { csrf, name: "  ", description: "Kept <b>", expires_at: "2001-02-03" })
    expect(answer.status).toBe(422)
    expect(answer.text).toContain(`id="name-error"`)
    expect(answer.text).toContain(`id="expires_at-error"`)
    expect(answer.text).toContain(`id="permissions-error"`)
    expect(answer.text).toContain(`value="Kept &lt;b&gt;"`)
    expect(answer.text).toContain(`value="2001-02-03"`)

    // The generic record form does the same with the engine's own 422.
    const product = await session.post(`${host.url}/panel/r/products`, { csrf, "f.name": "Desk", "f.sale_price": "-3", "f.tags": "office\nwood" })
    expect(product.status).toBe(422)
    expect(product.text).toMatch(/id="f-sale_price"[^>]*aria-invalid="true"/)
    expect(product.text).toContain(`id="sale_price-error"`)
    expect(product.text).toContain(`value="Desk"`)
    expect(product.text).toContain("office\nwood")
    const made = await session.post(`${host.url}/panel/r/products`, { csrf, "f.name": "Desk", "f.sale_price": "3.50", "f.tags": "office\nwood" })
    expect(made.status).toBe(303)
    const id = made.location!.pathname.split("/").pop()!
    const stored = await host.request("GET", `/products/${id}`, { token: tenant.token })
    expect(stored.body).toMatchObject({ name: "Desk", sale_price: "3.500000", tags: ["office", "wood"] })
  })

  it("reconciles an account's line from its suggestions, undoes it, and runs the automatic reconciliation", async () => {
    const today = new Date().toISOString().slice(0, 10)
    const body = async (path: string, payload: unknown) => (await host.request("POST", path, { token: tenant.token, body: payload })).body
    const account = await body("/financial-accounts", { name: "Conta conciliação", type: "checking" })
    const customer = await body("/customers", { legal_name: "Padaria <b>Lima</b>" })
    const owed = await body("/receivables", { customer_id: customer.id, amount: "88.40", due_date: today })
    const line = await body("/financial-transactions", { account_id: account.id, posted_at: today, amount: "88.40", name: "PIX PADARIA LIMA" })
    const { session, csrf, page } = await signedIn(host, admin)
    expect(page.text).toContain(`href="/panel/reconciliation"`)
    expect((await session.get(`${host.url}/panel/reconciliation`)).text).toContain(`/panel/reconciliation/${account.id}`)
    const screen = await session.get(`${host.url}/panel/reconciliation/${account.id}`)
    expect(screen.status).toBe(200)
    expect(screen.text).toContain(`id="line-${line.id}"`)
    expect(screen.text).toContain("Padaria &lt;b&gt;Lima&lt;/b&gt;")
    const accept = hiddenFieldsOf(screen.text.slice(screen.text.indexOf(`id="line-${line.id}"`)))
    expect(JSON.parse(accept.allocations)).toEqual([{ receivable_id: owed.id, amount: "88.400000" }])
    const forged = await session.post(`${host.url}/panel/reconciliation/${account.id}/lines/${line.id}/reconcile`, { csrf, allocations: "[{\"receivable_id\": 1}]" })
    expect(forged.status).toBe(400)
    const done = await session.post(`${host.url}/panel/reconciliation/${account.id}/lines/${line.id}/reconcile`, { csrf, allocations: accept.allocations })
    expect(done.status).toBe(303)
    expect((await host.request("GET", `/receivables/${owed.id}`, { token: tenant.token })).body.status).toBe("paid")
    const after = await session.get(`${host.url}/panel/reconciliation/${account.id}?done=reconcile`)
    expect(after.text).toContain('id="done-lines"')
    expect(after.text).not.toContain(`id="line-${line.id}"`)
    expect((await session.post(`${host.url}/panel/reconciliation/${account.id}/lines/${line.id}/unreconcile`, { csrf })).status).toBe(303)
    expect((await host.request("GET", `/receivables/${owed.id}`, { token: tenant.token })).body.status).not.toBe("paid")
    expect((await session.post(`${host.url}/panel/reconciliation/${account.id}/auto`, { csrf })).status).toBe(303)
    expect((await host.request("GET", `/financial-transactions/${line.id}`, { token: tenant.token })).body.is_reconciled).toBe(true)
  })

  it("answers another tenant's record as not found", async () => {
    const foreign = await host.request("POST", "/products", { token: other.token, body: { name: "Not yours" } })
    const { session, csrf } = await signedIn(host, admin)
    expect((await session.get(`${host.url}/panel/r/products/${foreign.body.id}`)).status).toBe(404)
    await host.request("DELETE", `/products/${foreign.body.id}`, { token: other.token })
    expect((await session.post(`${host.url}/panel/deleted/products/${foreign.body.id}/restore`, { csrf })).status).toBe(404)
    expect((await host.request("GET", `/products/${foreign.body.id}?with_deleted=true`, { token: other.token })).body.deleted_at).not.toBeNull()
  })

  it("refuses a member the admin-only screens and writes their role does not allow", async () => {
    const { session, csrf, page } = await signedIn(host, member)
    expect(page.text).not.toContain("/panel/keys")
    // The navigation offers what their permissions let them read: products, not customers.
    expect(page.text).toContain(`href="/panel/r/products"`)
    expect(page.text).not.toContain(`href="/panel/r/customers"`)
    expect((await session.get(`${host.url}/panel/keys`)).status).toBe(403)
    const posted = await session.post(`${host.url}/panel/keys`, { csrf, name: "Mine", "perm.products.read": "on" })
    expect(posted.status).toBe(403)
    expect((await session.get(`${host.url}/panel/r/webhook-endpoints`)).status).toBe(404)
    expect((await session.post(`${host.url}/panel/r/products`, { csrf, "f.name": "Nope" })).status).toBe(403)
  })

  it("invites a member with permissions, changes their role and removes them, never the last admin", async () => {
    const solo = await host.createTenant("BR")
    const owner = await createOAuthUser(host, [{ tenantId: solo.id, role: "admin" }])
    const { session, csrf } = await signedIn(host, owner)
    const email = `invited-${Date.now()}@example.com`
    const refused = await session.post(`${host.url}/panel/members`, { csrf, email, role: "member" })
    expect(refused.status).toBe(422)
    expect(refused.text).toContain(`id="permissions-error"`)
    expect(refused.text).toContain(`value="${email}"`)
    const invited = await session.post(`${host.url}/panel/members`, { csrf, email, name: "Invited", role: "member", "perm.products.read": "on", "perm.customers.update": "on" })
    expect(invited.status).toBe(303)
    const list = await session.get(`${host.url}/panel/members`)
    const row = new RegExp(`<tr><td[^>]*><strong>${email}</strong>[\\s\\S]*?</tr>`).exec(list.text)?.[0] ?? ""
    expect(row).toContain("customers:update")
    expect(row).toContain("products:read")
    const memberId = /\/panel\/members\/([0-9a-f-]{36})/.exec(row)![1]
    expect((await session.post(`${host.url}/panel/members`, { csrf, email, role: "admin" })).text).toContain("is already a member")

    expect((await session.post(`${host.url}/panel/members/${memberId}`, { csrf, role: "admin" })).status).toBe(303)
    expect((await session.get(`${host.url}/panel/members`)).text).toMatch(new RegExp(`${email}[\\s\\S]*?admin`))
    expect((await session.post(`${host.url}/panel/members/${memberId}/remove`, { csrf })).status).toBe(303)
    expect((await session.get(`${host.url}/panel/members`)).text).not.toContain(email)

    const ownerId = /\/panel\/members\/([0-9a-f-]{36})/.exec((await session.get(`${host.url}/panel/members`)).text)![1]
    const demoted = await session.post(`${host.url}/panel/members/${ownerId}`, { csrf, role: "member", "perm.products.read": "on" })
    expect(demoted.status).toBe(422)
    expect(demoted.text).toContain("the last admin cannot be demoted or removed")
    expect((await session.post(`${host.url}/panel/members/${ownerId}/remove`, { csrf })).status).toBe(422)
    // Another company's membership is not this admin's to change.
    const outsider = await createOAuthUser(host, [{ tenantId: other.id, role: "member", permissions: ["products:read"] }])
    const foreign = (await host.run(Effect.flatMap(Tenancy, (tenancy) => tenancy.listMembers(other.id)))).find((member) => member.user_id === outsider.id)!
    expect((await session.get(`${host.url}/panel/members/${foreign.id}`)).status).toBe(404)
    expect((await session.post(`${host.url}/panel/members/${foreign.id}/remove`, { csrf })).status).toBe(404)
    expect((await host.run(Effect.flatMap(Tenancy, (tenancy) => tenancy.listMembers(other.id)))).some((member) => member.id === foreign.id)).toBe(true)
  })

  it("creates a webhook endpoint whose secret is shown once and whose delivery log fills after a REST write", async () => {
    const { session, csrf } = await signedIn(host, admin)
    const made = await session.post(`${host.url}/panel/r/webhook-endpoints`, { csrf, "f.url": "https://hooks.example.com/erp-panel", "f.events": "products.*" })
    expect(made.status).toBe(201)
    expect(made.text).toMatch(/whsec_[A-Za-z0-9+/=_-]+/)
    const endpointId = /\/panel\/r\/webhook-endpoints\/([0-9a-f-]{36})/.exec(made.text)![1]
    expect((await host.request("POST", "/products", { token: tenant.token, body: { name: "Hooked" } })).status).toBe(201)
    const page = await session.get(`${host.url}/panel/r/webhook-endpoints/${endpointId}`)
    expect(page.status).toBe(200)
    expect(page.text).not.toMatch(/whsec_/)
    const log = /<table class="stack" id="webhook-deliveries">[\s\S]*?<\/table>/.exec(page.text)?.[0] ?? ""
    expect(log).toContain("products.create")
    const deliveryId = /\/panel\/r\/webhook-deliveries\/([0-9a-f-]{36})/.exec(log)![1]
    const delivery = await session.get(`${host.url}/panel/r/webhook-deliveries/${deliveryId}`)
    expect(delivery.status).toBe(200)
    expect(delivery.text).toContain(`/panel/r/webhook-deliveries/${deliveryId}/actions/retry`)
    const replayed = await session.post(`${host.url}/panel/r/webhook-endpoints/${endpointId}/actions/replay`, { csrf, "f.since": new Date(Date.now() - 3_600_000).toISOString(), "f.until": "", "f.types": "" })
    expect(replayed.status).toBe(200)
    expect(replayed.text).toMatch(/&quot;replayed&quot;: [1-9]/)
    const rotated = await session.post(`${host.url}/panel/r/webhook-endpoints/${endpointId}/actions/rotate-secret`, { csrf })
    expect(rotated.status).toBe(200)
    expect(rotated.text).toMatch(/whsec_/)
  })

  it("creates an OAuth client with its secret shown once, rotates it, and revokes an app's grant", async () => {
    const { session, csrf } = await signedIn(host, admin)
    const refused = await session.post(`${host.url}/panel/apps/clients`, { csrf, name: "Shop app", redirect_uris: "", kind: "confidential" })
    expect(refused.status).toBe(422)
    expect(refused.text).toContain(`id="redirect_uris-error"`)
    expect(refused.text).toContain(`value="Shop app"`)
    const made = await session.post(`${host.url}/panel/apps/clients`, { csrf, name: "Shop app", redirect_uris: TEST_REDIRECT_URI, kind: "confidential" })
    expect(made.status).toBe(201)
    const clientId = /<code id="client-id">([^<]+)<\/code>/.exec(made.text)![1]
    const secret = /<output id="client-secret" class="mono">([^<]+)<\/output>/.exec(made.text)![1]
    const client = { clientId, secret, auth: "client_secret_basic" as const, redirectUri: TEST_REDIRECT_URI, client: undefined as never }
    expect((await session.get(`${host.url}/panel/apps`)).text).toContain(clientId)
    // Another company's admin does not see it, nor can rotate it.
    const stranger = await createOAuthUser(host, [{ tenantId: other.id, role: "admin" }])
    const theirs = await signedIn(host, stranger)
    expect((await theirs.session.get(`${host.url}/panel/apps`)).text).not.toContain(clientId)
    expect((await theirs.session.post(`${host.url}/panel/apps/clients/${clientId}/rotate`, { csrf: theirs.csrf })).status).toBe(404)

    const { tokens } = await obtainTokens(host.url, client, admin, { scope: "products:read", tenantId: tenant.id })
    expect((await host.request("GET", "/products", { token: tokens.access_token })).status).toBe(200)
    const apps = await session.get(`${host.url}/panel/apps`)
    const grantId = new RegExp(`/panel/apps/grants/([0-9a-f-]{36})/revoke`).exec(apps.text)![1]
    expect(apps.text).toContain(admin.email)
    expect((await session.get(`${host.url}/panel/apps/grants/${grantId}/revoke`)).status).toBe(200)
    expect((await session.post(`${host.url}/panel/apps/grants/${grantId}/revoke`, { csrf })).status).toBe(303)
    expect((await host.request("GET", "/products", { token: tokens.access_token })).status).toBe(401)
    expect((await session.get(`${host.url}/panel/apps`)).text).not.toContain(`/panel/apps/grants/${grantId}/revoke`)

    const rotated = await session.post(`${host.url}/panel/apps/clients/${clientId}/rotate`, { csrf })
    const fresh = /<output id="client-secret" class="mono">([^<]+)<\/output>/.exec(rotated.text)![1]
    expect(fresh).not.toBe(secret)
    const refresh = { grant_type: "client_credentials" }
    expect((await tokenRequest(host.url, client, refresh)).status).toBe(401)
    expect((await tokenRequest(host.url, { ...client, secret: fresh }, refresh)).status).not.toBe(401)
  })

  it("switches between the user's companies, and only to theirs", async () => {
    const both = await createOAuthUser(host, [{ tenantId: tenant.id, role: "admin" }, { tenantId: other.id, role: "member", permissions: ["products:read"] }])
    const { session, csrf, page } = await signedIn(host, both)
    const current = (html: string) => /<option value="([^"]+)" selected>/.exec(html)?.[1]
    const first = current(page.text)
    const second = first === tenant.id ? other.id : tenant.id
    expect((await session.post(`${host.url}/panel/tenant`, { csrf, tenant_id: second })).status).toBe(303)
    const switched = await session.get(`${host.url}/panel`)
    expect(current(switched.text)).toBe(second)
    // The role follows the company: admin in one, member in the other.
    expect(switched.text.includes(`href="/panel/keys"`)).toBe(second === tenant.id)
    const stranger = await host.createTenant("BR")
    await session.post(`${host.url}/panel/tenant`, { csrf, tenant_id: stranger.id })
    expect(current((await session.get(`${host.url}/panel`)).text)).toBe(second)
    // A forged cookie naming another company falls back to one of the user's own.
    session.cookies.set("erp_panel_tenant", stranger.id)
    expect([tenant.id, other.id]).toContain(current((await session.get(`${host.url}/panel`)).text))
  })

  it("answers malformed requests with a 4xx page, never a 5xx", async () => {
    const { session, csrf } = await signedIn(host, admin)
    const gets = [
      "/panel/r/products/not-a-uuid", "/panel/r/nothing", "/panel/r/nothing/new", "/panel/r/events/00000000-0000-0000-0000-000000000000",
      "/panel/r/products?cursor=forged", "/panel/r/products?search=%00", "/panel/events?cursor=forged&resource=products", "/panel/events?resource=nothing&action=%00",
      "/panel/deleted?resource=countries", "/panel/deleted?resource=products&search=" + "x".repeat(300), "/panel/keys/not-a-uuid/revoke",
      "/panel/members/not-a-uuid", "/panel/apps/grants/not-a-uuid/revoke", "/panel/apps/clients/%00/revoke", "/panel/sign-in?next=https://evil.example/"
    ]
    for (const path of gets) {
      const answer = await session.get(`${host.url}${path}`)
      expect({ path, status: answer.status < 500 }).toEqual({ path, status: true })
    }
    const posts: Array<[string, Record<string, string>]> = [
      ["/panel/r/products", { csrf, "f.name": "\u0000", "f.metadata": "[1,2" }],
      ["/panel/r/products/not-a-uuid", { csrf, "f.name": "x" }],
      ["/panel/r/products/00000000-0000-0000-0000-000000000000/delete", { csrf }],
      ["/panel/r/products/00000000-0000-0000-0000-000000000000/actions/nothing", { csrf }],
      ["/panel/deleted/products/not-a-uuid/restore", { csrf }],
      ["/panel/keys", { csrf, name: "x".repeat(5000), "perm.products.read": "on", expires_at: "9999-99-99" }],
      ["/panel/members", { csrf, email: "a@b.c", role: "owner" }],
      ["/panel/apps/clients", { csrf, name: "x", redirect_uris: "javascript:alert(1)" }],
      ["/panel/tenant", { csrf, tenant_id: "not-a-uuid" }]
    ]
    for (const [path, form] of posts) {
      const answer = await session.post(`${host.url}${path}`, form)
      expect({ path, status: answer.status < 500 }).toEqual({ path, status: true })
    }
    const raw = await session.request("POST", `${host.url}/panel/keys`, { headers: { "content-type": "application/json" } })
    expect(raw.status).toBe(400)
    const next = await new FormSession().get(`${host.url}/panel/sign-in?next=//evil.example/panel`)
    expect(hiddenFieldsOf(next.text).next).toBe("/panel")
  })

  it("signs in with a control character in next to the panel's first page, and encodes what goes in Location", async () => {
    for (const next of ["/panel/events\r\nSet-Cookie: injected=1", "/panel/keys\n", "/panel/r/products\u0085\u0007"]) {
      const session = new FormSession()
      const form = await session.get(`${host.url}/panel/sign-in?next=${encodeURIComponent(next)}`)
      expect({ next, status: form.status }).toEqual({ next, status: 200 })
      expect(hiddenFieldsOf(form.text).next).toBe("/panel")
      const answer = await session.post(`${host.url}/panel/sign-in`, { ...hiddenFieldsOf(form.text), next, email: admin.email, password: admin.password })
      expect({ next, status: answer.status, location: answer.headers.location }).toEqual({ next, status: 303, location: "/panel" })
      expect(answer.headers["set-cookie"]?.join("\n")).not.toContain("injected")
    }
    const session = new FormSession()
    const form = await session.get(`${host.url}/panel/sign-in`)
    const answer = await session.post(`${host.url}/panel/sign-in`, { ...hiddenFieldsOf(form.text), next: "/panel/r/products?search=café €", email: admin.email, password: admin.password })
    expect(answer.status).toBe(303)
    expect(answer.headers.location).toBe("/panel/r/products?search=caf%C3%A9%20%E2%82%AC")
    // A NUL no form sends: the form again with 400, nothing tried.
    const unreadable = await session.post(`${host.url}/panel/sign-in`, { ...hiddenFieldsOf(form.text), next: "/panel\u0000", email: admin.email, password: admin.password })
    expect(unreadable.status).toBe(400)
    expect(unreadable.text).toContain("The form could not be read; please try again.")
  })

  it("draws the cash flow and the receivables aging on the overview, with a screen per report, its filters and a CSV download", async () => {
    const call = (method: string, path: string, body: unknown) => host.request(method, path, { token: tenant.token, body })
    const customer = (await call("POST", "/customers", { legal_name: "Cliente <b>Ouro</b>" })).body
    const due = new Date(Date.now() - 40 * 86_400_000).toISOString().slice(0, 10)
    expect((await call("POST", "/receivables", { customer_id: customer.id, amount: "150", due_date: due })).status).toBe(201)
    // A payment out today: the next 90 days start below zero, and the chart's zero line sits inside it.
    const account = (await call("POST", "/financial-accounts", { name: "Conta corrente", type: "checking" })).body
    const today = new Date().toISOString().slice(0, 10)
    expect((await call("POST", "/financial-transactions", { account_id: account.id, posted_at: today, amount: "-75.25" })).status).toBe(201)
    const { session, page } = await signedIn(host, admin)
    for (const id of ["cash-flow-chart", "aging-chart", "cash-flow-table", "aging-table"]) expect(page.text, id).toContain(`id="${id}"`)
    expect(page.text.match(/<svg [^>]*role="img"[^>]*viewBox="0 0 \d+ \d+"/g) ?? page.text.match(/<svg [^>]*viewBox="0 0 \d+ \d+"[^>]*role="img"/g)).toHaveLength(2)
    expect(page.text).toContain("<title")
    expect(page.text).toContain("75.250000")
    expect(page.text).toContain("150.000000")
    expect(page.text).toContain("Cliente &lt;b&gt;Ouro&lt;/b&gt;")
    expect(page.text).not.toContain("<b>Ouro</b>")
    expect(page.text).toContain(`href="/panel/reports"`)

    const list = await session.get(`${host.url}/panel/reports`)
    expect(list.status).toBe(200)
    for (const name of ["receivables-aging", "payables-aging", "cash-flow", "income-statement", "sales"]) expect(list.text).toContain(`/panel/reports/${name}`)
    const aging = await session.get(`${host.url}/panel/reports/receivables-aging?buckets=30,60&as_of=`)
    expect(aging.status).toBe(200)
    expect(aging.text).toContain('id="report-chart"')
    expect(aging.text).toContain("<th>31-60</th>")
    expect(aging.text).toContain('name="financial_account_id"')
    expect(aging.text).toContain('href="/panel/reports/receivables-aging.csv?buckets=30%2C60"')
    const csv = await session.get(`${host.url}/panel/reports/receivables-aging.csv?buckets=30,60`)
    expect(csv.status).toBe(200)
    expect(csv.headers["content-type"]).toMatch(/^text\/csv/)
    expect(csv.headers["content-disposition"]).toBe('attachment; filename="receivables-aging.csv"')
    expect(csv.text.split("\r\n")[0]).toBe("customer_id,name,current,1-30,31-60,over-60,total,count")
    expect(csv.text).toContain(",150.000000,1\r\n")
    const flow = await session.get(`${host.url}/panel/reports/cash-flow?interval=week`)
    expect(flow.status).toBe(200)
    for (const input of ['<input name="from" id="p-from" type="date"', '<input name="to" id="p-to" type="date"', '<select name="interval"', '<input name="financial_account_id" id="p-financial_account_id" type="text"']) expect(flow.text, input).toContain(input)
    expect(flow.text).toContain('<option value="week" selected>')
    expect(flow.text).toContain('id="report-chart"')
    for (const name of ["payables-aging", "income-statement", "sales"]) {
      const screen = await session.get(`${host.url}/panel/reports/${name}`)
      expect(screen.status, name).toBe(200)
      expect(screen.text, name).toContain('<form method="get" class="card filters report-filters"')
      expect(screen.text, name).toContain('id="report-table"')
      expect(screen.text, name).toContain(`href="/panel/reports/${name}.csv"`)
    }
    expect((await session.get(`${host.url}/panel/reports/sales.csv`)).headers["content-type"]).toMatch(/^text\/csv/)

    const wrong = await session.get(`${host.url}/panel/reports/cash-flow?interval=year`)
    expect(wrong.status).toBe(400)
    expect(wrong.text).toContain('id="report-error"')
    expect(wrong.text).toContain("interval")
    expect((await session.get(`${host.url}/panel/reports/no-such-report`)).status).toBe(404)

    const { session: memberSession, page: memberPage } = await signedIn(host, member)
    expect(memberPage.text).not.toContain('id="aging-chart"')
    expect(memberPage.text).not.toContain(`href="/panel/reports"`)
    for (const path of ["/panel/reports", "/panel/reports/cash-flow", "/panel/reports/cash-flow.csv"]) {
      const refused = await memberSession.get(`${host.url}${path}`)
      expect(refused.status, path).toBe(403)
      expect(refused.text, path).not.toContain('id="report-table"')
    }
  })

  it("speaks Portuguese to a browser that prefers it", async () => {
    const session = new FormSession()
    const form = await session.request("GET", `${host.url}/panel/sign-in`, { headers: { "accept-language": "pt-BR,pt;q=0.9,en;q=0.8" } })
    expect(form.text).toContain(`<html lang="pt-BR">`)
    expect(form.text).toContain("Entrar no painel")
    const english = await session.request("GET", `${host.url}/panel/sign-in`, { headers: { "accept-language": "fr-FR, en;q=0.5" } })
    expect(english.text).toContain("Sign in to the panel")
  })
})

describe.each(storeKinds)("Where the panel is served on %s", (kind) => {
  it("signs in the embedding app's users with its own session, and their forms pass the CSRF check", async () => {
    const host = await startTestHost(testStore(kind), { signIn: async (request) => request.headers["x-app-user"] })
    try {
      const company = await host.createTenant("BR")
      const user = await createOAuthUser(host, [{ tenantId: company.id, role: "admin" }])
      const session = new FormSession()
      const headers = { "x-app-user": user.email }
      const first = await session.request("GET", `${host.url}/panel/keys/new`, { headers })
      expect(first.status).toBe(200)
      const second = await session.request("GET", `${host.url}/panel/keys/new`, { headers })
      // One session of ours is made once, so the token of a page stays valid for its form.
      expect(hiddenFieldsOf(second.text).csrf).toBe(hiddenFieldsOf(first.text).csrf)
      const made = await session.request("POST", `${host.url}/panel/keys`, { headers, form: { csrf: hiddenFieldsOf(first.text).csrf, name: "From the app", "perm.products.read": "on" } })
      expect(made.status).toBe(201)
      expect((await new FormSession().request("GET", `${host.url}/panel`)).status).toBe(303)
    } finally {
      await host.close()
    }
  })

  it("is absent with the panel turned off", async () => {
    const host = await startTestHost(testStore(kind), { panel: false })
    try {
      expect((await fetch(`${host.url}/panel/sign-in`)).status).toBe(404)
      expect((await fetch(`${host.url}/products`)).status).toBe(401)
    } finally {
      await host.close()
    }
  })

  it("is served by the fetch handler under its base path, every link and cookie under it", async () => {
    const erp = await createFetchHandler({ store: testStore(kind), basePath: "/erp", webhooks: false })
    try {
      const answer = await erp.handler(new Request("http://app.example/erp/panel"))
      expect(answer.status).toBe(303)
      expect(answer.headers.get("location")).toBe(`/erp/panel/sign-in?next=${encodeURIComponent("/erp/panel")}`)
      const form = await erp.handler(new Request("http://app.example/erp/panel/sign-in"))
      const html = await form.text()
      expect(html).toContain(`action="/erp/panel/sign-in"`)
      expect(html).toContain(`href="/erp/panel/assets/panel.css"`)
      expect(form.headers.get("set-cookie")).toMatch(/Path=\/erp\/panel/)
      expect((await erp.handler(new Request("http://app.example/erp/panel/assets/panel.js"))).status).toBe(200)
    } finally {
      await erp.dispose()
    }
  })
})
