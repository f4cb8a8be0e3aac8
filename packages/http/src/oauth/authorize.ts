import {
  AUTHORIZE_LIMIT,
  mcpResource,
  type OAuthClient,
  OAuth,
  OAuthConfig,
  parseScope,
  RateLimiter,
  sameResource,
  textProblem
} from "@erp/core"
import { Effect, Option, Result } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import { clearCookie, cookieOptions, CSRF_COOKIE, makeCurrentUser, newFormToken, sameText, secureCookies as secureCookiesOf, SESSION_COOKIE, setSessionCookie } from "../browser-session.js"
import { readForm } from "./form.js"
import { type Html, htmlResponse } from "../html.js"
import { PAGE_HEADERS } from "./layout.js"
import { AUTHORIZE_PARAMS, type AuthorizeParams, consentPage, errorPage, signInPage } from "./pages.js"
import { clientLimitKey, rateLimitHeaders, tooManyRequests } from "../rate-limit.js"
import { checkPassword } from "../sign-in-attempts.js"
import { publicPath, publicUrl } from "../public-url.js"

/** An authorization page with the pages' headers (`extra` widens the consent page's form-action). */
const pageResponse = (body: Html, status = 200, extra: Record<string, string> = {}) => htmlResponse(body, { status, headers: { ...PAGE_HEADERS, ...extra } })

/**
 * Browsers apply `form-action` to the redirect that follows a form post too, so the
 * consent page also allows the client's redirect URI (its origin, or its scheme
 * for a native app's private-use URI).
 */
const consentPolicy = (redirectUri: string) => {
  const url = new URL(redirectUri)
  const target = url.protocol === "http:" || url.protocol === "https:" ? url.origin : url.protocol
  return { "content-security-policy": PAGE_HEADERS["content-security-policy"].replace("form-action 'self'", `form-action 'self' ${target}`) }
}

/** Where the user agent is sent back with an error, once the redirect URI is known to be the client's (RFC 6749 4.1.2.1). */
const redirectWith = (redirectUri: string, issuer: string, values: Readonly<Record<string, string | undefined>>) => {
  const url = new URL(redirectUri)
  // RFC 9207: the issuer rides along on every answer, so a client talking to several servers cannot be mixed up.
  url.searchParams.set("iss", issuer)
  for (const [name, value] of Object.entries(values)) if (value !== undefined) url.searchParams.set(name, value)
  return HttpServerResponse.empty({ status: 303, headers: { location: url.toString(), "cache-control": "no-store" } })
}

interface Validated {
  readonly client: OAuthClient
  /**
   * For the MCP resource: its JWTs name only the user and act in every company of theirs,
   * within each role, the company chosen per call; so the consent page lists them all and
   * asks for none. Other grants (`svc_` tokens) act in the one company chosen.
   */
  readonly everyCompany: boolean
  readonly redirectUri: string
  readonly redirectUriGiven: boolean
  readonly issuer: string
  readonly scopes: ReadonlyArray<string>
  readonly params: AuthorizeParams
}

const paramsFrom = (source: Readonly<Record<string, string | undefined>>): AuthorizeParams =>
  Object.fromEntries(AUTHORIZE_PARAMS.filter((name) => source[name] !== undefined).map((name) => [name, source[name]]))

/** The sign-in form's CSRF cookie goes back only to the OAuth pages, under the public path when served under one. */
const formCookieOptions = (basePath: string, secure: boolean, maxAgeSeconds: number) => cookieOptions(`${basePath}/oauth`, secure, maxAgeSeconds)

