import { allScopes, OAuth, type OAuthClient, parsePermissionSpecs, type Role, Tenancy } from "@erp/core"
import { Effect, Result } from "effect"
import { createHash, randomBytes, randomInt, randomUUID } from "node:crypto"
import * as http from "node:http"
import type { TestHost } from "./host.js"

/** A password that passes the server's rules (10 characters at least). */
export const TEST_PASSWORD = "correct horse battery staple"

/** Where the driver pretends to be redirected to: nothing listens there, the driver never follows it. */
export const TEST_REDIRECT_URI = "http://127.0.0.1:1/cb"

// ---------------------------------------------------------------------------------------------
// Plain HTTP with a chosen source address
// ---------------------------------------------------------------------------------------------

/**
 * A loopback address of its own (Linux routes all of 127.0.0.0/8 to `lo`). The authorize
 * endpoint is limited per IP (20 a minute), so each driven flow comes from a fresh
 * address: tests neither wait for windows nor trip over each other's counters.
 */
export const freshLoopbackAddress = (): string => `127.${randomInt(1, 255)}.${randomInt(0, 256)}.${randomInt(1, 255)}`

export interface PlainResponse {
  readonly status: number
  readonly headers: http.IncomingHttpHeaders
  readonly text: string
  /** The body parsed as JSON, when it is JSON. */
  readonly json: any
  /** `Location`, resolved against the request URL. */
  readonly location: URL | undefined
}

/** One HTTP request over node:http (no redirects followed, any `Host` allowed, optional source address). */
export const plainRequest = (
  url: string | URL,
  options: { method?: string; headers?: Record<string, string>; body?: string; localAddress?: string } = {}
): Promise<PlainResponse> =>
  new Promise((resolve, reject) => {
    const target = new URL(url)
    const body = options.body === undefined ? undefined : Buffer.from(options.body)
    const request = http.request(
      {
        host: target.hostname,
        port: target.port,
        path: `${target.pathname}${target.search}`,
        method: options.method ?? "GET",
        headers: { ...(body ? { "content-length": String(body.length) } : {}), ...options.headers },
        ...(options.localAddress ? { localAddress: options.localAddress } : {}),
        agent: false
      },
      (response) => {
        const chunks: Array<Buffer> = []
        response.on("data", (chunk: Buffer) => chunks.push(chunk))
        response.on("error", reject)
        response.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8")
          let json: unknown = undefined
          if ((response.headers["content-type"] ?? "").includes("json") && text) {
            try {
              json = JSON.parse(text)
            } catch {
              json = undefined
            }
          }
          const location = response.headers.location ? new URL(response.headers.location, target) : undefined
          resolve({ status: response.statusCode ?? 0, headers: response.headers, text, json, location })
        })
      }
    )
    request.on("error", reject)
    request.end(body)
  })

export const formBody = (fields: Readonly<Record<string, string | undefined>>): string => {
  const params = new URLSearchParams()
  for (const [name, value] of Object.entries(fields)) if (value !== undefined) params.set(name, value)
  return params.toString()
}

/**
 * A user agent over plain HTTP: keeps cookies (per host, paths ignored: the server only
 * sets them for /oauth) and sends every request from one loopback address.
 */
export class FormSession {
  readonly cookies = new Map<string, string>()

  constructor(readonly localAddress: string = freshLoopbackAddress()) {}

  async request(method: string, url: string | URL, options: { form?: Readonly<Record<string, string | undefined>>; headers?: Record<string, string> } = {}) {
    const headers: Record<string, string> = { ...options.headers }
    if (this.cookies.size > 0) headers.cookie = [...this.cookies].map(([name, value]) => `${name}=${value}`).join("; ")
    if (options.form) headers["content-type"] = "application/x-www-form-urlencoded"
    const response = await plainRequest(url, {
      method,
      headers,
      ...(options.form ? { body: formBody(options.form) } : {}),
      localAddress: this.localAddress
    })
    for (const line of response.headers["set-cookie"] ?? []) this.keepCookie(line)
    return response
  }

  get(url: string | URL) {
    return this.request("GET", url)
  }

  post(url: string | URL, form: Readonly<Record<string, string | undefined>>) {
    return this.request("POST", url, { form })
  }

