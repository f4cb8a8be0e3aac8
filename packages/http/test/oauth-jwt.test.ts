import { createRemoteJWKSet, type CryptoKey, decodeJwt, decodeProtectedHeader, exportJWK, generateKeyPair, type JWTPayload, jwtVerify, SignJWT } from "jose"
import * as client from "openid-client"
import { randomUUID } from "node:crypto"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestHost, type TestHost, type TestTenant } from "../../../test/support/host.js"
import {
  createOAuthClient,
  createOAuthUser,
  type OAuthTestUser,
  obtainTokens,
  tokenRequest
} from "../../../test/support/oauth.js"
import { storeKinds, testStore } from "../../../test/support/stores.js"
import { SigningKeys } from "@erp/core"
import { Effect } from "effect"

const challengeOf = (url: string) => `Bearer realm="erp", resource_metadata="${url}/.well-known/oauth-protected-resource"`

const base64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url")

/** An `alg: none` JWT: header and payload, empty signature. */
const unsignedJwt = (payload: JWTPayload) => `${base64url({ alg: "none", typ: "JWT" })}.${base64url(payload)}.`

const REGISTERED_CLAIMS = ["iss", "sub", "aud", "exp", "nbf", "iat", "jti"]

describe.each(storeKinds)("JWT access tokens for the MCP resource on %s", (kind) => {
  let host: TestHost
  let tenant: TestTenant
  let admin: OAuthTestUser

  beforeAll(async () => {
    host = await startTestHost(testStore(kind))
    tenant = await host.createTenant("BR")
    admin = await createOAuthUser(host, [{ tenantId: tenant.id, role: "admin" }])
  })
  afterAll(() => host?.close())

  const jwtFor = async (user = admin, options: { resource?: string; scope?: string } = {}) => {
    const testClient = await createOAuthClient(host)
    const obtained = await obtainTokens(host.url, testClient, user, { resource: options.resource ?? host.url, scope: options.scope })
    return { ...obtained, testClient }
  }

  const verify = (token: string) =>
    jwtVerify(token, createRemoteJWKSet(new URL(`${host.url}/oauth/jwks`)), { issuer: host.url, audience: host.url, algorithms: ["ES256"] })

  it("answers an access token that is a JWT (and a svcrf_ refresh token) when resource is the server's URL", async () => {
    const { tokens } = await jwtFor()
    expect(tokens.access_token.split(".")).toHaveLength(3)
    expect(tokens.access_token.startsWith("svc_")).toBe(false)
    expect(tokens.refresh_token).toMatch(/^svcrf_/)
    expect(tokens.token_type.toLowerCase()).toBe("bearer")
  })

  it("signs it with ES256 under a kid published at /oauth/jwks", async () => {
    const { tokens } = await jwtFor()
    const header = decodeProtectedHeader(tokens.access_token)
    expect(header.alg).toBe("ES256")
    const jwks = await host.request("GET", "/oauth/jwks")
    expect(jwks.body.keys.map((key: { kid: string }) => key.kid)).toContain(header.kid)
  })

  it("verifies with jose against /oauth/jwks: iss = host URL, aud = resource, sub = user id", async () => {
    const { tokens } = await jwtFor()
    const { payload, protectedHeader } = await verify(tokens.access_token)
    expect(protectedHeader.alg).toBe("ES256")
    expect(payload.iss).toBe(host.url)
    expect(payload.aud === host.url || (Array.isArray(payload.aud) && payload.aud.includes(host.url))).toBe(true)
    expect(payload.sub).toBe(admin.id)
    expect(payload.exp! - payload.iat!).toBe(3600)
  })

  it("carries only sub besides the registered claims (no email, tenant or role)", async () => {
    const { tokens } = await jwtFor()
    const claims = Object.keys(decodeJwt(tokens.access_token))
    expect(claims.filter((claim) => !REGISTERED_CLAIMS.includes(claim))).toEqual([])
    expect(claims).toContain("sub")
  })

  it("takes the resource with a trailing slash as the same resource", async () => {
    const { tokens } = await jwtFor(admin, { resource: `${host.url}/` })
    expect(tokens.access_token.split(".")).toHaveLength(3)
    expect((await host.request("GET", "/products", { token: tokens.access_token })).status).toBe(200)
  })

  it("authenticates REST calls with the JWT", async () => {
    const { tokens } = await jwtFor()
    expect((await host.request("GET", "/products", { token: tokens.access_token })).status).toBe(200)
    const created = await host.request("POST", "/products", { token: tokens.access_token, body: { name: `By JWT ${randomUUID().slice(0, 8)}` } })
    expect(created.status).toBe(201)
    expect((await host.request("GET", `/products/${created.body.id}`, { token: tenant.token })).status).toBe(200)
  })

  it("lets a JWT of a products:read grant read", async () => {
    const { tokens } = await jwtFor(admin, { scope: "products:read" })
    expect(tokens.scope).toBe("products:read")
    expect((await host.request("GET", "/products", { token: tokens.access_token })).status).toBe(200)
  })

  it("narrows a JWT grant to its scopes: products:read cannot create, even for an admin", async () => {
    const { tokens } = await jwtFor(admin, { scope: "products:read" })
    expect((await host.request("GET", "/products", { token: tokens.access_token })).status).toBe(200)
    expect((await host.request("POST", "/products", { token: tokens.access_token, body: { name: "Not allowed" } })).status).toBe(403)
  })

  it("answers /oauth/userinfo for the JWT", async () => {
    const { tokens } = await jwtFor()
    const info = await host.request("GET", "/oauth/userinfo", { token: tokens.access_token })
    expect(info.status).toBe(200)
    expect(info.body).toMatchObject({ sub: admin.id, id: admin.id, email: admin.email })
  })

  it("refuses a JWT whose payload was tampered with", async () => {
    const { tokens } = await jwtFor()
    const other = await createOAuthUser(host, [{ tenantId: tenant.id, role: "admin" }])
    const [header, , signature] = tokens.access_token.split(".")
    const forged = `${header}.${base64url({ ...decodeJwt(tokens.access_token), sub: other.id })}.${signature}`
    const response = await host.request("GET", "/products", { token: forged })
    expect(response.status).toBe(401)
    expect(response.headers.get("www-authenticate")).toBe(challengeOf(host.url))
  })

  it("refuses a JWT whose signature was altered", async () => {
    const { tokens } = await jwtFor()
    const [header, payload, signature] = tokens.access_token.split(".")
    const flipped = signature.slice(0, 10) + (signature[10] === "A" ? "B" : "A") + signature.slice(11)
    expect((await host.request("GET", "/products", { token: `${header}.${payload}.${flipped}` })).status).toBe(401)
  })

  it("refuses a JWT with our claims signed by another key", async () => {
    const { tokens } = await jwtFor()
    const { privateKey } = await generateKeyPair("ES256")
    const forged = await new SignJWT({ ...decodeJwt(tokens.access_token) })
      .setProtectedHeader({ alg: "ES256", kid: decodeProtectedHeader(tokens.access_token).kid, typ: "at+jwt" })
      .sign(privateKey)
    expect((await host.request("GET", "/products", { token: forged })).status).toBe(401)
  })

  it("refuses an unsigned (alg none) JWT with our issuer", async () => {
    const { tokens } = await jwtFor()
    expect((await host.request("GET", "/products", { token: unsignedJwt(decodeJwt(tokens.access_token)) })).status).toBe(401)
  })

  it("refuses a JWT for another audience signed by us", async () => {
    // Any audience other than our own resource gives an opaque token, so forge one with the claims changed.
    const { tokens } = await jwtFor()
    const [header, , signature] = tokens.access_token.split(".")
    const forged = `${header}.${base64url({ ...decodeJwt(tokens.access_token), aud: "https://elsewhere.example" })}.${signature}`
    expect((await host.request("GET", "/products", { token: forged })).status).toBe(401)
  })

  describe("signed with our own key, but not as we issue them", () => {
    /** Re-signs a real token's claims, changed by `change`, with the server's current key (as a leaked key or a bug would). */
    const resign = async (token: string, change: (claims: JWTPayload) => JWTPayload, typ = "at+jwt") => {
      const key = await host.run(Effect.flatMap(SigningKeys, (keys) => keys.current))
      return new SignJWT(change({ ...decodeJwt(token) })).setProtectedHeader({ alg: "ES256", kid: key.kid, typ }).sign(key.privateKey)
    }
    const without = (claim: string) => (claims: JWTPayload) => {
      const { [claim]: _dropped, ...rest } = claims
      return rest
    }

    it("accepts the claims re-signed unchanged (the control: the forgeries below differ only as named)", async () => {
      const { tokens } = await jwtFor()
      expect((await host.request("GET", "/products", { token: await resign(tokens.access_token, (claims) => claims) })).status).toBe(200)
    })

    it.each([
      ["no exp", without("exp")],
      ["no iat", without("iat")],
      ["no iss", without("iss")],
      ["no aud", without("aud")],
      ["no jti", without("jti")],
      ["an exp in the past", (claims: JWTPayload) => ({ ...claims, iat: claims.iat! - 7200, exp: claims.iat! - 3600 })],
      ["another issuer", (claims: JWTPayload) => ({ ...claims, iss: "https://elsewhere.example" })],
      ["another audience", (claims: JWTPayload) => ({ ...claims, aud: "https://elsewhere.example/mcp" })],
      ["a jti never issued", (claims: JWTPayload) => ({ ...claims, jti: randomUUID() })]
    ])("refuses one with %s", async (_, change) => {
      const { tokens } = await jwtFor()
      const response = await host.request("GET", "/products", { token: await resign(tokens.access_token, change) })
      expect(response.status).toBe(401)
      expect(response.headers.get("www-authenticate")).toBe(challengeOf(host.url))
    })

    it("refuses one whose sub is another user than the one its grant (jti) was issued to", async () => {
      const { tokens } = await jwtFor()
      const other = await createOAuthUser(host, [{ tenantId: tenant.id, role: "admin" }])
      const response = await host.request("GET", "/products", { token: await resign(tokens.access_token, (claims) => ({ ...claims, sub: other.id })) })
      expect(response.status).toBe(401)
      expect(response.body.message).toContain("subject")
      expect((await host.request("GET", "/oauth/userinfo", { token: await resign(tokens.access_token, (claims) => ({ ...claims, sub: other.id })) })).status).toBe(401)
    })

    it("refuses one typed JWT instead of at+jwt (RFC 9068)", async () => {
      const { tokens } = await jwtFor()
      expect((await host.request("GET", "/products", { token: await resign(tokens.access_token, (claims) => claims, "JWT") })).status).toBe(401)
    })

    it("refuses one signed HS256 with the public key (algorithm pinned to ES256)", async () => {
      const { tokens } = await jwtFor()
      const jwks = await host.request("GET", "/oauth/jwks")
      const forged = await new SignJWT({ ...decodeJwt(tokens.access_token) })
        .setProtectedHeader({ alg: "HS256", kid: decodeProtectedHeader(tokens.access_token).kid, typ: "at+jwt" })
        .sign(new TextEncoder().encode(JSON.stringify(jwks.body.keys[0])))
      expect((await host.request("GET", "/products", { token: forged })).status).toBe(401)
    })
  })

  it("answers 401 once the JWT is revoked (RFC 7009 with openid-client)", async () => {
    const { tokens, testClient } = await jwtFor()
    const config = await client.discovery(new URL(host.url), testClient.clientId, undefined, client.ClientSecretBasic(testClient.secret!), {
      algorithm: "oauth2",
      execute: [client.allowInsecureRequests]
    })
    expect((await host.request("GET", "/products", { token: tokens.access_token })).status).toBe(200)
    await client.tokenRevocation(config, tokens.access_token)
    const response = await host.request("GET", "/products", { token: tokens.access_token })
    expect(response.status).toBe(401)
    expect(response.headers.get("www-authenticate")).toBe(challengeOf(host.url))
  })

  it("refreshes a JWT grant into a new JWT", async () => {
    const { tokens, testClient } = await jwtFor()
    const renewed = await tokenRequest(host.url, testClient, { grant_type: "refresh_token", refresh_token: tokens.refresh_token })
    expect(renewed.status).toBe(200)
    expect(renewed.json.access_token.split(".")).toHaveLength(3)
    expect(renewed.json.access_token).not.toBe(tokens.access_token)
    expect((await verify(renewed.json.access_token)).payload.sub).toBe(admin.id)
    expect((await host.request("GET", "/products", { token: renewed.json.access_token })).status).toBe(200)
  })

  it("refuses a resource at the token endpoint other than the authorization request's (invalid_target)", async () => {
    const testClient = await createOAuthClient(host)
    const failure = await obtainTokens(host.url, testClient, admin, { resource: host.url, exchangeResource: "https://elsewhere.example" }).then(
      () => undefined,
      (error: Error) => error.message
    )
    expect(failure).toContain("400")
    expect(failure).toContain("invalid_target")
  })
})