/** GET and POST /oauth/authorize: sign-in, tenant choice and consent, then a code (RFC 6749 4.1, RFC 7636). */
export const makeAuthorize = Effect.gen(function* () {
  const oauth = yield* OAuth
  const limiter = yield* RateLimiter
  const config = yield* OAuthConfig
  const currentUser = yield* makeCurrentUser
  // Paths the browser is sent to carry the public path: the pages may be served under a prefix.
  const basePath = publicPath(config)
  const authorizePath = `${basePath}/oauth/authorize`

  /** Errors before the redirect URI is trusted are shown on the page, never redirected. */
  const validate = (params: AuthorizeParams, issuer: string): Effect.Effect<Validated, HttpServerResponse.HttpServerResponse> =>
    Effect.gen(function* () {
      if (!params.client_id) return yield* Effect.fail(pageResponse(errorPage("Invalid request", "client_id is missing."), 400))
      const found = yield* oauth.findClient(params.client_id)
      if (Option.isNone(found) || found.value.revoked_at !== null) {
        return yield* Effect.fail(pageResponse(errorPage("Unknown application", "This client_id is not registered."), 400))
      }
      const client = found.value
      const redirectUri = params.redirect_uri ?? (client.redirect_uris.length === 1 ? client.redirect_uris[0] : undefined)
      if (!redirectUri || !client.redirect_uris.includes(redirectUri)) {
        return yield* Effect.fail(pageResponse(errorPage("Invalid redirect", "redirect_uri does not match one registered for this application."), 400))
      }
      const back = (error: string, description: string) =>
        Effect.fail(redirectWith(redirectUri, issuer, { error, error_description: description, state: params.state }))
      if (params.response_type !== "code") return yield* back("unsupported_response_type", "response_type must be code")
      if (!params.code_challenge) return yield* back("invalid_request", "code_challenge is required (PKCE, S256)")
      if (params.code_challenge_method !== "S256") return yield* back("invalid_request", "code_challenge_method must be S256")
      if (!/^[A-Za-z0-9_-]{43}$/.test(params.code_challenge)) return yield* back("invalid_request", "code_challenge must be a base64url SHA-256 (43 characters)")
      if (params.resource !== undefined) {
        try {
          if (new URL(params.resource).hash) return yield* back("invalid_target", "resource must not contain a fragment")
        } catch {
          return yield* back("invalid_target", "resource must be an absolute URI")
        }
      }
      const scopes = parseScope(params.scope)
      if (Result.isFailure(scopes)) return yield* back(scopes.failure.error, scopes.failure.description)
      const everyCompany = sameResource(params.resource, mcpResource(issuer))
      return { client, everyCompany, redirectUri, redirectUriGiven: params.redirect_uri !== undefined, scopes: scopes.success, params, issuer }
    })

  const secureCookies = (request: HttpServerRequest.HttpServerRequest) => secureCookiesOf(config, request)

  const showSignIn = (request: HttpServerRequest.HttpServerRequest, validated: Validated, extra: { email?: string; error?: string; status?: number } = {}) => {
    const csrf = newFormToken()
    return pageResponse(signInPage({ action: authorizePath, clientName: validated.client.name, params: validated.params, csrf, ...extra }), extra.status ?? 200).pipe(
      HttpServerResponse.setCookieUnsafe(CSRF_COOKIE, csrf, formCookieOptions(basePath, secureCookies(request), 3600))
    )
  }

  const showConsent = (validated: Validated, user: { email: string; id: string }, csrf: string) =>
    Effect.gen(function* () {
      const tenants = yield* oauth.memberships(user.id)
      if (tenants.length === 0) {
        return redirectWith(validated.redirectUri, validated.issuer, { error: "access_denied", error_description: "The user belongs to no company", state: validated.params.state })
      }
      return pageResponse(
        consentPage({
          action: authorizePath,
          clientName: validated.client.name,
          userEmail: user.email,
          params: validated.params,
          scopes: validated.scopes,
          tenants,
          everyCompany: validated.everyCompany,
          csrf
        }),
        200,
        consentPolicy(validated.redirectUri)
      )
    })

  /** Per IP, before anything else: the spec's 20 requests a minute. */
  const limited = (request: HttpServerRequest.HttpServerRequest, respond: Effect.Effect<HttpServerResponse.HttpServerResponse>) =>
    Effect.gen(function* () {
      const decision = yield* limiter.hit(`authorize:${clientLimitKey(request, config.trustProxy)}`, AUTHORIZE_LIMIT)
      if (!decision.allowed) return tooManyRequests(decision, "Too many authorization requests from this address")
      const response = yield* respond
      return HttpServerResponse.setHeaders(response, rateLimitHeaders(decision))
    })

  const get = Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const pairs = [...new URL(request.url, "http://local").searchParams]
    const query: Record<string, string> = Object.create(null)
    for (const [name, value] of pairs) query[name] = value
    return yield* limited(
      request,
      Effect.gen(function* () {
        const unreadable = pairs.find(([name, value]) => textProblem(name) ?? textProblem(value))
        if (unreadable) {
          return yield* Effect.fail(pageResponse(errorPage("Invalid request", `The parameter ${textProblem(unreadable[0]) ? "name" : unreadable[0]} ${textProblem(unreadable[0]) ?? textProblem(unreadable[1])}.`), 400))
        }
        const validated = yield* validate(paramsFrom(query), publicUrl(config, request))
        const signedIn = yield* currentUser(request, request.cookies)
        if (Option.isNone(signedIn)) return showSignIn(request, validated)
        let csrf = signedIn.value.csrf
        let response: HttpServerResponse.HttpServerResponse | undefined
        if (csrf === undefined) {
          // Signed in by the embedding app: our session only carries the consent form's CSRF token.
          const session = yield* oauth.createSession(signedIn.value.user.id)
          csrf = session.csrf
          response = (yield* showConsent(validated, signedIn.value.user, csrf)).pipe(
            setSessionCookie(basePath, secureCookies(request), session)
          )
        }
        return response ?? (yield* showConsent(validated, signedIn.value.user, csrf))
      }).pipe(Effect.catch(Effect.succeed))
    )
  })

  const post = Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    return yield* limited(
      request,
      Effect.gen(function* () {
        const form = yield* readForm(request).pipe(Effect.mapError(() => pageResponse(errorPage("Invalid request", "The form could not be read."), 400)))
        const validated = yield* validate(paramsFrom(form), publicUrl(config, request))
        if (form.action === "sign_in") {
          const expected = request.cookies[CSRF_COOKIE]
          if (!expected || !form.csrf || !sameText(expected, form.csrf)) {
            return showSignIn(request, validated, { error: "Your sign-in form expired; please try again.", status: 403 })
          }
          const checked = yield* checkPassword({ limiter, oauth }, form.email ?? "", form.password ?? "")
          if (Result.isFailure(checked)) return checked.failure
          const user = checked.success
          if (Option.isNone(user)) {
            return showSignIn(request, validated, { email: form.email ?? "", error: "Email or password is not right.", status: 401 })
          }
          const session = yield* oauth.createSession(user.value.id)
          const again = new URL(authorizePath, "http://local")
          for (const [name, value] of Object.entries(validated.params)) if (value !== undefined) again.searchParams.set(name, value)
          return HttpServerResponse.empty({ status: 303, headers: { location: `${again.pathname}${again.search}`, "cache-control": "no-store" } }).pipe(
            setSessionCookie(basePath, secureCookies(request), session),
            clearCookie(CSRF_COOKIE, `${basePath}/oauth`, secureCookies(request))
          )
        }
        if (form.action !== "consent") return pageResponse(errorPage("Invalid request", "Unknown form action."), 400)
        const token = request.cookies[SESSION_COOKIE]
        const session = token ? yield* oauth.findSession(token) : Option.none()
        if (Option.isNone(session)) return showSignIn(request, validated, { error: "Your session ended; please sign in again." })
        if (!form.csrf || !sameText(session.value.csrf, form.csrf)) {
          return pageResponse(errorPage("Request refused", "The consent form did not come from this page (CSRF check failed)."), 403)
        }
        if (form.decision !== "allow") {
          return redirectWith(validated.redirectUri, validated.issuer, { error: "access_denied", error_description: "The user denied access", state: validated.params.state })
        }
        const tenants = yield* oauth.memberships(session.value.userId)
        if (tenants.length === 0) {
          return redirectWith(validated.redirectUri, validated.issuer, { error: "access_denied", error_description: "The user belongs to no company", state: validated.params.state })
        }
        // A company posted for an every-company grant is ignored: the page offered no choice.
        const tenant = validated.everyCompany ? undefined : tenants.find((item) => item.tenant_id === form.tenant_id)
        if (!validated.everyCompany && !tenant) return pageResponse(errorPage("Invalid company", "Choose one of your companies."), 400)
        const code = yield* oauth.issueCode({
          client: validated.client,
          userId: session.value.userId,
          tenantId: tenant?.tenant_id,
          redirectUri: validated.redirectUri,
          redirectUriGiven: validated.redirectUriGiven,
          scopes: validated.scopes,
          codeChallenge: validated.params.code_challenge!,
          resource: validated.params.resource
        })
        return redirectWith(validated.redirectUri, validated.issuer, { code, state: validated.params.state })
      }).pipe(Effect.catch(Effect.succeed))
    )
  })

  return { get, post }
})