  private keepCookie(line: string) {
    const [pair, ...attributes] = line.split(";").map((part) => part.trim())
    const equals = pair.indexOf("=")
    const name = pair.slice(0, equals)
    const value = pair.slice(equals + 1)
    const expired = attributes.some((attribute) => {
      const [key, raw] = attribute.split("=")
      if (key.toLowerCase() === "max-age") return Number(raw) <= 0
      if (key.toLowerCase() === "expires") return Date.parse(raw) <= Date.now()
      return false
    })
    if (expired || value === "") this.cookies.delete(name)
    else this.cookies.set(name, value)
  }
}

// ---------------------------------------------------------------------------------------------
// Reading the server-rendered pages
// ---------------------------------------------------------------------------------------------

const decodeEntities = (text: string) =>
  text.replace(/&(amp|lt|gt|quot|#39|#96);/g, (_, name: string) => ({ amp: "&", lt: "<", gt: ">", quot: '"', "#39": "'", "#96": "`" })[name]!)

const attribute = (tag: string, name: string) => {
  const match = new RegExp(`\\s${name}="([^"]*)"`).exec(tag)
  return match ? decodeEntities(match[1]) : undefined
}

/** The hidden fields of the page's form (the authorization request, the action and the CSRF token). */
export const hiddenFieldsOf = (html: string): Record<string, string> => {
  const fields: Record<string, string> = {}
  for (const [tag] of html.matchAll(/<input\b[^>]*>/g)) {
    if (attribute(tag, "type") !== "hidden") continue
    const name = attribute(tag, "name")
    if (name !== undefined) fields[name] = attribute(tag, "value") ?? ""
  }
  return fields
}

/** The options of the consent page's company select (empty when the user has one company). */
export const tenantOptionsOf = (html: string): Array<{ value: string; label: string }> => {
  const select = /<select[^>]*name="tenant_id"[^>]*>([\s\S]*?)<\/select>/.exec(html)
  if (!select) return []
  return [...select[1].matchAll(/<option value="([^"]*)">([^<]*)<\/option>/g)].map((match) => ({
    value: decodeEntities(match[1]),
    label: decodeEntities(match[2])
  }))
}

/** The scope lines listed on the consent page, e.g. `products: read, create`. */
export const scopeLinesOf = (html: string): Array<string> => {
  const list = /<ul id="scopes">([\s\S]*?)<\/ul>/.exec(html)
  if (!list) return []
  return [...list[1].matchAll(/<li>([\s\S]*?)<\/li>/g)].map((match) => decodeEntities(match[1].replace(/<[^>]+>/g, "")))
}

// ---------------------------------------------------------------------------------------------
// PKCE and authorization requests
// ---------------------------------------------------------------------------------------------

export interface Pkce {
  readonly verifier: string
  readonly challenge: string
}

/** RFC 7636: a 43-character verifier and its S256 challenge. */
export const makePkce = (): Pkce => {
  const verifier = randomBytes(32).toString("base64url")
  return { verifier, challenge: createHash("sha256").update(verifier).digest("base64url") }
}

export interface AuthorizationRequest {
  readonly clientId: string
  readonly redirectUri?: string
  readonly scope?: string
  readonly state?: string
  readonly pkce?: Pkce | undefined
  readonly resource?: string
  /** Extra or overriding query parameters; `undefined` removes one. */
  readonly extra?: Readonly<Record<string, string | undefined>>
}

/** `/oauth/authorize?…` under `baseUrl` (its path kept), with `response_type=code` and the S256 challenge. */
export const authorizationUrl = (baseUrl: string, request: AuthorizationRequest): URL => {
  const url = new URL(`${baseUrl.replace(/\/+$/, "")}/oauth/authorize`)
  const params: Record<string, string | undefined> = {
    response_type: "code",
    client_id: request.clientId,
    redirect_uri: request.redirectUri ?? TEST_REDIRECT_URI,
    scope: request.scope,
    state: request.state,
    code_challenge: request.pkce?.challenge,
    code_challenge_method: request.pkce ? "S256" : undefined,
    resource: request.resource,
    ...request.extra
  }
  for (const [name, value] of Object.entries(params)) if (value !== undefined) url.searchParams.set(name, value)
  return url
}

export interface Credentials {
  readonly email: string
  readonly password: string
}

export interface DrivenAuthorization {
  /** Where the server finally sent the user agent (the client's redirect URI with `code` or `error`). */
  readonly redirect: URL
  readonly session: FormSession
  /** The consent page as served (absent when the flow ended before it). */
  readonly consentHtml: string | undefined
}