describe.each(storeKinds)("the first JWT of a host on %s", (kind) => {
  // Regression: the signing keys were once first loaded inside the code exchange's transaction by
  // an effect running outside it; on PGlite (one connection) the token request then never answered.
  let host: TestHost
  let hung = false

  beforeAll(async () => {
    host = await startTestHost(testStore(kind))
  })
  afterAll(async () => {
    // A wedged host never finishes closing; do not wait for it then.
    if (host) await Promise.race([host.close(), new Promise((resolve) => setTimeout(resolve, hung ? 100 : 20_000))])
  })

  it("issues a JWT without /oauth/jwks having been asked first", async () => {
    const tenant = await host.createTenant("BR")
    const user = await createOAuthUser(host, [{ tenantId: tenant.id, role: "admin" }])
    const testClient = await createOAuthClient(host)
    const outcome = await Promise.race([
      obtainTokens(host.url, testClient, user, { resource: host.url }).then((obtained) => obtained.tokens.access_token),
      new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 10_000))
    ])
    hung = outcome === undefined
    expect(outcome, "the token request did not answer within 10 s").toBeDefined()
    expect(outcome!.split(".")).toHaveLength(3)
    expect((await host.request("GET", "/products", { token: outcome })).status).toBe(200)
  }, 20_000)
})

