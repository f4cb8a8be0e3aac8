import { OAuth } from "@erp/core"
import { Effect } from "effect"
import * as client from "openid-client"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestHost, type TestHost, type TestTenant } from "../../../test/support/host.js"
import {
  authorizationUrl,
  type ClientAuthMethod,
  createOAuthClient,
  createOAuthUser,
  driveAuthorization,
  FormSession,
  freshLoopbackAddress,
  hiddenFieldsOf,
  makePkce,
  type OAuthTestClient,
  type OAuthTestUser,
  obtainTokens,
  plainRequest,
  tokenRequest
} from "../../../test/support/oauth.js"
import { storeKinds, testStore } from "../../../test/support/stores.js"

const challengeOf = (url: string) => `Bearer realm="erp", resource_metadata="${url}/.well-known/oauth-protected-resource"`

/** What openid-client throws for an error answer (ResponseBodyError, or a WWW-Authenticate challenge). */
const failureOf = async (promise: Promise<unknown>): Promise<{ status: number | undefined; error: string | undefined; name: string }> => {
  try {
    await promise
  } catch (caught) {
    const error = caught as { status?: number; error?: string; name: string }
    return { status: error.status, error: error.error, name: error.name }
  }
  throw new Error("expected the request to fail")
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe.each(storeKinds)("OAuth code flow with openid-client on %s", (kind) => {
  let host: TestHost
  let tenant: TestTenant
  let second: TestTenant
  let admin: OAuthTestUser

  beforeAll(async () => {
    host = await startTestHost(testStore(kind))
    tenant = await host.createTenant("BR")
    second = await host.createTenant("US")
    admin = await createOAuthUser(host, [{ tenantId: tenant.id, role: "admin" }])
  })
  afterAll(() => host?.close())

  /** openid-client configured by RFC 8414 discovery against the running host. */
  const configure = (testClient: OAuthTestClient) => {
    const authentication = testClient.auth === "client_secret_basic"
      ? client.ClientSecretBasic(testClient.secret!)
      : testClient.auth === "client_secret_post"
      ? client.ClientSecretPost(testClient.secret!)
      : client.None()
    return client.discovery(new URL(host.url), testClient.clientId, undefined, authentication, {
      algorithm: "oauth2",
      execute: [client.allowInsecureRequests]
    })
  }

  /** The whole flow through openid-client, the forms driven over plain HTTP. */
  const runFlow = async (testClient: OAuthTestClient, user: OAuthTestUser, options: { scope?: string; tenantId?: string } = {}) => {
    const config = await configure(testClient)
    const verifier = client.randomPKCECodeVerifier()
    const state = client.randomState()
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: testClient.redirectUri,
      state,
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: "S256",
      ...(options.scope ? { scope: options.scope } : {})
    })
    const { redirect, consentHtml } = await driveAuthorization(url, user, { tenantId: options.tenantId })
    const tokens = await client.authorizationCodeGrant(config, redirect, { pkceCodeVerifier: verifier, expectedState: state })
    return { config, tokens, redirect, verifier, state, consentHtml }
  }

  const products = (token: string, headers: Record<string, string> = {}) => host.request("GET", "/products", { token, headers })

  describe.each<ClientAuthMethod>(["client_secret_basic", "client_secret_post", "none"])("a client authenticating with %s", (auth) => {
    let testClient: OAuthTestClient

    beforeAll(async () => {
      // One client per test below would also do; the tests stay well within 10 token requests a minute each.
      testClient = await createOAuthClient(host, { auth })
    })

    it("gets a code with state and iss, exchanges it for svc_/svcrf_ tokens and calls GET /products", async () => {
      const fresh = await createOAuthClient(host, { auth })
      const { tokens, redirect, state } = await runFlow(fresh, admin)
      expect(redirect.origin + redirect.pathname).toBe(fresh.redirectUri)
      expect(redirect.searchParams.get("code")).toMatch(/^svcac_[A-Za-z0-9]+$/)
      expect(redirect.searchParams.get("state")).toBe(state)
      expect(redirect.searchParams.get("iss")).toBe(host.url)
      expect(tokens.access_token).toMatch(/^svc_[A-Za-z0-9]+$/)
      expect(tokens.refresh_token).toMatch(/^svcrf_[A-Za-z0-9]+$/)
      expect(tokens.token_type).toBe("bearer")
      expect(tokens.expires_in).toBe(3600)
      const response = await products(tokens.access_token)
      expect(response.status).toBe(200)
      expect(response.body.data).toEqual(expect.any(Array))
    })

    it("grants every scope when none is asked", async () => {
      const fresh = await createOAuthClient(host, { auth })
      const { tokens } = await runFlow(fresh, admin)
      const scopes = (tokens.scope ?? "").split(" ")
      expect(scopes).toContain("products:read")
      expect(scopes).toContain("products:create")
      expect(scopes).toContain("customers:delete")
      expect((await host.request("POST", "/products", { token: tokens.access_token, body: { name: "By an admin's token" } })).status).toBe(201)
    })

    it("answers /oauth/userinfo for the access token", async () => {
      const fresh = await createOAuthClient(host, { auth })
      const { tokens } = await runFlow(fresh, admin)
      const info = await host.request("GET", "/oauth/userinfo", { token: tokens.access_token })
      expect(info.status).toBe(200)
      expect(info.body).toMatchObject({ sub: admin.id, id: admin.id, email: admin.email, name: admin.name })
      expect(info.body.tenants).toEqual([expect.objectContaining({ id: tenant.id, role: "admin" })])
    })

    it("rotates the refresh token: new tokens, and the old refresh token fails", async () => {
      const { config, tokens } = await runFlow(testClient, admin)
      const renewed = await client.refreshTokenGrant(config, tokens.refresh_token!)
      expect(renewed.access_token).toMatch(/^svc_/)
      expect(renewed.refresh_token).toMatch(/^svcrf_/)
      expect(renewed.access_token).not.toBe(tokens.access_token)
      expect(renewed.refresh_token).not.toBe(tokens.refresh_token)
      expect((await products(renewed.access_token)).status).toBe(200)
      const reused = await failureOf(client.refreshTokenGrant(config, tokens.refresh_token!))
      expect(reused).toMatchObject({ status: 400, error: "invalid_grant" })
    })

    it("revokes the access token (RFC 7009); the API then answers 401 with the WWW-Authenticate challenge", async () => {
      const { config, tokens } = await runFlow(testClient, admin)
      expect((await products(tokens.access_token)).status).toBe(200)
      await client.tokenRevocation(config, tokens.access_token)
      const response = await products(tokens.access_token)
      expect(response.status).toBe(401)
      expect(response.body).toMatchObject({ status_code: 401, error: "Unauthorized" })
      expect(response.headers.get("www-authenticate")).toBe(challengeOf(host.url))
    })

    it("revokes the grant when its refresh token is revoked", async () => {
      const { config, tokens } = await runFlow(testClient, admin)
      await client.tokenRevocation(config, tokens.refresh_token!)
      expect((await products(tokens.access_token)).status).toBe(401)
      expect(await failureOf(client.refreshTokenGrant(config, tokens.refresh_token!))).toMatchObject({ status: 400, error: "invalid_grant" })
    })

    it("answers a revocation of an unknown token with 200 (RFC 7009 2.2)", async () => {
      const config = await configure(testClient)
      await expect(client.tokenRevocation(config, "svc_not-a-token-of-ours")).resolves.toBeUndefined()
    })

    it("refuses a wrong code_verifier with invalid_grant", async () => {
      const fresh = await createOAuthClient(host, { auth })
      const config = await configure(fresh)
      const pkce = makePkce()
      const state = client.randomState()
      const url = client.buildAuthorizationUrl(config, { redirect_uri: fresh.redirectUri, state, code_challenge: pkce.challenge, code_challenge_method: "S256" })
      const { redirect } = await driveAuthorization(url, admin)
      const failure = await failureOf(client.authorizationCodeGrant(config, redirect, { pkceCodeVerifier: makePkce().verifier, expectedState: state }))
      expect(failure).toMatchObject({ status: 400, error: "invalid_grant" })
    })
  })

  describe("reuse detection", () => {
    const reuseCode = async (testClient: OAuthTestClient, obtained: Awaited<ReturnType<typeof obtainTokens>>) =>
      tokenRequest(host.url, testClient, {
        grant_type: "authorization_code",
        code: obtained.code,
        redirect_uri: testClient.redirectUri,
        code_verifier: obtained.pkce.verifier
      })

    it("refuses a reused code with invalid_grant", async () => {
      const testClient = await createOAuthClient(host)
      const obtained = await obtainTokens(host.url, testClient, admin)
      const again = await reuseCode(testClient, obtained)
      expect(again.status).toBe(400)
      expect(again.json).toEqual({ error: "invalid_grant", status_code: 400, error_description: expect.any(String), message: expect.any(String) })
    })

    it("refuses a reused code through openid-client too", async () => {
      const testClient = await createOAuthClient(host, { auth: "client_secret_post" })
      const { config, redirect, verifier, state } = await runFlow(testClient, admin)
      const failure = await failureOf(client.authorizationCodeGrant(config, redirect, { pkceCodeVerifier: verifier, expectedState: state }))
      expect(failure).toMatchObject({ status: 400, error: "invalid_grant" })
    })

    it("revokes the access token the first exchange issued when the code is reused (RFC 6749 4.1.2)", async () => {
      const testClient = await createOAuthClient(host)
      const obtained = await obtainTokens(host.url, testClient, admin)
      expect((await products(obtained.tokens.access_token)).status).toBe(200)
      expect((await reuseCode(testClient, obtained)).status).toBe(400)
      expect((await products(obtained.tokens.access_token)).status).toBe(401)
    })

    it("revokes the refresh token the first exchange issued when the code is reused", async () => {
      const testClient = await createOAuthClient(host)
      const obtained = await obtainTokens(host.url, testClient, admin)
      expect((await reuseCode(testClient, obtained)).status).toBe(400)
      const refreshed = await tokenRequest(host.url, testClient, { grant_type: "refresh_token", refresh_token: obtained.tokens.refresh_token })
      expect(refreshed.status).toBe(400)
    })

    it("refuses a rotated refresh token presented again with invalid_grant", async () => {
      const testClient = await createOAuthClient(host)
      const { config, tokens } = await runFlow(testClient, admin)
      await client.refreshTokenGrant(config, tokens.refresh_token!)
      expect(await failureOf(client.refreshTokenGrant(config, tokens.refresh_token!))).toMatchObject({ status: 400, error: "invalid_grant" })
    })

    it("revokes the whole grant when a rotated refresh token comes back: the new access token", async () => {
      const testClient = await createOAuthClient(host)
      const { config, tokens } = await runFlow(testClient, admin)
      const renewed = await client.refreshTokenGrant(config, tokens.refresh_token!)
      expect((await products(renewed.access_token)).status).toBe(200)
      await failureOf(client.refreshTokenGrant(config, tokens.refresh_token!))
      expect((await products(renewed.access_token)).status).toBe(401)
    })

    it("revokes the whole grant when a rotated refresh token comes back: the new refresh token", async () => {
      const testClient = await createOAuthClient(host)
      const { config, tokens } = await runFlow(testClient, admin)
      const renewed = await client.refreshTokenGrant(config, tokens.refresh_token!)
      await failureOf(client.refreshTokenGrant(config, tokens.refresh_token!))
      expect(await failureOf(client.refreshTokenGrant(config, renewed.refresh_token!))).toMatchObject({ status: 400, error: "invalid_grant" })
    })
  })

  describe("authorization codes", () => {
    it("refuses a redirect_uri at the token endpoint other than the authorization request's", async () => {
      const other = "http://127.0.0.1:1/other"
      const testClient = await createOAuthClient(host, { redirectUris: ["http://127.0.0.1:1/cb", other] })
      const config = await configure(testClient)
      const verifier = client.randomPKCECodeVerifier()
      const state = client.randomState()
      const url = client.buildAuthorizationUrl(config, {
        redirect_uri: testClient.redirectUri,
        state,
        code_challenge: await client.calculatePKCECodeChallenge(verifier),
        code_challenge_method: "S256"
      })
      const { redirect } = await driveAuthorization(url, admin)
      // openid-client sends the URL it was handed (less its query) as redirect_uri.
      const elsewhere = new URL(other)
      elsewhere.search = redirect.search
      const failure = await failureOf(client.authorizationCodeGrant(config, elsewhere, { pkceCodeVerifier: verifier, expectedState: state }))
      expect(failure).toMatchObject({ status: 400, error: "invalid_grant" })
    })

    it("refuses a missing redirect_uri when the authorization request had one (RFC 6749 4.1.3)", async () => {
      const testClient = await createOAuthClient(host)
      const pkce = makePkce()
      const { redirect } = await driveAuthorization(authorizationUrl(host.url, { clientId: testClient.clientId, pkce, state: "s" }), admin)
      const response = await tokenRequest(host.url, testClient, { grant_type: "authorization_code", code: redirect.searchParams.get("code")!, code_verifier: pkce.verifier })
      expect(response.status).toBe(400)
      expect(response.json.error).toBe("invalid_grant")
    })

    it("exchanges a code without redirect_uri when the authorization request had none (RFC 6749 4.1.3)", async () => {
      const testClient = await createOAuthClient(host)
      const pkce = makePkce()
      const { redirect } = await driveAuthorization(
        authorizationUrl(host.url, { clientId: testClient.clientId, pkce, state: "s", extra: { redirect_uri: undefined } }),
        admin
      )
      expect(redirect.origin + redirect.pathname).toBe(testClient.redirectUri)
      const response = await tokenRequest(host.url, testClient, { grant_type: "authorization_code", code: redirect.searchParams.get("code")!, code_verifier: pkce.verifier })
      expect(response.status).toBe(200)
    })

    it("refuses a missing code_verifier", async () => {
      const testClient = await createOAuthClient(host)
      const pkce = makePkce()
      const { redirect } = await driveAuthorization(authorizationUrl(host.url, { clientId: testClient.clientId, pkce, state: "s" }), admin)
      const response = await tokenRequest(host.url, testClient, { grant_type: "authorization_code", code: redirect.searchParams.get("code")!, redirect_uri: testClient.redirectUri })
      expect(response.status).toBe(400)
      expect(response.json.error).toBe("invalid_grant")
    })

    it("refuses a code issued to another client", async () => {
      const owner = await createOAuthClient(host)
      const thief = await createOAuthClient(host)
      const pkce = makePkce()
      const { redirect } = await driveAuthorization(authorizationUrl(host.url, { clientId: owner.clientId, pkce, state: "s" }), admin)
      const response = await tokenRequest(host.url, thief, {
        grant_type: "authorization_code",
        code: redirect.searchParams.get("code")!,
        redirect_uri: thief.redirectUri,
        code_verifier: pkce.verifier
      })
      expect(response.status).toBe(400)
      expect(response.json.error).toBe("invalid_grant")
    })

    it("refuses an unknown grant_type with unsupported_grant_type", async () => {
      const testClient = await createOAuthClient(host)
      const response = await tokenRequest(host.url, testClient, { grant_type: "password", username: admin.email, password: admin.password })
      expect(response.status).toBe(400)
      expect(response.json.error).toBe("unsupported_grant_type")
      expect(response.headers["cache-control"]).toContain("no-store")
    })
  })

  describe("client authentication", () => {
    const exchangeWith = async (testClient: OAuthTestClient, presented: Pick<OAuthTestClient, "clientId" | "secret" | "auth">) => {
      const pkce = makePkce()
      const { redirect } = await driveAuthorization(authorizationUrl(host.url, { clientId: testClient.clientId, pkce, state: "s" }), admin)
      return tokenRequest(host.url, presented, {
        grant_type: "authorization_code",
        code: redirect.searchParams.get("code")!,
        redirect_uri: testClient.redirectUri,
        code_verifier: pkce.verifier
      })
    }

    it("answers a wrong secret sent with client_secret_basic with 401 invalid_client and a Basic challenge", async () => {
      const testClient = await createOAuthClient(host)
      const response = await exchangeWith(testClient, { ...testClient, secret: "secret_wrong" })
      expect(response.status).toBe(401)
      expect(response.json).toEqual({ error: "invalid_client", error_description: expect.any(String), status_code: 401, message: expect.any(String) })
      expect(response.headers["www-authenticate"]).toMatch(/^Basic/)
    })

    it("answers a wrong secret sent with client_secret_post with 401 invalid_client", async () => {
      const testClient = await createOAuthClient(host, { auth: "client_secret_post" })
      const response = await exchangeWith(testClient, { ...testClient, secret: "secret_wrong" })
      expect(response.status).toBe(401)
      expect(response.json.error).toBe("invalid_client")
    })

    it("answers a wrong secret through openid-client with 401", async () => {
      const testClient = await createOAuthClient(host)
      const config = await configure({ ...testClient, secret: "secret_wrong" })
      const verifier = client.randomPKCECodeVerifier()
      const state = client.randomState()
      const url = client.buildAuthorizationUrl(config, {
        redirect_uri: testClient.redirectUri,
        state,
        code_challenge: await client.calculatePKCECodeChallenge(verifier),
        code_challenge_method: "S256"
      })
      const { redirect } = await driveAuthorization(url, admin)
      const failure = await failureOf(client.authorizationCodeGrant(config, redirect, { pkceCodeVerifier: verifier, expectedState: state }))
      expect(failure.status).toBe(401)
    })

    it("refuses a confidential client that sends no secret", async () => {
      const testClient = await createOAuthClient(host)
      const response = await exchangeWith(testClient, { ...testClient, auth: "none" })
      expect(response.status).toBe(401)
      expect(response.json.error).toBe("invalid_client")
    })

    it("refuses an unknown client_id", async () => {
      const response = await tokenRequest(host.url, { clientId: "client_unknown", secret: "secret_x", auth: "client_secret_basic" }, {
        grant_type: "authorization_code",
        code: "svcac_x",
        redirect_uri: "http://127.0.0.1:1/cb",
        code_verifier: makePkce().verifier
      })
      expect(response.status).toBe(401)
      expect(response.json.error).toBe("invalid_client")
    })

    it("refuses a request with no client at all", async () => {
      // A request naming no client counts against its address, whose counter PostgreSQL shares
      // with every other host of the run: a fresh address keeps other files' hits out of it.
      const response = await plainRequest(`${host.url}/oauth/token`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: "grant_type=authorization_code&code=svcac_x",
        localAddress: freshLoopbackAddress()
      })
      expect(response.status).toBe(401)
      expect(response.json.error).toBe("invalid_client")
    })

    it("refuses a token request that is not form-encoded", async () => {
      const testClient = await createOAuthClient(host, { auth: "client_secret_post" })
      const response = await plainRequest(`${host.url}/oauth/token`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ grant_type: "refresh_token", refresh_token: "x", client_id: testClient.clientId, client_secret: testClient.secret })
      })
      expect(response.status).toBe(400)
      expect(response.json.error).toBe("invalid_request")
    })
  })

  describe("error redirects", () => {
    it("sends Deny back as error=access_denied with the state", async () => {
      const testClient = await createOAuthClient(host)
      const { redirect } = await driveAuthorization(authorizationUrl(host.url, { clientId: testClient.clientId, pkce: makePkce(), state: "st-deny" }), admin, {
        decision: "deny"
      })
      expect(redirect.origin + redirect.pathname).toBe(testClient.redirectUri)
      expect(redirect.searchParams.get("error")).toBe("access_denied")
      expect(redirect.searchParams.get("state")).toBe("st-deny")
      expect(redirect.searchParams.get("code")).toBeNull()
    })

    it("puts iss on the access_denied redirect too (RFC 9207 section 2)", async () => {
      const testClient = await createOAuthClient(host)
      const { redirect } = await driveAuthorization(authorizationUrl(host.url, { clientId: testClient.clientId, pkce: makePkce(), state: "s" }), admin, {
        decision: "deny"
      })
      expect(redirect.searchParams.get("iss")).toBe(host.url)
    })

    it("puts iss on error redirects before sign-in too (RFC 9207 section 2)", async () => {
      const testClient = await createOAuthClient(host)
      const response = await new FormSession().get(authorizationUrl(host.url, { clientId: testClient.clientId, state: "s" }))
      expect(response.location!.searchParams.get("error")).toBe("invalid_request")
      expect(response.location!.searchParams.get("iss")).toBe(host.url)
    })

    it("lets openid-client read a denial as access_denied (needs iss on the error redirect)", async () => {
      const testClient = await createOAuthClient(host)
      const config = await configure(testClient)
      const state = client.randomState()
      const verifier = client.randomPKCECodeVerifier()
      const url = client.buildAuthorizationUrl(config, {
        redirect_uri: testClient.redirectUri,
        state,
        code_challenge: await client.calculatePKCECodeChallenge(verifier),
        code_challenge_method: "S256"
      })
      const { redirect } = await driveAuthorization(url, admin, { decision: "deny" })
      const failure = await failureOf(client.authorizationCodeGrant(config, redirect, { pkceCodeVerifier: verifier, expectedState: state }))
      expect(failure).toMatchObject({ name: "AuthorizationResponseError", error: "access_denied" })
    })
  })

  describe("revocation and sessions", () => {
    it("refuses to revoke another client's token, which keeps working (RFC 7009 2.1)", async () => {
      const owner = await createOAuthClient(host)
      const other = await createOAuthClient(host)
      const { tokens } = await obtainTokens(host.url, owner, admin)
      const response = await tokenRequest(host.url, other, { token: tokens.access_token }, "/oauth/revoke")
      expect(response.status).toBe(400)
      expect(response.json.error).toEqual(expect.any(String))
      expect((await products(tokens.access_token)).status).toBe(200)
    })

    it("requires client authentication to revoke", async () => {
      const owner = await createOAuthClient(host)
      const { tokens } = await obtainTokens(host.url, owner, admin)
      const response = await tokenRequest(host.url, { ...owner, secret: "secret_wrong" }, { token: tokens.access_token }, "/oauth/revoke")
      expect(response.status).toBe(401)
      expect(response.json.error).toBe("invalid_client")
      expect((await products(tokens.access_token)).status).toBe(200)
    })

    it("ends a revoked client's tokens and its authorization requests", async () => {
      const testClient = await createOAuthClient(host)
      const { tokens } = await obtainTokens(host.url, testClient, admin)
      await host.run(Effect.flatMap(OAuth, (oauth) => oauth.revokeClient(testClient.clientId)))
      expect((await products(tokens.access_token)).status).toBe(401)
      const page = await new FormSession().get(authorizationUrl(host.url, { clientId: testClient.clientId, pkce: makePkce(), state: "s" }))
      expect(page.status).toBe(400)
      expect(page.location).toBeUndefined()
      const refreshed = await tokenRequest(host.url, testClient, { grant_type: "refresh_token", refresh_token: tokens.refresh_token })
      expect(refreshed.status).toBe(401)
      expect(refreshed.json.error).toBe("invalid_client")
    })

    it("keeps the sign-in session: a second authorization goes straight to consent", async () => {
      const testClient = await createOAuthClient(host)
      const first = await driveAuthorization(authorizationUrl(host.url, { clientId: testClient.clientId, pkce: makePkce(), state: "a" }), admin)
      const page = await first.session.get(authorizationUrl(host.url, { clientId: testClient.clientId, pkce: makePkce(), state: "b" }))
      expect(page.status).toBe(200)
      expect(hiddenFieldsOf(page.text).action).toBe("consent")
    })

    it("ends the user's sign-in sessions when the password changes", async () => {
      const user = await createOAuthUser(host, [{ tenantId: tenant.id, role: "admin" }])
      const testClient = await createOAuthClient(host)
      const first = await driveAuthorization(authorizationUrl(host.url, { clientId: testClient.clientId, pkce: makePkce(), state: "a" }), user)
      await host.run(Effect.flatMap(OAuth, (oauth) => oauth.setPassword(user.id, "another long password")))
      const page = await first.session.get(authorizationUrl(host.url, { clientId: testClient.clientId, pkce: makePkce(), state: "b" }))
      expect(page.status).toBe(200)
      expect(hiddenFieldsOf(page.text).action).toBe("sign_in")
    })

    it("refuses the old password after a change and takes the new one", async () => {
      const user = await createOAuthUser(host, [{ tenantId: tenant.id, role: "admin" }])
      await host.run(Effect.flatMap(OAuth, (oauth) => oauth.setPassword(user.email, "another long password")))
      const testClient = await createOAuthClient(host)
      const url = authorizationUrl(host.url, { clientId: testClient.clientId, pkce: makePkce(), state: "s" })
      await expect(driveAuthorization(url, user)).rejects.toThrow(/401/)
      const { redirect } = await driveAuthorization(url, { email: user.email, password: "another long password" })
      expect(redirect.searchParams.get("code")).toMatch(/^svcac_/)
    })
  })

  describe("scopes and roles", () => {
    it("narrows a token to its scopes: products:read reads but cannot create, even for an admin", async () => {
      const testClient = await createOAuthClient(host)
      const { tokens } = await obtainTokens(host.url, testClient, admin, { scope: "products:read" })
      expect(tokens.scope).toBe("products:read")
      expect((await products(tokens.access_token)).status).toBe(200)
      const created = await host.request("POST", "/products", { token: tokens.access_token, body: { name: "Not allowed" } })
      expect(created.status).toBe(403)
      expect(created.body).toMatchObject({ status_code: 403, error: "Forbidden" })
      expect((await host.request("GET", "/customers", { token: tokens.access_token })).status).toBe(403)
    })

    it("lists the asked scopes on the consent page", async () => {
      const testClient = await createOAuthClient(host)
      const { consentHtml } = await driveAuthorization(
        authorizationUrl(host.url, { clientId: testClient.clientId, pkce: makePkce(), state: "s", scope: "products:read customers:create" }),
        admin
      )
      expect(consentHtml).toContain("products")
      expect(consentHtml).toContain("customers")
      expect(consentHtml).not.toContain("suppliers")
    })

    it("redirects an unknown scope back with invalid_scope and the state", async () => {
      const testClient = await createOAuthClient(host)
      const response = await new FormSession().get(
        authorizationUrl(host.url, { clientId: testClient.clientId, pkce: makePkce(), state: "st-1", scope: "products:read rockets:launch" })
      )
      expect(response.status).toBe(303)
      expect(response.location!.origin + response.location!.pathname).toBe(testClient.redirectUri)
      expect(response.location!.searchParams.get("error")).toBe("invalid_scope")
      expect(response.location!.searchParams.get("state")).toBe("st-1")
    })

    it("refreshes with a narrower scope but never a wider one", async () => {
      const testClient = await createOAuthClient(host)
      const { tokens } = await obtainTokens(host.url, testClient, admin, { scope: "products:read products:create" })
      const narrower = await tokenRequest(host.url, testClient, { grant_type: "refresh_token", refresh_token: tokens.refresh_token, scope: "products:read" })
      expect(narrower.status).toBe(200)
      expect(narrower.json.scope).toBe("products:read")
      const wider = await tokenRequest(host.url, testClient, { grant_type: "refresh_token", refresh_token: narrower.json.refresh_token, scope: "products:read customers:read" })
      expect(wider.status).toBe(400)
      expect(wider.json.error).toBe("invalid_scope")
    })

    it("gives a member only their granted permissions, even with every scope", async () => {
      const member = await createOAuthUser(host, [{ tenantId: tenant.id, role: "member", permissions: ["customers:read"] }])
      const testClient = await createOAuthClient(host)
      const { tokens } = await obtainTokens(host.url, testClient, member)
      expect(tokens.scope.split(" ")).toContain("products:read")
      expect((await host.request("GET", "/customers", { token: tokens.access_token })).status).toBe(200)
      const denied = await products(tokens.access_token)
      expect(denied.status).toBe(403)
      expect(denied.body).toMatchObject({ status_code: 403, error: "Forbidden" })
      expect((await host.request("POST", "/customers", { token: tokens.access_token, body: { legal_name: "X" } })).status).toBe(403)
    })

    it("sends a user of no company back with access_denied", async () => {
      const loner = await createOAuthUser(host, [])
      const testClient = await createOAuthClient(host)
      const { redirect } = await driveAuthorization(authorizationUrl(host.url, { clientId: testClient.clientId, pkce: makePkce(), state: "st-2" }), loner)
      expect(redirect.searchParams.get("error")).toBe("access_denied")
      expect(redirect.searchParams.get("state")).toBe("st-2")
    })
  })

  describe("users of two companies", () => {
    let both: OAuthTestUser
    let inFirst: string
    let inSecond: string

    beforeAll(async () => {
      both = await createOAuthUser(host, [{ tenantId: tenant.id, role: "admin" }, { tenantId: second.id, role: "admin" }])
      const name = (prefix: string) => `${prefix} ${randomUUID().slice(0, 8)}`
      inFirst = (await host.request("POST", "/products", { token: tenant.token, body: { name: name("First") } })).body.id
      inSecond = (await host.request("POST", "/products", { token: second.token, body: { name: name("Second") } })).body.id
    })

    it("offers both companies on the consent page", async () => {
      const testClient = await createOAuthClient(host)
      const { consentHtml } = await driveAuthorization(authorizationUrl(host.url, { clientId: testClient.clientId, pkce: makePkce(), state: "s" }), both, { tenantId: second.id })
      expect(consentHtml).toContain(`<option value="${tenant.id}">`)
      expect(consentHtml).toContain(`<option value="${second.id}">`)
      expect(consentHtml).toContain(tenant.name)
      expect(consentHtml).toContain(second.name)
    })

    it.each([["first", () => tenant, () => inFirst, () => inSecond], ["second", () => second, () => inSecond, () => inFirst]])(
      "acts on the %s company chosen on the consent page",
      async (_, chosen, own, foreign) => {
        const testClient = await createOAuthClient(host)
        const { tokens } = await runFlow(testClient, both, { tenantId: chosen().id })
        expect((await host.request("GET", `/products/${own()}`, { token: tokens.access_token })).status).toBe(200)
        expect((await host.request("GET", `/products/${foreign()}`, { token: tokens.access_token })).status).toBe(404)
        const info = await host.request("GET", "/oauth/userinfo", { token: tokens.access_token })
        expect(info.body.tenants.map((item: { id: string }) => item.id).sort()).toEqual([tenant.id, second.id].sort())
      }
    )

    it("binds an svc_ token to the company chosen: X-Tenant-Id naming the user's other company is refused", async () => {
      const testClient = await createOAuthClient(host)
      const { tokens } = await runFlow(testClient, both, { tenantId: tenant.id })
      expect(tokens.access_token).toMatch(/^svc_/)
      const elsewhere = await host.request("GET", `/products/${inSecond}`, { token: tokens.access_token, headers: { "x-tenant-id": second.id } })
      expect(elsewhere.status).toBe(401)
      expect(elsewhere.body).toMatchObject({ status_code: 401, code: "INVALID_CREDENTIALS", message: expect.stringContaining("another company") })
      expect((await host.request("GET", "/products", { token: tokens.access_token, headers: { "x-tenant-id": second.id } })).status).toBe(401)
      // Its own company, named or not, answers.
      expect((await host.request("GET", `/products/${inFirst}`, { token: tokens.access_token, headers: { "x-tenant-id": tenant.id.toUpperCase() } })).status).toBe(200)
      expect((await host.request("GET", `/products/${inFirst}`, { token: tokens.access_token })).status).toBe(200)
      // An API key is bound the same way.
      expect((await host.request("GET", "/products", { token: tenant.token, headers: { "x-tenant-id": second.id } })).status).toBe(401)
      expect((await host.request("GET", "/products", { token: tenant.token, headers: { "x-tenant-id": tenant.id } })).status).toBe(200)
    })

    it("lists every company with the role for the MCP resource, asks for none, and the JWT acts in each", async () => {
      const testClient = await createOAuthClient(host)
      const { consentHtml, tokens } = await (async () => {
        const pkce = makePkce()
        const url = authorizationUrl(host.url, { clientId: testClient.clientId, pkce, state: "s", resource: host.url })
        // A company posted anyway (an old form, a crafted one) is ignored: the grant binds none.
        const driven = await driveAuthorization(url, both, { tenantId: tenant.id })
        const exchanged = await tokenRequest(host.url, testClient, {
          grant_type: "authorization_code", code: driven.redirect.searchParams.get("code")!, redirect_uri: testClient.redirectUri, code_verifier: pkce.verifier
        })
        expect(exchanged.status).toBe(200)
        return { consentHtml: driven.consentHtml!, tokens: exchanged.json }
      })()
      expect(consentHtml).not.toContain("<select")
      expect(consentHtml).not.toContain('name="tenant_id"')
      expect(consentHtml).toContain("each of your 2 companies")
      expect(consentHtml).toContain(`<strong>${tenant.name}</strong> <span class="muted">as admin</span>`)
      expect(consentHtml).toContain(`<strong>${second.name}</strong> <span class="muted">as admin</span>`)
      expect(tokens.access_token.split(".")).toHaveLength(3)
      expect((await host.request("GET", `/products/${inFirst}`, { token: tokens.access_token, headers: { "x-tenant-id": tenant.id } })).status).toBe(200)
      expect((await host.request("GET", `/products/${inSecond}`, { token: tokens.access_token, headers: { "x-tenant-id": second.id } })).status).toBe(200)
    })

    it("says on the consent page of an svc_ grant that the token acts in the chosen company only", async () => {
      const testClient = await createOAuthClient(host)
      const { consentHtml } = await driveAuthorization(authorizationUrl(host.url, { clientId: testClient.clientId, pkce: makePkce(), state: "s" }), both, { tenantId: second.id })
      expect(consentHtml).toContain("It will act in the company you choose only.")
    })

    it("refuses a company the user does not belong to", async () => {
      const testClient = await createOAuthClient(host)
      const stranger = await host.createTenant("BR")
      const session = new FormSession()
      const url = authorizationUrl(host.url, { clientId: testClient.clientId, pkce: makePkce(), state: "s" })
      const page = await session.get(url)
      const signIn = await session.post(new URL("/oauth/authorize", host.url), { ...hiddenFieldsOf(page.text), email: both.email, password: both.password })
      const consent = await session.get(signIn.location!)
      const fields = hiddenFieldsOf(consent.text)
      const posted = await session.post(new URL("/oauth/authorize", host.url), { ...fields, tenant_id: stranger.id, decision: "allow" })
      expect(posted.status).toBe(400)
      expect(posted.location).toBeUndefined()
    })

    it("lets a JWT of a two-company user pick the company with X-Tenant-Id", async () => {
      const testClient = await createOAuthClient(host)
      const { tokens } = await obtainTokens(host.url, testClient, both, { resource: host.url, tenantId: tenant.id })
      expect(tokens.access_token.split(".")).toHaveLength(3)
      const inSecondCompany = await host.request("GET", `/products/${inSecond}`, { token: tokens.access_token, headers: { "x-tenant-id": second.id } })
      expect(inSecondCompany.status).toBe(200)
      const inFirstCompany = await host.request("GET", `/products/${inFirst}`, { token: tokens.access_token, headers: { "x-tenant-id": tenant.id } })
      expect(inFirstCompany.status).toBe(200)
      expect((await host.request("GET", `/products/${inFirst}`, { token: tokens.access_token, headers: { "x-tenant-id": second.id } })).status).toBe(404)
    })

    it("asks a two-company JWT without X-Tenant-Id to name the company", async () => {
      const testClient = await createOAuthClient(host)
      const { tokens } = await obtainTokens(host.url, testClient, both, { resource: host.url, tenantId: tenant.id })
      const response = await products(tokens.access_token)
      expect(response.status).toBe(400)
      expect(response.body.message).toContain("X-Tenant-Id")
    })

    it("refuses a JWT acting on a company the user does not belong to", async () => {
      const testClient = await createOAuthClient(host)
      const stranger = await host.createTenant("BR")
      const { tokens } = await obtainTokens(host.url, testClient, both, { resource: host.url, tenantId: tenant.id })
      const response = await products(tokens.access_token, { "x-tenant-id": stranger.id })
      expect([401, 403]).toContain(response.status)
    })

    it("uses a one-company user's only company for a JWT without X-Tenant-Id", async () => {
      const testClient = await createOAuthClient(host)
      const { tokens } = await obtainTokens(host.url, testClient, admin, { resource: host.url })
      expect((await host.request("GET", `/products/${inFirst}`, { token: tokens.access_token })).status).toBe(200)
    })
  })

  describe("rate limits", () => {
    it("answers the 11th token request of a client within a minute with 429 and the rate-limit headers", async () => {
      const testClient = await createOAuthClient(host)
      const other = await createOAuthClient(host)
      const attempt = (who: OAuthTestClient) => tokenRequest(host.url, who, { grant_type: "refresh_token", refresh_token: "svcrf_nothing" })
      const statuses = []
      for (let i = 0; i < 10; i++) statuses.push((await attempt(testClient)).status)
      expect(statuses).toEqual(Array(10).fill(400))
      const refused = await attempt(testClient)
      expect(refused.status).toBe(429)
      expect(refused.json).toMatchObject({ status_code: 429, error: "Too Many Requests", message: expect.any(String) })
      const retryAfter = Number(refused.headers["retry-after"])
      expect(retryAfter).toBeGreaterThanOrEqual(1)
      expect(retryAfter).toBeLessThanOrEqual(60)
      expect(refused.headers["ratelimit-limit"]).toBe("10")
      expect(refused.headers["ratelimit-remaining"]).toBe("0")
      expect(Number(refused.headers["ratelimit-reset"])).toBe(retryAfter)
      expect((await attempt(other)).status).toBe(400)
    })

    it("counts a client's token requests whatever the way it authenticates", async () => {
      const testClient = await createOAuthClient(host)
      for (let i = 0; i < 5; i++) await tokenRequest(host.url, testClient, { grant_type: "refresh_token", refresh_token: "svcrf_x" })
      for (let i = 0; i < 5; i++) await tokenRequest(host.url, { ...testClient, auth: "client_secret_post" }, { grant_type: "refresh_token", refresh_token: "svcrf_x" })
      expect((await tokenRequest(host.url, testClient, { grant_type: "refresh_token", refresh_token: "svcrf_x" })).status).toBe(429)
    })

    it("puts RateLimit-* headers on a successful token response", async () => {
      const testClient = await createOAuthClient(host)
      const pkce = makePkce()
      const { redirect } = await driveAuthorization(authorizationUrl(host.url, { clientId: testClient.clientId, pkce, state: "s" }), admin)
      const response = await tokenRequest(host.url, testClient, {
        grant_type: "authorization_code",
        code: redirect.searchParams.get("code")!,
        redirect_uri: testClient.redirectUri,
        code_verifier: pkce.verifier
      })
      expect(response.status).toBe(200)
      expect(response.headers["ratelimit-limit"]).toBe("10")
      expect(Number(response.headers["ratelimit-remaining"])).toBeLessThanOrEqual(9)
      expect(response.headers["cache-control"]).toContain("no-store")
    })

    it("answers the 21st authorize request from one address with 429 and the rate-limit headers", async () => {
      const testClient = await createOAuthClient(host)
      const address = freshLoopbackAddress()
      const url = authorizationUrl(host.url, { clientId: testClient.clientId, pkce: makePkce(), state: "s" })
      const statuses = []
      for (let i = 0; i < 20; i++) statuses.push((await plainRequest(url, { localAddress: address })).status)
      expect(statuses).toEqual(Array(20).fill(200))
      const refused = await plainRequest(url, { localAddress: address })
      expect(refused.status).toBe(429)
      expect(refused.json).toMatchObject({ status_code: 429, error: "Too Many Requests", message: expect.any(String) })
      expect(Number(refused.headers["retry-after"])).toBeGreaterThanOrEqual(1)
      expect(refused.headers["ratelimit-limit"]).toBe("20")
      expect(refused.headers["ratelimit-remaining"]).toBe("0")
      expect(Number(refused.headers["ratelimit-reset"])).toBeGreaterThanOrEqual(1)
      const posted = await plainRequest(new URL("/oauth/authorize", host.url), {
        method: "POST",
        localAddress: address,
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: "action=sign_in"
      })
      expect(posted.status).toBe(429)
      expect((await plainRequest(url, { localAddress: freshLoopbackAddress() })).status).toBe(200)
    })

    it("answers the 11th revocation request of a client within a minute with 429, wrong secrets included", async () => {
      const testClient = await createOAuthClient(host)
      const other = await createOAuthClient(host)
      const guess = (secret: string) => tokenRequest(host.url, { ...testClient, secret }, { token: "svcrf_nothing" }, "/oauth/revoke")
      const statuses = []
      for (let i = 0; i < 10; i++) statuses.push((await guess(`secret_guess_${i}`)).status)
      expect(statuses).toEqual(Array(10).fill(401))
      // The right secret is refused too once over the limit: a guesser learns nothing more.
      const refused = await tokenRequest(host.url, testClient, { token: "svcrf_nothing" }, "/oauth/revoke")
      expect(refused.status).toBe(429)
      expect(refused.json).toMatchObject({ status_code: 429, error: "Too Many Requests", code: "RATE_LIMITED", message: expect.stringMatching(/revocation/) })
      const retryAfter = Number(refused.headers["retry-after"])
      expect(retryAfter).toBeGreaterThanOrEqual(1)
      expect(retryAfter).toBeLessThanOrEqual(60)
      expect(refused.headers["ratelimit-limit"]).toBe("10")
      expect(refused.headers["ratelimit-remaining"]).toBe("0")
      expect(Number(refused.headers["ratelimit-reset"])).toBe(retryAfter)
      // Counted per client, and apart from the token endpoint's count.
      expect((await tokenRequest(host.url, other, { token: "svcrf_nothing" }, "/oauth/revoke")).status).toBe(200)
      expect((await tokenRequest(host.url, testClient, { grant_type: "refresh_token", refresh_token: "svcrf_x" })).status).toBe(400)
    })

    it("puts RateLimit-* headers on revocation answers, success and failure", async () => {
      const testClient = await createOAuthClient(host)
      const ok = await tokenRequest(host.url, testClient, { token: "svcrf_nothing" }, "/oauth/revoke")
      expect(ok.status).toBe(200)
      expect(ok.headers["ratelimit-limit"]).toBe("10")
      expect(ok.headers["ratelimit-remaining"]).toBe("9")
      const wrong = await tokenRequest(host.url, { ...testClient, secret: "secret_wrong" }, { token: "svcrf_nothing" }, "/oauth/revoke")
      expect(wrong.status).toBe(401)
      expect(wrong.headers["ratelimit-remaining"]).toBe("8")
    })

    it("counts the address's requests in the RateLimit-Remaining header of the sign-in page", async () => {
      const testClient = await createOAuthClient(host)
      const address = freshLoopbackAddress()
      const url = authorizationUrl(host.url, { clientId: testClient.clientId, pkce: makePkce(), state: "s" })
      const first = await plainRequest(url, { localAddress: address })
      const second = await plainRequest(url, { localAddress: address })
      expect(first.headers["ratelimit-limit"]).toBe("20")
      expect(first.headers["ratelimit-remaining"]).toBe("19")
      expect(second.headers["ratelimit-remaining"]).toBe("18")
    })
  })
})