const expectStatus = (response: PlainResponse, expected: number, step: string) => {
  if (response.status !== expected) {
    throw new Error(`${step}: expected HTTP ${expected}, got ${response.status}: ${response.text.slice(0, 500)}`)
  }
}

/**
 * Drives the sign-in and consent forms like a browser would, over plain HTTP: GET the
 * authorization URL, post the sign-in form, follow the redirect back, post the consent
 * form (Allow, or Deny), and answer the final redirect to the client.
 * With a `session` already signed in, the sign-in step is skipped.
 */
export const driveAuthorization = async (
  url: URL,
  credentials: Credentials,
  options: { tenantId?: string; decision?: "allow" | "deny"; session?: FormSession } = {}
): Promise<DrivenAuthorization> => {
  const session = options.session ?? new FormSession()
  let page = await session.get(url)
  if (page.status === 303 && page.location) return { redirect: page.location, session, consentHtml: undefined }
  expectStatus(page, 200, "GET /oauth/authorize")
  if (hiddenFieldsOf(page.text).action === "sign_in") {
    const signIn = await session.post(new URL("/oauth/authorize", url), {
      ...hiddenFieldsOf(page.text),
      email: credentials.email,
      password: credentials.password
    })
    expectStatus(signIn, 303, "POST sign-in form")
    if (signIn.location!.origin !== url.origin) return { redirect: signIn.location!, session, consentHtml: undefined }
    page = await session.get(signIn.location!)
    if (page.status === 303 && page.location) return { redirect: page.location, session, consentHtml: undefined }
    expectStatus(page, 200, "GET /oauth/authorize after sign-in")
  }
  const fields = hiddenFieldsOf(page.text)
  if (fields.action !== "consent") throw new Error(`expected the consent page, got: ${page.text.slice(0, 500)}`)
  const tenantId = options.tenantId ?? fields.tenant_id ?? tenantOptionsOf(page.text)[0]?.value
  const consent = await session.post(new URL("/oauth/authorize", url), {
    ...fields,
    tenant_id: tenantId,
    decision: options.decision ?? "allow"
  })
  expectStatus(consent, 303, "POST consent form")
  return { redirect: consent.location!, session, consentHtml: page.text }
}

// ---------------------------------------------------------------------------------------------
// Users, clients and tokens on a test host
// ---------------------------------------------------------------------------------------------

export interface OAuthTestUser extends Credentials {
  readonly id: string
  readonly name: string
}

export interface MembershipSpec {
  readonly tenantId: string
  readonly role: Role
  /** Permission specs of a member, e.g. `customers:read`. */
  readonly permissions?: ReadonlyArray<string>
}

/** A user with a password, a member of `memberships` (none by default). */
export const createOAuthUser = (
  host: TestHost,
  memberships: ReadonlyArray<MembershipSpec> = [],
  options: { password?: string; name?: string } = {}
): Promise<OAuthTestUser> => {
  const name = options.name ?? `User ${randomUUID().slice(0, 8)}`
  const email = `user-${randomUUID()}@example.com`
  const password = options.password ?? TEST_PASSWORD
  return host.run(Effect.gen(function* () {
    const tenancy = yield* Tenancy
    const oauth = yield* OAuth
    const user = yield* tenancy.createUser({ email, name })
    for (const membership of memberships) {
      const permissions = Result.getOrThrow(parsePermissionSpecs(membership.permissions ?? []))
      yield* tenancy.addMember({ tenantId: membership.tenantId, userId: user.id, role: membership.role, permissions })
    }
    yield* oauth.setPassword(user.id, password)
    return { id: user.id, email: user.email, name: user.name, password }
  }).pipe(Effect.orDie))
}

export type ClientAuthMethod = "client_secret_basic" | "client_secret_post" | "none"

export interface OAuthTestClient {
  readonly client: OAuthClient
  readonly clientId: string
  /** Undefined for a public client. */
  readonly secret: string | undefined
  readonly redirectUri: string
  /** How the helpers below authenticate it at the token endpoint. */
  readonly auth: ClientAuthMethod
}