describe.each(storeKinds)("an external identity provider's JWTs on %s", (kind) => {
  const issuer = "https://idp.example.test"
  const audience = "erp-api"
  const kid = "idp-key-1"
  let jwksServer: http.Server
  let privateKey: CryptoKey
  let host: TestHost
  let tenant: TestTenant
  let user: OAuthTestUser
  let both: OAuthTestUser
  let second: TestTenant

  beforeAll(async () => {
    const pair = await generateKeyPair("RS256", { extractable: true })
    privateKey = pair.privateKey
    const publicJwk = { ...(await exportJWK(pair.publicKey)), kid, alg: "RS256", use: "sig" }
    jwksServer = http.createServer((request, response) => {
      response.writeHead(request.url === "/jwks" ? 200 : 404, { "content-type": "application/json" })
      response.end(JSON.stringify(request.url === "/jwks" ? { keys: [publicJwk] } : {}))
    })
    await new Promise<void>((resolve) => jwksServer.listen(0, "127.0.0.1", resolve))
    const jwksUrl = `http://127.0.0.1:${(jwksServer.address() as AddressInfo).port}/jwks`
    host = await startTestHost(testStore(kind), { oauth: { externalIdp: { issuer, audience, jwksUrl, algorithms: ["RS256"], userClaim: "sub" } } })
    tenant = await host.createTenant("BR")
    second = await host.createTenant("BR")
    user = await createOAuthUser(host, [{ tenantId: tenant.id, role: "admin" }])
    both = await createOAuthUser(host, [{ tenantId: tenant.id, role: "admin" }, { tenantId: second.id, role: "member", permissions: ["products:read"] }])
  })
  afterAll(async () => {
    await host?.close()
    await new Promise<void>((resolve) => (jwksServer ? jwksServer.close(() => resolve()) : resolve()))
  })

  const sign = (claims: JWTPayload, options: { iss?: string; aud?: string; key?: CryptoKey; kid?: string; expiresIn?: string } = {}) =>
    new SignJWT(claims)
      .setProtectedHeader({ alg: "RS256", kid: options.kid ?? kid })
      .setIssuer(options.iss ?? issuer)
      .setAudience(options.aud ?? audience)
      .setIssuedAt()
      .setExpirationTime(options.expiresIn ?? "5m")
      .sign(options.key ?? privateKey)

  const products = (token: string, headers: Record<string, string> = {}) => host.request("GET", "/products", { token, headers })

  it("accepts the provider's RS256 JWT naming a user id", async () => {
    expect((await products(await sign({ sub: user.id }))).status).toBe(200)
  })

  it("accepts one naming the user's email", async () => {
    expect((await products(await sign({ sub: user.email }))).status).toBe(200)
  })

  it("acts with the user's role: an admin can create", async () => {
    const response = await host.request("POST", "/products", { token: await sign({ sub: user.id }), body: { name: `By IdP ${randomUUID().slice(0, 8)}` } })
    expect(response.status).toBe(201)
  })

  it("picks the company with X-Tenant-Id and applies the membership there", async () => {
    const token = await sign({ sub: both.id })
    expect((await products(token, { "x-tenant-id": second.id })).status).toBe(200)
    const created = await host.request("POST", "/products", { token, body: { name: "Member cannot" }, headers: { "x-tenant-id": second.id } })
    expect(created.status).toBe(403)
    expect((await host.request("POST", "/products", { token, body: { name: `Admin can ${randomUUID().slice(0, 8)}` }, headers: { "x-tenant-id": tenant.id } })).status).toBe(201)
  })

  it("answers /oauth/userinfo for the provider's JWT", async () => {
    const info = await host.request("GET", "/oauth/userinfo", { token: await sign({ sub: user.id }) })
    expect(info.status).toBe(200)
    expect(info.body.sub).toBe(user.id)
  })

  it("still accepts our own JWTs beside the provider's", async () => {
    const testClient = await createOAuthClient(host)
    const { tokens } = await obtainTokens(host.url, testClient, user, { resource: host.url })
    expect((await products(tokens.access_token)).status).toBe(200)
  })

  it.each([
    ["a wrong audience", () => sign({ sub: user.id }, { aud: "someone-else" })],
    ["a wrong issuer", () => sign({ sub: user.id }, { iss: "https://evil.example.test" })],
    ["an issuer differing only by a trailing slash", () => sign({ sub: user.id }, { iss: `${issuer}/` })],
    ["an expired token", () => sign({ sub: user.id, iat: Math.floor(Date.now() / 1000) - 3600 }, { expiresIn: "-10m" })],
    ["alg none", async () => unsignedJwt({ sub: user.id, iss: issuer, aud: audience, exp: Math.floor(Date.now() / 1000) + 300 })],
    ["HS256 keyed with a shared secret", () =>
      new SignJWT({ sub: user.id }).setProtectedHeader({ alg: "HS256", kid }).setIssuer(issuer).setAudience(audience).setExpirationTime("5m")
        .sign(new TextEncoder().encode("a-secret-that-is-long-enough-for-hs256"))],
    ["a key the provider does not publish", async () => sign({ sub: user.id }, { key: (await generateKeyPair("RS256")).privateKey })],
    ["an unknown user", () => sign({ sub: randomUUID() })],
    ["an unknown email", () => sign({ sub: "nobody@example.com" })],
    ["no sub claim", () => sign({})],
    ["no exp claim", () => new SignJWT({ sub: user.id }).setProtectedHeader({ alg: "RS256", kid }).setIssuer(issuer).setAudience(audience).setIssuedAt().sign(privateKey)]
  ])("answers %s with 401", async (_, make) => {
    const response = await products(await make())
    expect(response.status).toBe(401)
    expect(response.body).toMatchObject({ status_code: 401, error: "Unauthorized" })
    expect(response.headers.get("www-authenticate")).toBe(challengeOf(host.url))
  })

  it("answers an HS256 token keyed with the provider's public key (algorithm confusion) with 401", async () => {
    const jwks = await (await fetch(`http://127.0.0.1:${(jwksServer.address() as AddressInfo).port}/jwks`)).json() as { keys: Array<{ n: string }> }
    const token = await new SignJWT({ sub: user.id }).setProtectedHeader({ alg: "HS256", kid }).setIssuer(issuer).setAudience(audience).setExpirationTime("5m")
      .sign(new TextEncoder().encode(JSON.stringify(jwks.keys[0])))
    expect((await products(token)).status).toBe(401)
  })
})
