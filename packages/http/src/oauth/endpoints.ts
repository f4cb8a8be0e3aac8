import {
  allScopes,
  type OAuthClient,
  OAuth,
  OAuthConfig,
  type OAuthError,
  oauthError,
  RateLimiter,
  REVOKE_LIMIT,
  TOKEN_LIMIT,
  tokenFromAuthorization
} from "@erp/core"
import { Effect } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import { apiRequestOf, readJsonBody } from "../body.js"
import { bearerChallenge, publicUrl } from "../public-url.js"
import { clientLimitKey, rateLimitHeaders, tooManyRequests } from "../rate-limit.js"
import { basicCredentials, readForm } from "./form.js"

const NO_STORE = { "cache-control": "no-store", pragma: "no-cache" } as const

/**
 * OAuth endpoints answer RFC 6749's error body: `error` is the OAuth code clients
 * branch on. `status_code` and `message` are added so the body also reads like
 * the rest of the API.
 */
export const oauthErrorResponse = (failure: OAuthError, basicAuth = false) =>
  HttpServerResponse.jsonUnsafe(
    { error: failure.error, error_description: failure.description, status_code: failure.status, message: failure.description },
    {
      status: failure.status,
      headers: { ...NO_STORE, ...(failure.status === 401 && basicAuth ? { "www-authenticate": `Basic realm="erp"` } : {}) }
    }
  )