/** A client registered by the operator; a fresh one per test keeps its token-endpoint counter to itself. */
export const createOAuthClient = async (
  host: TestHost,
  options: { kind?: OAuthClient["kind"]; auth?: ClientAuthMethod; redirectUris?: ReadonlyArray<string>; name?: string } = {}
): Promise<OAuthTestClient> => {
  const auth = options.auth ?? (options.kind === "public" ? "none" : "client_secret_basic")
  const kind = options.kind ?? (auth === "none" ? "public" : "confidential")
  const redirectUris = options.redirectUris ?? [TEST_REDIRECT_URI]
  const { client, secret } = await host.run(Effect.flatMap(OAuth, (oauth) =>
    oauth.createClient({ name: options.name ?? `App ${randomUUID().slice(0, 8)}`, redirectUris, kind, registration: "operator" })).pipe(Effect.orDie))
  return { client, clientId: client.client_id, secret, redirectUri: redirectUris[0], auth }
}

/** RFC 6749 2.3.1 Basic credentials: id and secret form-urlencoded, then base64. */
export const basicAuthorization = (clientId: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`).toString("base64")}`

/** POST /oauth/token with `form`, the client authenticated its way. */
export const tokenRequest = (
  baseUrl: string,
  client: Pick<OAuthTestClient, "clientId" | "secret" | "auth">,
  form: Readonly<Record<string, string | undefined>>,
  endpoint = "/oauth/token"
) => {
  const headers: Record<string, string> = { "content-type": "application/x-www-form-urlencoded" }
  let fields = form
  if (client.auth === "client_secret_basic") headers.authorization = basicAuthorization(client.clientId, client.secret ?? "")
  else if (client.auth === "client_secret_post") fields = { client_id: client.clientId, client_secret: client.secret, ...form }
  else fields = { client_id: client.clientId, ...form }
  return plainRequest(new URL(endpoint, baseUrl), { method: "POST", headers, body: formBody(fields) })
}

export interface Tokens {
  readonly access_token: string
  readonly refresh_token: string
  readonly token_type: string
  readonly expires_in: number
  readonly scope: string
}

export interface ObtainedTokens {
  readonly tokens: Tokens
  readonly code: string
  readonly pkce: Pkce
  readonly redirect: URL
  readonly session: FormSession
}

/** The whole code flow without a client library: authorize, sign in, consent, exchange. */
export const obtainTokens = async (
  baseUrl: string,
  client: OAuthTestClient,
  user: Credentials,
  options: { scope?: string; resource?: string; tenantId?: string; session?: FormSession; exchangeResource?: string } = {}
): Promise<ObtainedTokens> => {
  const pkce = makePkce()
  const state = randomUUID()
  const url = authorizationUrl(baseUrl, { clientId: client.clientId, redirectUri: client.redirectUri, scope: options.scope, state, pkce, resource: options.resource })
  const { redirect, session } = await driveAuthorization(url, user, { tenantId: options.tenantId, session: options.session })
  const code = redirect.searchParams.get("code")
  if (!code) throw new Error(`expected a code, the server redirected to ${redirect}`)
  if (redirect.searchParams.get("state") !== state) throw new Error(`state did not come back: ${redirect}`)
  const response = await tokenRequest(baseUrl, client, {
    grant_type: "authorization_code",
    code,
    redirect_uri: client.redirectUri,
    code_verifier: pkce.verifier,
    resource: options.exchangeResource
  })
  if (response.status !== 200) throw new Error(`token exchange failed with ${response.status}: ${response.text}`)
  return { tokens: response.json as Tokens, code, pkce, redirect, session }
}

/**
 * A `svc_` access token of a new user with the admin role in `tenantId`, issued by the
 * authorization server directly (no pages): for tests of admin-only routes.
 */
export const adminAccessToken = (host: Pick<TestHost, "run" | "url">, tenantId: string): Promise<string> =>
  host.run(Effect.gen(function* () {
    const tenancy = yield* Tenancy
    const oauth = yield* OAuth
    const user = yield* tenancy.createUser({ email: `admin-${randomBytes(6).toString("hex")}@example.com`, name: "Admin" })
    yield* tenancy.addMember({ tenantId, userId: user.id, role: "admin" })
    const { client } = yield* oauth.createClient({ name: "admin tests", redirectUris: [TEST_REDIRECT_URI], kind: "confidential", registration: "operator" })
    const pkce = makePkce()
    const code = yield* oauth.issueCode({
      client, userId: user.id, tenantId, redirectUri: TEST_REDIRECT_URI, redirectUriGiven: true, scopes: allScopes(), codeChallenge: pkce.challenge, resource: undefined
    })
    const tokens = yield* oauth.exchangeCode({ client, code, redirectUri: TEST_REDIRECT_URI, codeVerifier: pkce.verifier, resource: undefined }, { issuer: host.url })
    return tokens.access_token
  }).pipe(Effect.orDie))
