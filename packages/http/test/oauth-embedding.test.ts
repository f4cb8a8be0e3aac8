import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestHost, type TestHost } from "../../../test/support/host.js"
import {
  authorizationUrl,
  createOAuthClient,
  createOAuthUser,
  FormSession,
  freshLoopbackAddress,
  hiddenFieldsOf,
  makePkce,
  type OAuthTestUser,
  plainRequest,
  tokenRequest
} from "../../../test/support/oauth.js"
import { storeKinds, testStore } from "../../../test/support/stores.js"

/** An embedding app signs its users in with its own session: here, a header its proxy would set. */
describe.each(storeKinds)("the embedding app's sign-in hook on %s", (kind) => {
  let host: TestHost
  let user: OAuthTestUser

  beforeAll(async () => {
    host = await startTestHost(testStore(kind), { signIn: async (request) => request.headers["x-app-user"] })
    const tenant = await host.createTenant("BR")
    user = await createOAuthUser(host, [{ tenantId: tenant.id, role: "admin" }])
  })
  afterAll(() => host?.close())

  it("skips our sign-in page for the app's user and goes straight to consent", async () => {
    const client = await createOAuthClient(host)
    const pkce = makePkce()
    const session = new FormSession()
    const url = authorizationUrl(host.url, { clientId: client.clientId, pkce, state: "s1", scope: "products:read" })
    const consent = await session.request("GET", url, { headers: { "x-app-user": user.email } })
    expect(consent.status).toBe(200)
    expect(consent.text).toContain("wants to access your account")
    expect(consent.text).not.toContain('name="password"')
    const decided = await session.request("POST", new URL("/oauth/authorize", host.url), {
      form: { ...hiddenFieldsOf(consent.text), decision: "allow" },
      headers: { "x-app-user": user.email }
    })
    expect(decided.status).toBe(303)
    const redirect = new URL(decided.location!)
    expect(redirect.searchParams.get("state")).toBe("s1")
    const tokens = await tokenRequest(host.url, client, {
      grant_type: "authorization_code",
      code: redirect.searchParams.get("code")!,
      redirect_uri: client.redirectUri,
      code_verifier: pkce.verifier
    })
    expect(tokens.status).toBe(200)
    expect((await host.request("GET", "/products", { token: tokens.json.access_token })).status).toBe(200)
  })

  it("shows our sign-in page when the app knows no user", async () => {
    const client = await createOAuthClient(host)
    const page = await new FormSession().get(authorizationUrl(host.url, { clientId: client.clientId, pkce: makePkce() }))
    expect(page.status).toBe(200)
    expect(page.text).toContain('name="password"')
  })
})

describe.each(storeKinds)("per-address limits behind a trusted proxy on %s", (kind) => {
  let host: TestHost

  beforeAll(async () => {
    host = await startTestHost(testStore(kind), { oauth: { trustProxy: true } })
  })
  afterAll(() => host?.close())

  it("counts each address the proxy appended to X-Forwarded-For on its own", async () => {
    const client = await createOAuthClient(host)
    const url = authorizationUrl(host.url, { clientId: client.clientId, pkce: makePkce() })
    const from = (address: string) => fetch(url, { headers: { "x-forwarded-for": `10.0.0.1, ${address}` } })
    const first = `198.51.100.${Math.floor(Math.random() * 250) + 1}`
    // The window slides: 20 hits within a minute, whenever they fall, leave no room for a 21st.
    for (let hit = 0; hit < 20; hit++) expect((await from(first)).status).toBe(200)
    const refused = await from(first)
    expect(refused.status).toBe(429)
    expect(refused.headers.get("retry-after")).toMatch(/^\d+$/)
    expect((await from(`203.0.113.${Math.floor(Math.random() * 250) + 1}`)).status).toBe(200)
  })
})

/** `erp serve --public-url https://erp.example.com/erp` behind a proxy that maps /erp/… to /…. */
describe.each(storeKinds)("a public URL with a path on %s", (kind) => {
  const PUBLIC = "https://erp.example.com/erp"
  let host: TestHost

  beforeAll(async () => {
    host = await startTestHost(testStore(kind), { oauth: { publicUrl: `${PUBLIC}/` } })
  })
  afterAll(() => host?.close())

  it("names the path in the metadata, and answers it where RFC 8414 and RFC 9728 put it", async () => {
    const server = await host.request("GET", "/.well-known/oauth-authorization-server/erp")
    expect(server.status).toBe(200)
    expect(server.body).toMatchObject({ issuer: PUBLIC, authorization_endpoint: `${PUBLIC}/oauth/authorize`, token_endpoint: `${PUBLIC}/oauth/token` })
    const resource = await host.request("GET", "/.well-known/oauth-protected-resource/erp")
    expect(resource.body).toMatchObject({ resource: PUBLIC, authorization_servers: [PUBLIC] })
    expect((await host.request("GET", "/.well-known/oauth-authorization-server/other")).status).toBe(404)
  })

  it("points the 401 challenge at the path's resource metadata", async () => {
    const unauthorized = await host.request("GET", "/products")
    expect(unauthorized.headers.get("www-authenticate")).toContain(`resource_metadata="https://erp.example.com/.well-known/oauth-protected-resource/erp"`)
  })

  it("posts the sign-in form and scopes its cookies under the path", async () => {
    const client = await createOAuthClient(host)
    const page = await plainRequest(authorizationUrl(host.url, { clientId: client.clientId, pkce: makePkce() }), { localAddress: freshLoopbackAddress() })
    expect(page.status).toBe(200)
    expect(page.text).toContain('action="/erp/oauth/authorize"')
    expect(page.headers["set-cookie"]?.join("\n")).toMatch(/erp_csrf=[^;]+;.*Path=\/erp\/oauth/i)
  })
})