/** Authorization server and protected resource metadata, the JWKS, token, revoke, userinfo and registration. */
export const makeEndpoints = Effect.gen(function* () {
  const oauth = yield* OAuth
  const config = yield* OAuthConfig
  const limiter = yield* RateLimiter

  const issuerOf = (request: HttpServerRequest.HttpServerRequest) => publicUrl(config, request)

  /** Client authentication by `client_secret_basic`, `client_secret_post`, or none for public clients. */
  const authenticateClient = (request: HttpServerRequest.HttpServerRequest, form: Readonly<Record<string, string | undefined>>) => {
    const basic = basicCredentials(request.headers.authorization)
    if (basic && form.client_secret !== undefined) {
      return Effect.fail(oauthError("invalid_request", "Use one client authentication method, not two"))
    }
    if (basic && form.client_id !== undefined && form.client_id !== basic.clientId) {
      return Effect.fail(oauthError("invalid_request", "client_id differs from the authenticated client"))
    }
    const clientId = basic?.clientId ?? form.client_id
    if (!clientId) return Effect.fail(oauthError("invalid_client", "Client authentication is required", 401))
    return oauth.authenticateClient({ clientId, secret: basic?.secret ?? form.client_secret })
  }

  /** The spec's limits are per client_id; requests naming none count against their address. */
  const clientKey = (request: HttpServerRequest.HttpServerRequest, form: Readonly<Record<string, string | undefined>>) =>
    basicCredentials(request.headers.authorization)?.clientId ?? form.client_id ?? `ip:${clientLimitKey(request, config.trustProxy)}`

  const json = (body: unknown, status = 200, headers: Record<string, string> = {}) =>
    HttpServerResponse.jsonUnsafe(body, { status, headers: { ...NO_STORE, ...headers } })

  const authorizationServerMetadata = Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const issuer = issuerOf(request)
    return json({
      issuer,
      authorization_endpoint: `${issuer}/oauth/authorize`,
      token_endpoint: `${issuer}/oauth/token`,
      revocation_endpoint: `${issuer}/oauth/revoke`,
      userinfo_endpoint: `${issuer}/oauth/userinfo`,
      jwks_uri: `${issuer}/oauth/jwks`,
      ...(config.dynamicRegistration ? { registration_endpoint: `${issuer}/oauth/register` } : {}),
      scopes_supported: allScopes(),
      response_types_supported: ["code"],
      response_modes_supported: ["query"],
      grant_types_supported: ["authorization_code", "refresh_token"],
      token_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post", "none"],
      revocation_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post", "none"],
      code_challenge_methods_supported: ["S256"],
      authorization_response_iss_parameter_supported: true
    }, 200, { "cache-control": "public, max-age=300" })
  })

  const protectedResourceMetadata = Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const issuer = issuerOf(request)
    return json({
      resource: issuer,
      authorization_servers: [issuer],
      scopes_supported: allScopes(),
      bearer_methods_supported: ["header"],
      resource_name: "erp Integrations API and MCP server",
      resource_documentation: `${issuer}/openapi.json`
    }, 200, { "cache-control": "public, max-age=300" })
  })

  const jwks = Effect.map(oauth.jwks, (keys) => json(keys, 200, { "cache-control": "public, max-age=300" }))

  const token = Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const form = yield* readForm(request).pipe(Effect.mapError((error) => oauthError("invalid_request", error.message)))
    const basic = basicCredentials(request.headers.authorization)
    const decision = yield* limiter.hit(`token:${clientKey(request, form)}`, TOKEN_LIMIT)
    if (!decision.allowed) return tooManyRequests(decision, "Too many token requests for this client")
    const client = yield* authenticateClient(request, form).pipe(
      Effect.mapError((failure) => ({ failure, basic: basic !== undefined }))
    )
    const context = { issuer: issuerOf(request) }
    const issued = form.grant_type === "authorization_code"
      ? oauth.exchangeCode({ client, code: form.code ?? "", redirectUri: form.redirect_uri, codeVerifier: form.code_verifier, resource: form.resource }, context)
      : form.grant_type === "refresh_token"
      ? oauth.refresh({ client, refreshToken: form.refresh_token ?? "", scope: form.scope, resource: form.resource }, context)
      : Effect.fail(oauthError("unsupported_grant_type", "grant_type must be authorization_code or refresh_token"))
    const tokens = yield* issued.pipe(Effect.mapError((failure) => ({ failure, basic: false })))
    return json(tokens, 200, rateLimitHeaders(decision))
  }).pipe(
    Effect.catch((error) =>
      Effect.succeed("failure" in error ? oauthErrorResponse(error.failure, error.basic) : oauthErrorResponse(error)))
  )

  const revoke = Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const form = yield* readForm(request).pipe(Effect.mapError((error) => oauthError("invalid_request", error.message)))
    // Counted before the secret is checked, per client_id as at /oauth/token: this endpoint
    // must not be the place to guess a client's secret instead.
    const decision = yield* limiter.hit(`revoke:${clientKey(request, form)}`, REVOKE_LIMIT)
    if (!decision.allowed) return tooManyRequests(decision, "Too many revocation requests for this client")
    const headers = rateLimitHeaders(decision)
    return yield* Effect.gen(function* () {
      const client: OAuthClient = yield* authenticateClient(request, form)
      if (!form.token) return yield* Effect.fail(oauthError("invalid_request", "token is required"))
      yield* oauth.revoke({ client, token: form.token }, { issuer: issuerOf(request) })
      return HttpServerResponse.empty({ status: 200, headers: { ...NO_STORE, ...headers } })
    }).pipe(Effect.catch((failure) =>
      Effect.succeed(HttpServerResponse.setHeaders(oauthErrorResponse(failure, basicCredentialsPresent(failure)), headers))))
  }).pipe(Effect.catch((failure) => Effect.succeed(oauthErrorResponse(failure, basicCredentialsPresent(failure)))))

  const userinfo = Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const bearer = tokenFromAuthorization(request.headers.authorization)
    const issuer = issuerOf(request)
    const challenge = bearerChallenge(issuer, "invalid_token")
    if (!bearer) {
      return json({ error: "invalid_token", error_description: "A bearer token is required", status_code: 401, message: "A bearer token is required" }, 401, {
        "www-authenticate": bearerChallenge(issuer)
      })
    }
    return yield* oauth.tokenUser(bearer, { issuer }).pipe(
      Effect.flatMap(oauth.userinfo),
      Effect.map((info) => json(info)),
      Effect.catch((failure) =>
        Effect.succeed(json({ error: "invalid_token", error_description: failure.message, status_code: 401, message: failure.message }, 401, { "www-authenticate": challenge })))
    )
  })

  /** RFC 7591 for public clients (MCP clients register themselves); operators can turn it off. */
  const register = Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    if (!config.dynamicRegistration) {
      return yield* Effect.fail(oauthError("access_denied", "Dynamic client registration is turned off on this server", 403))
    }
    const decision = yield* limiter.hit(`register:${clientLimitKey(request, config.trustProxy)}`, { limit: config.registrationsPerMinute, windowSeconds: 60 })
    if (!decision.allowed) return tooManyRequests(decision, "Too many client registrations from this address")
    const body = yield* readJsonBody(apiRequestOf(request)).pipe(Effect.mapError((error) => oauthError("invalid_client_metadata", error.message)))
    const metadata = (typeof body === "object" && body !== null ? body : {}) as Record<string, unknown>
    const redirectUris = metadata.redirect_uris
    if (!Array.isArray(redirectUris) || redirectUris.length === 0 || !redirectUris.every((uri) => typeof uri === "string")) {
      return yield* Effect.fail(oauthError("invalid_redirect_uri", "redirect_uris must be a non-empty array of URIs"))
    }
    const method = metadata.token_endpoint_auth_method ?? "none"
    if (method !== "none") {
      return yield* Effect.fail(oauthError("invalid_client_metadata", "Only public clients (token_endpoint_auth_method none, with PKCE) can register here"))
    }
    const grantTypes = metadata.grant_types ?? ["authorization_code", "refresh_token"]
    if (!Array.isArray(grantTypes) || grantTypes.some((grant) => grant !== "authorization_code" && grant !== "refresh_token")) {
      return yield* Effect.fail(oauthError("invalid_client_metadata", "grant_types may hold authorization_code and refresh_token only"))
    }
    const name = typeof metadata.client_name === "string" && metadata.client_name.trim() ? metadata.client_name.trim().slice(0, 100) : "Unnamed client"
    const { client } = yield* oauth.createClient({ name, redirectUris: redirectUris as Array<string>, kind: "public", registration: "dynamic" }).pipe(
      Effect.mapError((error) => oauthError("invalid_redirect_uri", error.message))
    )
    return json({
      client_id: client.client_id,
      client_id_issued_at: Math.floor(Date.parse(client.created_at) / 1000),
      client_name: client.name,
      redirect_uris: client.redirect_uris,
      token_endpoint_auth_method: "none",
      grant_types: grantTypes,
      response_types: ["code"]
    }, 201, rateLimitHeaders(decision))
  }).pipe(Effect.catch((failure) => Effect.succeed(oauthErrorResponse(failure))))

  return { authorizationServerMetadata, protectedResourceMetadata, jwks, token, revoke, userinfo, register }
})

const basicCredentialsPresent = (failure: OAuthError) => failure.status === 401
