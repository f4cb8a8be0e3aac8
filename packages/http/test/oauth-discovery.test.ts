import * as client from "openid-client"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestHost, type TestHost, type TestTenant } from "../../../test/support/host.js"
import {
  authorizationUrl,
  createOAuthClient,
  createOAuthUser,
  driveAuthorization,
  freshLoopbackAddress,
  makePkce,
  type OAuthTestUser,
  plainRequest,
  TEST_REDIRECT_URI
} from "../../../test/support/oauth.js"
import { storeKinds, testStore } from "../../../test/support/stores.js"

const SCOPE = /^[a-z][a-z0-9-]*:(read|create|update|delete)$/

/** From an address of its own: registrations are rate-limited per address. */
const register = (host: TestHost, body: unknown) =>
  plainRequest(`${host.url}/oauth/register`, {
    method: "POST",
    localAddress: freshLoopbackAddress(),
    headers: { "content-type": "application/json" },
    body: typeof body === "string" ? body : JSON.stringify(body)
  })

describe.each(storeKinds)("OAuth discovery on %s", (kind) => {
  let host: TestHost
  let tenant: TestTenant
  let admin: OAuthTestUser

  beforeAll(async () => {
    // Other files register clients from this address on the same database at the same time: the per-address limit is not what this file tests.
    host = await startTestHost(testStore(kind), { oauth: { registrationsPerMinute: 1_000 } })
    tenant = await host.createTenant("BR")
    admin = await createOAuthUser(host, [{ tenantId: tenant.id, role: "admin" }])
  })
  afterAll(() => host?.close())

  describe("authorization server metadata (RFC 8414)", () => {
    it("names as issuer the URL the client used, without a trailing slash", async () => {
      const response = await host.request("GET", "/.well-known/oauth-authorization-server")
      expect(response.status).toBe(200)
      expect(response.headers.get("content-type")).toContain("application/json")
      expect(response.body.issuer).toBe(host.url)
    })

    it("follows the Host the client reached it by", async () => {
      const port = new URL(host.url).port
      const response = await plainRequest(`${host.url}/.well-known/oauth-authorization-server`, { headers: { host: `localhost:${port}` } })
      expect(response.json.issuer).toBe(`http://localhost:${port}`)
      expect(response.json.token_endpoint).toBe(`http://localhost:${port}/oauth/token`)
    })

    it("lists the endpoints under the issuer", async () => {
      const { body } = await host.request("GET", "/.well-known/oauth-authorization-server")
      expect(body).toMatchObject({
        authorization_endpoint: `${host.url}/oauth/authorize`,
        token_endpoint: `${host.url}/oauth/token`,
        revocation_endpoint: `${host.url}/oauth/revoke`,
        userinfo_endpoint: `${host.url}/oauth/userinfo`,
        jwks_uri: `${host.url}/oauth/jwks`,
        registration_endpoint: `${host.url}/oauth/register`
      })
    })

    it("supports the code flow with S256 only", async () => {
      const { body } = await host.request("GET", "/.well-known/oauth-authorization-server")
      expect(body.response_types_supported).toEqual(["code"])
      expect(body.code_challenge_methods_supported).toEqual(["S256"])
      expect([...body.grant_types_supported].sort()).toEqual(["authorization_code", "refresh_token"])
    })

    it("lists the client authentication methods", async () => {
      const { body } = await host.request("GET", "/.well-known/oauth-authorization-server")
      expect([...body.token_endpoint_auth_methods_supported].sort()).toEqual(["client_secret_basic", "client_secret_post", "none"])
    })

    it("lists the scopes as <resource>:<action>", async () => {
      const { body } = await host.request("GET", "/.well-known/oauth-authorization-server")
      expect(body.scopes_supported).toEqual(expect.arrayContaining(["products:read", "products:create", "products:update", "products:delete", "customers:read"]))
      expect(body.scopes_supported.every((scope: string) => SCOPE.test(scope))).toBe(true)
      expect(new Set(body.scopes_supported).size).toBe(body.scopes_supported.length)
    })

    it("advertises only scopes that can be used: reads alone on the read-only catalogs", async () => {
      const { body } = await host.request("GET", "/.well-known/oauth-authorization-server")
      expect(body.scopes_supported).toEqual(expect.arrayContaining(["banks:read", "countries:read", "cities:read"]))
      const catalogWrites = body.scopes_supported.filter((scope: string) =>
        /^(banks|payment-methods|units-of-measurement|countries|states|cities):(create|update|delete)$/.test(scope))
      expect(catalogWrites).toEqual([])
      const resource = await host.request("GET", "/.well-known/oauth-protected-resource")
      expect(resource.body.scopes_supported).toEqual(body.scopes_supported)
    })

    it("refuses an authorization request for a scope that does not exist", async () => {
      const clientId = (await createOAuthClient(host)).clientId
      const url = authorizationUrl(host.url, { clientId, pkce: makePkce(), scope: "countries:delete", state: "s" })
      const answer = await plainRequest(url, { localAddress: freshLoopbackAddress() })
      expect(answer.status).toBe(303)
      expect(answer.location?.searchParams.get("error")).toBe("invalid_scope")
    })

    it("is what openid-client discovers (RFC 8414, issuer checked)", async () => {
      const config = await client.discovery(new URL(host.url), "any-client", undefined, client.None(), {
        algorithm: "oauth2",
        execute: [client.allowInsecureRequests]
      })
      const metadata = config.serverMetadata()
      expect(metadata.issuer).toBe(host.url)
      expect(metadata.supportsPKCE()).toBe(true)
    })

    it("answers without credentials", async () => {
      expect((await plainRequest(`${host.url}/.well-known/oauth-authorization-server`)).status).toBe(200)
    })
  })

  describe("protected resource metadata (RFC 9728)", () => {
    it("names this server as the resource and its authorization server", async () => {
      const response = await host.request("GET", "/.well-known/oauth-protected-resource")
      expect(response.status).toBe(200)
      expect(response.body.resource).toBe(host.url)
      expect(response.body.authorization_servers).toEqual([host.url])
    })

    it("lists the scopes and the header bearer method", async () => {
      const { body } = await host.request("GET", "/.well-known/oauth-protected-resource")
      expect(body.scopes_supported).toContain("products:read")
      expect(body.bearer_methods_supported).toEqual(["header"])
    })

    it("lets a client go from a 401 to the authorization server's metadata", async () => {
      const unauthorized = await host.request("GET", "/products")
      expect(unauthorized.status).toBe(401)
      const challenge = unauthorized.headers.get("www-authenticate")!
      const pointer = /resource_metadata="([^"]+)"/.exec(challenge)![1]
      const resource = await (await fetch(pointer)).json() as { authorization_servers: Array<string> }
      const metadata = await (await fetch(`${resource.authorization_servers[0]}/.well-known/oauth-authorization-server`)).json() as { issuer: string }
      expect(metadata.issuer).toBe(resource.authorization_servers[0])
    })
  })

  describe("JWKS", () => {
    it("publishes the public ES256 signing keys", async () => {
      const response = await host.request("GET", "/oauth/jwks")
      expect(response.status).toBe(200)
      expect(response.body.keys.length).toBeGreaterThanOrEqual(1)
      for (const key of response.body.keys) {
        expect(key).toMatchObject({ kty: "EC", crv: "P-256", kid: expect.any(String), x: expect.any(String), y: expect.any(String) })
        if (key.alg !== undefined) expect(key.alg).toBe("ES256")
        if (key.use !== undefined) expect(key.use).toBe("sig")
      }
    })

    it("never publishes private key material", async () => {
      const response = await host.request("GET", "/oauth/jwks")
      for (const key of response.body.keys) expect(key.d).toBeUndefined()
    })

    it("answers the same keys twice (stored, not made per request)", async () => {
      const first = await host.request("GET", "/oauth/jwks")
      const second = await host.request("GET", "/oauth/jwks")
      expect(second.body).toEqual(first.body)
    })
  })

  describe("WWW-Authenticate on 401", () => {
    const expected = () => `Bearer realm="erp", resource_metadata="${host.url}/.well-known/oauth-protected-resource"`

    it.each([
      ["no token", undefined],
      ["an unknown svc_ token", "svc_unknown"],
      ["a malformed JWT", "aaa.bbb.ccc"]
    ])("points REST callers with %s at the protected resource metadata", async (_, token) => {
      const response = await host.request("GET", "/products", token ? { token } : {})
      expect(response.status).toBe(401)
      expect(response.headers.get("www-authenticate")).toBe(expected())
    })

    it("challenges /oauth/userinfo without a token too", async () => {
      const response = await host.request("GET", "/oauth/userinfo")
      expect(response.status).toBe(401)
      expect(response.headers.get("www-authenticate")).toContain("resource_metadata=")
    })

    it("challenges /oauth/userinfo with an invalid token (RFC 6750 invalid_token)", async () => {
      const response = await host.request("GET", "/oauth/userinfo", { token: "svc_unknown" })
      expect(response.status).toBe(401)
      expect(response.headers.get("www-authenticate")).toContain('error="invalid_token"')
    })
  })

  describe("dynamic client registration (RFC 7591)", () => {
    it("registers a public client and answers its metadata with 201", async () => {
      const response = await register(host, { client_name: "Agent", redirect_uris: [TEST_REDIRECT_URI] })
      expect(response.status).toBe(201)
      expect(response.json).toMatchObject({
        client_id: expect.any(String),
        client_name: "Agent",
        redirect_uris: [TEST_REDIRECT_URI],
        token_endpoint_auth_method: "none",
        grant_types: expect.arrayContaining(["authorization_code"]),
        response_types: ["code"]
      })
      expect(response.json.client_secret).toBeUndefined()
      expect(response.json.client_id_issued_at).toEqual(expect.any(Number))
    })

    it("runs the whole flow with a client registered through openid-client", async () => {
      const config = await client.dynamicClientRegistration(
        new URL(host.url),
        { client_name: "MCP agent", redirect_uris: [TEST_REDIRECT_URI], token_endpoint_auth_method: "none" },
        client.None(),
        { algorithm: "oauth2", execute: [client.allowInsecureRequests] }
      )
      expect(config.clientMetadata().client_id).toEqual(expect.any(String))
      const verifier = client.randomPKCECodeVerifier()
      const state = client.randomState()
      const url = client.buildAuthorizationUrl(config, {
        redirect_uri: TEST_REDIRECT_URI,
        state,
        scope: "products:read",
        code_challenge: await client.calculatePKCECodeChallenge(verifier),
        code_challenge_method: "S256"
      })
      const { redirect, consentHtml } = await driveAuthorization(url, admin)
      expect(consentHtml).toContain("MCP agent")
      const tokens = await client.authorizationCodeGrant(config, redirect, { pkceCodeVerifier: verifier, expectedState: state })
      expect(tokens.scope).toBe("products:read")
      expect((await host.request("GET", "/products", { token: tokens.access_token })).status).toBe(200)
      const renewed = await client.refreshTokenGrant(config, tokens.refresh_token!)
      expect((await host.request("GET", "/products", { token: renewed.access_token })).status).toBe(200)
    })

    it("names an unnamed client something", async () => {
      const response = await register(host, { redirect_uris: [TEST_REDIRECT_URI] })
      expect(response.status).toBe(201)
      expect(response.json.client_name).toEqual(expect.any(String))
    })

    it.each([
      ["no redirect_uris", { client_name: "x" }, "invalid_redirect_uri"],
      ["an empty redirect_uris", { redirect_uris: [] }, "invalid_redirect_uri"],
      ["a redirect URI that is not a string", { redirect_uris: [42] }, "invalid_redirect_uri"],
      ["an http redirect URI off localhost", { redirect_uris: ["http://example.com/cb"] }, "invalid_redirect_uri"],
      ["a redirect URI with a fragment", { redirect_uris: ["https://app.example.com/cb#frag"] }, "invalid_redirect_uri"],
      ["a relative redirect URI", { redirect_uris: ["/cb"] }, "invalid_redirect_uri"],
      ["a confidential auth method", { redirect_uris: [TEST_REDIRECT_URI], token_endpoint_auth_method: "client_secret_basic" }, "invalid_client_metadata"],
      ["client_secret_post", { redirect_uris: [TEST_REDIRECT_URI], token_endpoint_auth_method: "client_secret_post" }, "invalid_client_metadata"],
      ["the implicit grant", { redirect_uris: [TEST_REDIRECT_URI], grant_types: ["implicit"] }, "invalid_client_metadata"],
      ["the client_credentials grant", { redirect_uris: [TEST_REDIRECT_URI], grant_types: ["client_credentials"] }, "invalid_client_metadata"]
    ])("refuses %s with 400 %s", async (_, body, error) => {
      const response = await register(host, body)
      expect(response.status).toBe(400)
      expect(response.json).toEqual({ error, error_description: expect.any(String), status_code: 400, message: expect.any(String) })
    })

    it("accepts https and private-use scheme redirect URIs", async () => {
      const response = await register(host, { redirect_uris: ["https://app.example.com/cb", "com.example.app:/oauth"] })
      expect(response.status).toBe(201)
      expect(response.json.redirect_uris).toEqual(["https://app.example.com/cb", "com.example.app:/oauth"])
    })

    it("refuses a body that is not JSON with 400", async () => {
      const response = await register(host, "{not json")
      expect(response.status).toBe(400)
      expect(response.json.error).toEqual(expect.any(String))
    })

    it("never registers a client that can then use a secret", async () => {
      const response = await register(host, { redirect_uris: [TEST_REDIRECT_URI] })
      const token = await plainRequest(`${host.url}/oauth/token`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: "svcrf_x", client_id: response.json.client_id, client_secret: "guess" }).toString()
      })
      expect(token.status).toBe(401)
      expect(token.json.error).toBe("invalid_client")
    })
  })
})

describe.each(storeKinds)("OAuth discovery with dynamic registration off on %s", (kind) => {
  let host: TestHost

  beforeAll(async () => {
    host = await startTestHost(testStore(kind), { oauth: { dynamicRegistration: false } })
  })
  afterAll(() => host?.close())

  it("leaves registration_endpoint out of the metadata", async () => {
    const response = await host.request("GET", "/.well-known/oauth-authorization-server")
    expect(response.status).toBe(200)
    expect(response.body).not.toHaveProperty("registration_endpoint")
    expect(response.body.token_endpoint).toBe(`${host.url}/oauth/token`)
  })

  it("answers POST /oauth/register with 403", async () => {
    const response = await register(host, { client_name: "Agent", redirect_uris: [TEST_REDIRECT_URI] })
    expect(response.status).toBe(403)
    expect(response.json).toMatchObject({ error: expect.any(String), status_code: 403, message: expect.any(String) })
  })
})
