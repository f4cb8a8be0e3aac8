import { randomInt, randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestHost, type TestHost } from "../../../test/support/host.js"
import { authorizationUrl, createOAuthClient, createOAuthUser, FormSession, hiddenFieldsOf, makePkce, type OAuthTestUser, plainRequest } from "../../../test/support/oauth.js"
import { storeKinds, testStore } from "../../../test/support/stores.js"

const WRONG = "not the password at all"

/** One panel sign-in from a fresh address (its own per-address counter): the answer's status. */
const panelSignIn = async (host: TestHost, email: string, password: string) => {
  const session = new FormSession()
  const form = await session.get(`${host.url}/panel/sign-in`)
  return session.post(`${host.url}/panel/sign-in`, { ...hiddenFieldsOf(form.text), email, password })
}

describe.each(storeKinds)("password attempts per account on %s", (kind) => {
  let host: TestHost
  let user: OAuthTestUser

  beforeAll(async () => {
    host = await startTestHost(testStore(kind))
    const tenant = await host.createTenant("BR")
    user = await createOAuthUser(host, [{ tenantId: tenant.id, role: "admin" }])
  })
  afterAll(() => host?.close())

  it("refuses an account's 11th wrong password in 5 minutes from any address, even the right one, as for an account nobody has", async () => {
    const nobody = `nobody-${randomUUID()}@example.com`
    for (const email of [user.email, nobody]) {
      const statuses: Array<number> = []
      // Each attempt from a fresh address: the limit per address never applies.
      for (let attempt = 0; attempt < 10; attempt++) statuses.push((await panelSignIn(host, attempt % 2 === 0 ? email : ` ${email.toUpperCase()} `, WRONG)).status)
      expect(statuses).toEqual(Array(10).fill(401))
      const held = await panelSignIn(host, email, email === user.email ? user.password : WRONG)
      expect(held.status).toBe(429)
      expect(held.json).toMatchObject({ status_code: 429, code: "RATE_LIMITED", message: expect.stringMatching(/^Too many sign-in attempts for this account\. Retry in \d+ seconds?\.$/) })
      expect(Number(held.headers["retry-after"])).toBeGreaterThan(0)
      expect(Number(held.headers["retry-after"])).toBeLessThanOrEqual(300)
      expect(held.headers["set-cookie"]?.join("\n") ?? "").not.toContain("erp_session=")
    }
  }, 120_000)

  it("counts the panel's and the authorization page's attempts together", async () => {
    const other = await createOAuthUser(host)
    for (let attempt = 0; attempt < 10; attempt++) expect((await panelSignIn(host, other.email, WRONG)).status).toBe(401)
    const client = await createOAuthClient(host)
    const session = new FormSession()
    const url = authorizationUrl(host.url, { clientId: client.clientId, pkce: makePkce() })
    const page = await session.get(url)
    expect(page.status).toBe(200)
    const held = await session.post(new URL("/oauth/authorize", url), { ...hiddenFieldsOf(page.text), email: other.email, password: other.password })
    expect(held.status).toBe(429)
    expect(held.json).toMatchObject({ code: "RATE_LIMITED", message: expect.stringContaining("for this account") })
  }, 120_000)

  it("starts an account's count over once its password is given", async () => {
    const typist = await createOAuthUser(host)
    for (let attempt = 0; attempt < 9; attempt++) expect((await panelSignIn(host, typist.email, WRONG)).status).toBe(401)
    expect((await panelSignIn(host, typist.email, typist.password)).status).toBe(303)
    for (let attempt = 0; attempt < 9; attempt++) expect((await panelSignIn(host, typist.email, WRONG)).status).toBe(401)
    expect((await panelSignIn(host, typist.email, typist.password)).status).toBe(303)
  }, 120_000)
})

describe.each(storeKinds)("addresses behind a trusted proxy on %s", (kind) => {
  let host: TestHost
  let authorize: URL

  beforeAll(async () => {
    host = await startTestHost(testStore(kind), { oauth: { trustProxy: true } })
    const client = await createOAuthClient(host)
    authorize = authorizationUrl(host.url, { clientId: client.clientId, pkce: makePkce() })
  })
  afterAll(() => host?.close())

  const from = (forwardedFor: string) => plainRequest(authorize, { headers: { "x-forwarded-for": forwardedFor } })

  /** GET /oauth/authorize is limited to 20 a minute per address: the statuses of `count` requests. */
  const statuses = async (count: number, forwardedFor: (attempt: number) => string) => {
    const seen: Array<number> = []
    for (let attempt = 0; attempt < count; attempt++) seen.push((await from(forwardedFor(attempt))).status)
    return seen
  }

  it("keys a caller by the address the proxy appended, whatever the client wrote before it", async () => {
    const caller = `198.51.100.${randomInt(1, 255)}`
    // A client picking a fresh first entry per request is still one caller.
    expect(await statuses(21, () => `203.0.113.${randomInt(1, 255)}, ${caller}`)).toEqual([...Array(20).fill(200), 429])
    expect((await from(caller)).status).toBe(429)
    expect((await from(`${caller}, 198.18.0.${randomInt(1, 255)}`)).status).toBe(200)
  })

  it("keys IPv6 callers by their /64 and IPv4-mapped callers by their IPv4 address", async () => {
    const network = `2001:db8:${randomInt(1, 0xffff).toString(16)}:${randomInt(1, 0xffff).toString(16)}`
    const anyHost = () => Array.from({ length: 4 }, () => randomInt(0, 0x10000).toString(16)).join(":")
    expect(await statuses(21, (attempt) => (attempt % 2 === 0 ? `${network}:${anyHost()}` : `[${network}:${anyHost()}]:443`))).toEqual([...Array(20).fill(200), 429])
    expect((await from(`2001:db8:1:${randomInt(1, 0xffff).toString(16)}::1`)).status).toBe(200)
    const ipv4 = `192.0.2.${randomInt(1, 255)}`
    expect(await statuses(21, (attempt) => (attempt % 2 === 0 ? ipv4 : `::ffff:${ipv4}`))).toEqual([...Array(20).fill(200), 429])
  })
})