describe.each(storeKinds)("OAuth lifetimes on %s", (kind) => {
  let host: TestHost
  let admin: OAuthTestUser

  beforeAll(async () => {
    host = await startTestHost(testStore(kind), {
      oauth: { lifetimes: { codeSeconds: 2, accessSeconds: 1, refreshSeconds: 2, sessionSeconds: 3600 } }
    })
    const tenant = await host.createTenant("BR")
    admin = await createOAuthUser(host, [{ tenantId: tenant.id, role: "admin" }])
  })
  afterAll(() => host?.close())

  it("answers an expired access token with 401", async () => {
    const testClient = await createOAuthClient(host)
    const { tokens } = await obtainTokens(host.url, testClient, admin)
    expect(tokens.expires_in).toBe(1)
    await sleep(1_500)
    const response = await host.request("GET", "/products", { token: tokens.access_token })
    expect(response.status).toBe(401)
    expect(response.body.message).toContain("expired")
    expect(response.headers.get("www-authenticate")).toBe(challengeOf(host.url))
  })

  it("answers an expired JWT access token with 401", async () => {
    const testClient = await createOAuthClient(host)
    const { tokens } = await obtainTokens(host.url, testClient, admin, { resource: host.url })
    await sleep(2_100)
    expect((await host.request("GET", "/products", { token: tokens.access_token })).status).toBe(401)
  })

  it("refuses an expired authorization code", async () => {
    const testClient = await createOAuthClient(host)
    const pkce = makePkce()
    const { redirect } = await driveAuthorization(authorizationUrl(host.url, { clientId: testClient.clientId, pkce, state: "s" }), admin)
    await sleep(2_500)
    const response = await tokenRequest(host.url, testClient, {
      grant_type: "authorization_code",
      code: redirect.searchParams.get("code")!,
      redirect_uri: testClient.redirectUri,
      code_verifier: pkce.verifier
    })
    expect(response.status).toBe(400)
    expect(response.json.error).toBe("invalid_grant")
  })

  it("refuses an expired refresh token", async () => {
    const testClient = await createOAuthClient(host)
    const { tokens } = await obtainTokens(host.url, testClient, admin)
    await sleep(2_500)
    const response = await tokenRequest(host.url, testClient, { grant_type: "refresh_token", refresh_token: tokens.refresh_token })
    expect(response.status).toBe(400)
    expect(response.json.error).toBe("invalid_grant")
  })
})
