import * as SqlClient from "@effect/sql/SqlClient"
import type { Fragment } from "@effect/sql/Statement"
import { Effect, Either, Layer, Option } from "effect"
import { createLocalJWKSet, createRemoteJWKSet, decodeJwt, type JWTPayload, jwtVerify, SignJWT } from "jose"
import { createHash, randomUUID, timingSafeEqual } from "node:crypto"
import { hashPassword, needsRehash, passwordProblem, verifyPassword } from "../auth/passwords.js"
import { grantsFromRows, type Principal, type Role } from "../auth/principal.js"
import { BASE62, hashSecret, randomText, sameHash } from "../auth/tokens.js"
import { isUuid } from "../engine/filter.js"
import { invalid, NotFound, Unauthenticated } from "../errors.js"
import { oauthError } from "../oauth/errors.js"
import { grantsFromScopes, parseScope } from "../oauth/scopes.js"
import { type CodeRequest, OAuth, type OAuthClient, type OAuthGrant, type TenantMembership, type TokenSet } from "../oauth/service.js"
import { mcpResource, OAuthConfig, sameResource } from "../oauth/settings.js"
import { Tenancy } from "../tenancy/tenancy.js"
import { SIGNING_ALGORITHM, type SigningKey, SigningKeys } from "./signing-keys.js"

/** Token prefixes of the spec: they say what a token is before any lookup. */
export const TOKEN_PREFIX = { code: "svcac_", access: "svc_", refresh: "svcrf_", session: "svcss_" } as const

const newToken = (prefix: string) => `${prefix}${randomText(43, BASE62)}`

interface ClientRow extends OAuthClient {
  readonly secret_hash: string | null
}

const toClient = ({ secret_hash: _secret, ...client }: ClientRow): OAuthClient => client

interface CodeRow {
  readonly code_hash: string
  readonly client_id: string
  readonly user_id: string
  /** Null for a grant of the MCP resource (JWTs), which binds no company. */
  readonly tenant_id: string | null
  readonly redirect_uri: string
  readonly redirect_uri_given: boolean
  readonly scope: string
  readonly code_challenge: string
  readonly resource: string | null
  readonly expired: boolean
  readonly used_at: string | null
}

interface TokenRow {
  readonly id: string
  readonly kind: "access" | "refresh" | "jwt"
  readonly client_id: string
  readonly user_id: string
  readonly tenant_id: string | null
  readonly scope: string
  readonly resource: string | null
  readonly code_hash: string | null
  readonly family_id: string
  readonly expired: boolean
  readonly rotated_at: string | null
  readonly revoked_at: string | null
}

/** RFC 7636 S256: BASE64URL(SHA256(verifier)) equals the challenge. */
const pkceMatches = (verifier: string, challenge: string) => {
  const computed = Buffer.from(createHash("sha256").update(verifier, "ascii").digest("base64url"))
  const expected = Buffer.from(challenge)
  return computed.length === expected.length && timingSafeEqual(computed, expected)
}

const VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/

/** Claims every JWT access token of ours carries (RFC 9068 section 2.2); one missing means it was not made by `signJwt`. */
const REQUIRED_CLAIMS = ["iss", "sub", "aud", "exp", "iat", "jti"] as const

const looksLikeJwt = (token: string) => /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(token)

const unauthenticated = (message: string, code = "INVALID_CREDENTIALS") => new Unauthenticated({ message, code })

const validRedirectUri = (uri: string): string | undefined => {
  try {
    const url = new URL(uri)
    if (url.hash) return "must not contain a fragment"
    if (url.protocol === "https:") return undefined
    if (url.protocol === "http:" && (url.hostname === "localhost" || url.hostname === "127.0.0.1" || url.hostname === "[::1]")) return undefined
    // Native apps may use private-use URI schemes (RFC 8252 section 7.1).
    if (/^[a-z][a-z0-9+.-]*\.[a-z0-9+.-]+:$/.test(url.protocol)) return undefined
    return "must be https (http only for localhost), or a private-use scheme such as com.example.app:"
  } catch {
    return "must be an absolute URI"
  }
}

export const layerOAuth = Layer.effect(
  OAuth,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const config = yield* OAuthConfig
    const tenancy = yield* Tenancy
    const signingKeys = yield* SigningKeys
    // Made (or loaded) while the host starts, so the first token request does not wait for it.
    yield* signingKeys.current
    const externalJwks = config.externalIdp ? createRemoteJWKSet(new URL(config.externalIdp.jwksUrl)) : undefined
    const { lifetimes } = config

    const clientRows = (where: Fragment) =>
      sql<ClientRow>`SELECT id, client_id, secret_hash, name, redirect_uris, kind, registration, created_at, revoked_at
        FROM oauth_clients WHERE ${where}`.pipe(Effect.orDie)

    const findClientRow = (clientId: string) => Effect.map(clientRows(sql`client_id = ${clientId}`), (rows) => Option.fromNullable(rows[0]))

    const memberships = (userId: string) =>
      sql<TenantMembership & { readonly rate_limit_per_minute: number | null }>`SELECT m.tenant_id, t.name AS tenant_name, t.country_code::text AS country_code, m.role, t.rate_limit_per_minute
        FROM memberships m JOIN tenants t ON t.id = m.tenant_id WHERE m.user_id = ${userId}::uuid ORDER BY t.name, t.id`.pipe(Effect.orDie)

    const userPrincipal = (userId: string, tenantId: string | undefined, scopes?: ReadonlyArray<string>) =>
      Effect.gen(function* () {
        const all = yield* memberships(userId)
        if (tenantId !== undefined && !isUuid(tenantId)) return yield* Effect.fail(invalid(`X-Tenant-Id must be a UUID, got "${tenantId}"`, "INVALID_TENANT"))
        const chosen = tenantId === undefined ? (all.length === 1 ? all[0] : undefined) : all.find((item) => item.tenant_id === tenantId.toLowerCase())
        if (!chosen) {
          return yield* Effect.fail(
            tenantId === undefined && all.length > 1
              ? invalid("This user belongs to several tenants: send the X-Tenant-Id header", "TENANT_REQUIRED")
              : unauthenticated("The user is not a member of this tenant")
          )
        }
        const rows = yield* sql<{ resource_code: string; can_read: boolean; can_create: boolean; can_update: boolean; can_delete: boolean }>`
          SELECT p.resource_code, p.can_read, p.can_create, p.can_update, p.can_delete FROM membership_permissions p
          JOIN memberships m ON m.tenant_id = p.tenant_id AND m.id = p.membership_id
          WHERE m.tenant_id = ${chosen.tenant_id}::uuid AND m.user_id = ${userId}::uuid`.pipe(Effect.orDie)
        const user = yield* tenancy.getUser(userId).pipe(Effect.mapError(() => unauthenticated("The user no longer exists")))
        return {
          tenantId: chosen.tenant_id,
          tenantCountry: chosen.country_code,
          actor: { kind: "user", id: user.id, email: user.email },
          role: chosen.role as Role,
          grants: grantsFromRows(rows),
          ...(scopes ? { scopes: grantsFromScopes(scopes) } : {}),
          credential: { id: `user:${user.id}`, ...(chosen.rate_limit_per_minute !== null ? { rateLimitPerMinute: chosen.rate_limit_per_minute } : {}) }
        } satisfies Principal
      })

    const signJwt = (key: SigningKey, userId: string, audience: string, issuer: string, jti: string) =>
      Effect.gen(function* () {
        return yield* Effect.promise(() =>
          new SignJWT({})
            .setProtectedHeader({ alg: SIGNING_ALGORITHM, kid: key.kid, typ: "at+jwt" })
            .setIssuer(issuer)
            .setSubject(userId)
            .setAudience(audience)
            .setIssuedAt()
            .setExpirationTime(`${lifetimes.accessSeconds}s`)
            .setJti(jti)
            .sign(key.privateKey)
        )
      })

    /** Access and refresh token for a grant; for the MCP resource the access token is a JWT. */
    const issueTokens = (grant: {
      readonly clientId: string
      readonly userId: string
      readonly tenantId: string | null
      readonly scope: string
      readonly resource: string | null
      readonly codeHash: string | null
      readonly familyId: string
    }, issuer: string, key: SigningKey) =>
      Effect.gen(function* () {
        const asJwt = sameResource(grant.resource, mcpResource(issuer))
        const jti = randomUUID()
        const access = asJwt ? yield* signJwt(key, grant.userId, grant.resource!, issuer, jti) : newToken(TOKEN_PREFIX.access)
        const refresh = newToken(TOKEN_PREFIX.refresh)
        const insert = (hash: string, kind: TokenRow["kind"], seconds: number) =>
          sql`INSERT INTO oauth_tokens (token_hash, kind, client_id, user_id, tenant_id, scope, resource, code_hash, family_id, expires_at)
            VALUES (${hash}, ${kind}, ${grant.clientId}, ${grant.userId}::uuid, ${grant.tenantId}::uuid, ${grant.scope}, ${grant.resource},
              ${grant.codeHash}, ${grant.familyId}::uuid, now() + ${`${seconds} seconds`}::interval)`.pipe(Effect.orDie)
        yield* insert(hashSecret(asJwt ? jti : access), asJwt ? "jwt" : "access", lifetimes.accessSeconds)
        yield* insert(hashSecret(refresh), "refresh", lifetimes.refreshSeconds)
        return {
          access_token: access,
          token_type: "Bearer",
          expires_in: lifetimes.accessSeconds,
          refresh_token: refresh,
          scope: grant.scope
        } satisfies TokenSet
      })

    const revokeWhere = (where: Fragment) =>
      sql`UPDATE oauth_tokens SET revoked_at = coalesce(revoked_at, now()) WHERE ${where}`.pipe(Effect.orDie, Effect.asVoid)

    const tokenRow = (hash: string) =>
      sql<TokenRow>`SELECT id, kind, client_id, user_id, tenant_id, scope, resource, code_hash, family_id, expires_at <= now() AS expired,
          rotated_at, revoked_at FROM oauth_tokens WHERE token_hash = ${hash}`.pipe(Effect.orDie, Effect.map((rows) => Option.fromNullable(rows[0])))

    const transaction = <A, E>(effect: Effect.Effect<A, E>) =>
      sql.withTransaction(effect).pipe(Effect.catchTag("SqlError", Effect.die)) as Effect.Effect<A, E>

    const verifyOurs = (token: string, issuer: string) =>
      Effect.gen(function* () {
        const keys = yield* signingKeys.publicKeys
        const verified = yield* Effect.tryPromise(() =>
          jwtVerify(token, createLocalJWKSet({ keys: [...keys] }), {
            issuer,
            audience: [mcpResource(issuer), `${mcpResource(issuer)}/`],
            algorithms: [SIGNING_ALGORITHM],
            // RFC 9068: an access token says it is one, so an ID token or another JWT of ours cannot stand in.
            typ: "at+jwt",
            requiredClaims: [...REQUIRED_CLAIMS]
          })
        ).pipe(Effect.mapError(() => unauthenticated("The access token is not valid (signature, type, issuer, audience, expiry or a missing claim)")))
        const { sub, jti } = verified.payload
        if (typeof sub !== "string" || typeof jti !== "string") return yield* Effect.fail(unauthenticated("The access token lacks sub or jti"))
        // The JWT names only the user; its grant (scopes, revocation) is kept server-side under its jti.
        const row = yield* tokenRow(hashSecret(jti))
        if (Option.isNone(row) || row.value.kind !== "jwt") return yield* Effect.fail(unauthenticated("The access token was not issued here"))
        if (row.value.revoked_at !== null) return yield* Effect.fail(unauthenticated("The access token was revoked"))
        if (row.value.expired) return yield* Effect.fail(unauthenticated("The access token expired"))
        // A token signed with our key but naming another user than its grant's is forged or misissued.
        if (row.value.user_id !== sub) return yield* Effect.fail(unauthenticated("The access token's subject is not the user it was issued to"))
        return { userId: sub, scopes: row.value.scope.split(" ") as ReadonlyArray<string> | undefined }
      })

    const verifyExternal = (token: string, payload: JWTPayload) =>
      Effect.gen(function* () {
        const idp = config.externalIdp!
        const verified = yield* Effect.tryPromise(() =>
          // A token that never expires is refused from the identity provider too.
          jwtVerify(token, externalJwks!, { issuer: idp.issuer, audience: idp.audience, algorithms: [...idp.algorithms], requiredClaims: ["exp"] })
        ).pipe(Effect.mapError(() => unauthenticated("The identity provider's token is not valid (signature, issuer, audience or expiry)")))
        const claim = verified.payload[idp.userClaim] ?? payload[idp.userClaim]
        if (typeof claim !== "string") return yield* Effect.fail(unauthenticated(`The token lacks the ${idp.userClaim} claim`))
        const user = yield* tenancy.getUser(claim).pipe(Effect.mapError(() => unauthenticated("The token names no user of this service")))
        const scope = verified.payload.scope
        return { userId: user.id, scopes: typeof scope === "string" ? scope.split(" ").filter(Boolean) : undefined }
      })

    const verifyJwt = (token: string, context: { readonly issuer: string }) =>
      Effect.gen(function* () {
        const payload = yield* Effect.try(() => decodeJwt(token)).pipe(Effect.mapError(() => unauthenticated("The bearer token is not a valid JWT")))
        if (payload.iss === context.issuer) return yield* verifyOurs(token, context.issuer)
        if (config.externalIdp && payload.iss === config.externalIdp.issuer) return yield* verifyExternal(token, payload)
        return yield* Effect.fail(unauthenticated("The token's issuer is not trusted"))
      })

    const accessPrincipal = (token: string) =>
      Effect.gen(function* () {
        const row = yield* tokenRow(hashSecret(token))
        if (Option.isNone(row) || row.value.kind !== "access") return yield* Effect.fail(unauthenticated("The access token is not valid"))
        if (row.value.revoked_at !== null) return yield* Effect.fail(unauthenticated("The access token was revoked"))
        if (row.value.expired) return yield* Effect.fail(unauthenticated("The access token expired"))
        if (row.value.tenant_id === null) return yield* Effect.fail(unauthenticated("The access token is not valid"))
        const principal = yield* userPrincipal(row.value.user_id, row.value.tenant_id, row.value.scope.split(" ")).pipe(
          Effect.catchTag("InvalidRequest", (error) => Effect.fail(unauthenticated(error.message)))
        )
        // An OAuth client acting for a user is its own credential: another client of the same user has its own limit.
        return principal.credential ? { ...principal, credential: { ...principal.credential, id: `oauth:${row.value.client_id}:${row.value.user_id}` } } : principal
      })

    return OAuth.of({
      createClient: ({ name, redirectUris, kind, registration, tenantId }) =>
        Effect.gen(function* () {
          if (!name.trim()) return yield* Effect.fail(invalid("A client needs a name", "INVALID_CLIENT_METADATA"))
          if (redirectUris.length === 0) return yield* Effect.fail(invalid("A client needs at least one redirect URI", "INVALID_REDIRECT_URI"))
          for (const uri of redirectUris) {
            const problem = validRedirectUri(uri)
            if (problem) return yield* Effect.fail(invalid(`Redirect URI ${uri} ${problem}`, "INVALID_REDIRECT_URI"))
          }
          const clientId = `client_${randomText(24, BASE62)}`
          const secret = kind === "confidential" ? `secret_${randomText(43, BASE62)}` : undefined
          const rows = yield* sql<ClientRow>`INSERT INTO oauth_clients (client_id, secret_hash, name, redirect_uris, kind, registration, tenant_id)
            VALUES (${clientId}, ${secret ? hashSecret(secret) : null}, ${name.trim()}, ${JSON.stringify(redirectUris)}::jsonb, ${kind}, ${registration}, ${tenantId ?? null}::uuid)
            RETURNING id, client_id, secret_hash, name, redirect_uris, kind, registration, created_at, revoked_at`.pipe(Effect.orDie)
          return { client: toClient(rows[0]), secret }
        }),
      listClients: Effect.map(clientRows(sql`TRUE ORDER BY created_at, id`), (rows) => rows.map(toClient)),
      tenantClients: (tenantId) =>
        isUuid(tenantId) ? Effect.map(clientRows(sql`tenant_id = ${tenantId}::uuid ORDER BY created_at, id`), (rows) => rows.map(toClient)) : Effect.succeed([]),
      rotateClientSecret: (tenantId, clientId) =>
        Effect.gen(function* () {
          const notFound = new NotFound({ message: `OAuth client ${clientId} not found`, code: "CLIENT_NOT_FOUND" })
          if (!isUuid(tenantId)) return yield* Effect.fail(notFound)
          const rows = yield* clientRows(sql`client_id = ${clientId} AND tenant_id = ${tenantId}::uuid AND revoked_at IS NULL`)
          if (!rows[0]) return yield* Effect.fail(notFound)
          if (rows[0].kind !== "confidential") return yield* Effect.fail(invalid("A public client has no secret to rotate", "PUBLIC_CLIENT"))
          const secret = `secret_${randomText(43, BASE62)}`
          yield* sql`UPDATE oauth_clients SET secret_hash = ${hashSecret(secret)}, updated_at = now() WHERE client_id = ${clientId}`.pipe(Effect.orDie)
          return { client: toClient(rows[0]), secret }
        }),
      tenantGrants: (tenantId) =>
        isUuid(tenantId)
          ? sql<OAuthGrant>`SELECT t.family_id AS id, t.client_id, c.name AS client_name, u.email AS user_email, min(t.scope) AS scope,
                bool_and(t.tenant_id IS NULL) AS every_company, min(t.created_at) AS created_at, max(t.created_at) AS last_issued_at,
                max(t.expires_at) FILTER (WHERE t.kind = 'refresh') AS expires_at
              FROM oauth_tokens t JOIN oauth_clients c ON c.client_id = t.client_id JOIN users u ON u.id = t.user_id
              WHERE (t.tenant_id = ${tenantId}::uuid
                OR (t.tenant_id IS NULL AND EXISTS (SELECT 1 FROM memberships m WHERE m.tenant_id = ${tenantId}::uuid AND m.user_id = t.user_id)))
              GROUP BY t.family_id, t.client_id, c.name, u.email
              HAVING bool_or(t.kind = 'refresh' AND t.revoked_at IS NULL AND t.rotated_at IS NULL AND t.expires_at > now())
              ORDER BY min(t.created_at) DESC`.pipe(Effect.orDie)
          : Effect.succeed([]),
      revokeGrant: (tenantId, grantId) =>
        Effect.gen(function* () {
          const notFound = new NotFound({ message: `Grant ${grantId} not found`, code: "GRANT_NOT_FOUND" })
          if (!isUuid(tenantId) || !isUuid(grantId)) return yield* Effect.fail(notFound)
          const rows = yield* sql<{ id: string }>`UPDATE oauth_tokens t SET revoked_at = coalesce(t.revoked_at, now())
            WHERE t.family_id = ${grantId}::uuid AND (t.tenant_id = ${tenantId}::uuid
              OR (t.tenant_id IS NULL AND EXISTS (SELECT 1 FROM memberships m WHERE m.tenant_id = ${tenantId}::uuid AND m.user_id = t.user_id)))
            RETURNING t.id`.pipe(Effect.orDie)
          if (rows.length === 0) return yield* Effect.fail(notFound)
        }),
      findClient: (clientId) => Effect.map(findClientRow(clientId), Option.map(toClient)),
      authenticateClient: ({ clientId, secret }) =>
        Effect.gen(function* () {
          const found = yield* findClientRow(clientId)
          // The same comparison runs for unknown clients, so timing does not tell which client ids exist.
          const stored = Option.match(found, { onNone: () => hashSecret("absent"), onSome: (row) => row.secret_hash ?? hashSecret("public") })
          const matches = secret !== undefined && sameHash(stored, hashSecret(secret))
          if (Option.isNone(found) || found.value.revoked_at !== null) return yield* Effect.fail(oauthError("invalid_client", "Unknown client", 401))
          const client = found.value
          if (client.kind === "confidential" && !matches) return yield* Effect.fail(oauthError("invalid_client", "Client authentication failed", 401))
          if (client.kind === "public" && secret !== undefined) {
            return yield* Effect.fail(oauthError("invalid_client", "A public client has no secret", 401))
          }
          return toClient(client)
        }),
      revokeClient: (clientId) =>
        Effect.gen(function* () {
          yield* sql`UPDATE oauth_clients SET revoked_at = coalesce(revoked_at, now()), updated_at = now() WHERE client_id = ${clientId}`.pipe(Effect.orDie)
          yield* revokeWhere(sql`client_id = ${clientId}`)
          const found = yield* findClientRow(clientId)
          return yield* Option.match(found, {
            onNone: () => Effect.fail(new NotFound({ message: `OAuth client ${clientId} not found`, code: "CLIENT_NOT_FOUND" })),
            onSome: (row) => Effect.succeed(toClient(row))
          })
        }),

      setPassword: (reference, password) =>
        Effect.gen(function* () {
          const problem = passwordProblem(password)
          if (problem) return yield* Effect.fail(invalid(`The password ${problem}`, "WEAK_PASSWORD"))
          const user = yield* tenancy.getUser(reference)
          const hash = yield* hashPassword(password)
          yield* sql`UPDATE users SET password_hash = ${hash}, updated_at = now() WHERE id = ${user.id}::uuid`.pipe(Effect.orDie)
          // A new password ends every sign-in session of the user.
          yield* sql`DELETE FROM web_sessions WHERE user_id = ${user.id}::uuid`.pipe(Effect.orDie)
          return user
        }),
      signIn: (email, password) =>
        Effect.gen(function* () {
          const rows = yield* sql<{ id: string; password_hash: string | null }>`SELECT id, password_hash FROM users WHERE lower(email) = lower(${email.trim()})`.pipe(Effect.orDie)
          const stored = rows[0]?.password_hash
          // Unknown users cost a hash too, so the answer time does not reveal who has an account.
          const ok = yield* verifyPassword(password, stored)
          if (!rows[0] || !stored || !ok) return Option.none()
          // A hash of an older cost is made again at today's while the password is at hand; a password
          // changed meanwhile keeps its own (the update matches the hash it replaces).
          if (yield* needsRehash(stored)) {
            const hash = yield* hashPassword(password)
            yield* sql`UPDATE users SET password_hash = ${hash} WHERE id = ${rows[0].id}::uuid AND password_hash = ${stored}`.pipe(Effect.orDie)
          }
          return Option.some(yield* tenancy.getUser(rows[0].id).pipe(Effect.orDie))
        }),
      memberships,

      createSession: (userId) =>
        Effect.gen(function* () {
          const token = newToken(TOKEN_PREFIX.session)
          const csrf = randomText(32, BASE62)
          yield* sql`INSERT INTO web_sessions (id_hash, user_id, csrf_token, expires_at)
            VALUES (${hashSecret(token)}, ${userId}::uuid, ${csrf}, now() + ${`${lifetimes.sessionSeconds} seconds`}::interval)`.pipe(Effect.orDie)
          yield* sql`DELETE FROM web_sessions WHERE expires_at < now()`.pipe(Effect.orDie)
          return { token, csrf, maxAgeSeconds: lifetimes.sessionSeconds }
        }),
      findSession: (token) =>
        sql<{ user_id: string; csrf_token: string }>`SELECT user_id, csrf_token FROM web_sessions
          WHERE id_hash = ${hashSecret(token)} AND expires_at > now()`.pipe(
          Effect.orDie,
          Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), (row) => ({ userId: row.user_id, csrf: row.csrf_token })))
        ),
      endSession: (token) => sql`DELETE FROM web_sessions WHERE id_hash = ${hashSecret(token)}`.pipe(Effect.orDie, Effect.asVoid),

      issueCode: (request: CodeRequest) =>
        Effect.gen(function* () {
          const code = newToken(TOKEN_PREFIX.code)
          yield* sql`INSERT INTO oauth_authorization_codes (code_hash, client_id, user_id, tenant_id, redirect_uri, redirect_uri_given, scope, code_challenge, resource, expires_at)
            VALUES (${hashSecret(code)}, ${request.client.client_id}, ${request.userId}::uuid, ${request.tenantId ?? null}::uuid, ${request.redirectUri}, ${request.redirectUriGiven},
              ${request.scopes.join(" ")}, ${request.codeChallenge}, ${request.resource ?? null}, now() + ${`${lifetimes.codeSeconds} seconds`}::interval)`.pipe(Effect.orDie)
          return code
        }),

      exchangeCode: ({ client, code, redirectUri, codeVerifier, resource }, { issuer }) =>
        Effect.gen(function* () {
          // The key is read before the transaction: on the one-connection embedded store a
          // read from outside the transaction would wait for it forever.
          const key = yield* signingKeys.current
          const codeHash = hashSecret(code)
          const outcome = yield* transaction(
            Effect.gen(function* () {
              const rows = yield* sql<CodeRow>`SELECT code_hash, client_id, user_id, tenant_id, redirect_uri, redirect_uri_given, scope, code_challenge, resource,
                  expires_at <= now() AS expired, used_at FROM oauth_authorization_codes WHERE code_hash = ${codeHash} FOR UPDATE`.pipe(Effect.orDie)
              const row = rows[0]
              if (!row || row.client_id !== client.client_id) return yield* Effect.fail(oauthError("invalid_grant", "The authorization code is not valid"))
              if (row.used_at !== null) return { reused: true as const }
              if (row.expired) return yield* Effect.fail(oauthError("invalid_grant", "The authorization code expired"))
              // RFC 6749 4.1.3: required, and identical, when the authorization request included it.
              const redirectOk = row.redirect_uri_given ? redirectUri === row.redirect_uri : redirectUri === undefined || redirectUri === row.redirect_uri
              if (!redirectOk) return yield* Effect.fail(oauthError("invalid_grant", "redirect_uri does not match the authorization request"))
              if (!codeVerifier || !VERIFIER.test(codeVerifier)) {
                return yield* Effect.fail(oauthError("invalid_grant", "code_verifier is missing or malformed (43 to 128 characters of A-Z a-z 0-9 - . _ ~)"))
              }
              if (!pkceMatches(codeVerifier, row.code_challenge)) return yield* Effect.fail(oauthError("invalid_grant", "code_verifier does not match the code_challenge"))
              if (resource !== undefined && !sameResource(resource, row.resource)) {
                return yield* Effect.fail(oauthError("invalid_target", "resource differs from the one of the authorization request"))
              }
              if (row.tenant_id === null && !sameResource(row.resource, mcpResource(issuer))) {
                return yield* Effect.fail(oauthError("invalid_target", "This grant covers every company of the user and is for the MCP resource only"))
              }
              yield* sql`UPDATE oauth_authorization_codes SET used_at = now() WHERE code_hash = ${codeHash}`.pipe(Effect.orDie)
              const tokens = yield* issueTokens(
                { clientId: client.client_id, userId: row.user_id, tenantId: row.tenant_id, scope: row.scope, resource: row.resource, codeHash, familyId: randomUUID() },
                issuer,
                key
              )
              return { reused: false as const, tokens }
            })
          )
          if (outcome.reused) {
            // RFC 6749 10.5: a code used twice was probably stolen; what it issued goes too. This runs
            // after the read committed, so the failure answered below cannot roll the revocation back.
            yield* revokeWhere(sql`code_hash = ${codeHash}`)
            return yield* Effect.fail(oauthError("invalid_grant", "The authorization code was already used; the tokens it issued are revoked"))
          }
          return outcome.tokens
        }),

      refresh: ({ client, refreshToken, scope, resource }, { issuer }) =>
        Effect.gen(function* () {
          const key = yield* signingKeys.current
          const outcome = yield* transaction(
            Effect.gen(function* () {
              const hash = hashSecret(refreshToken)
              const rows = yield* sql<TokenRow>`SELECT id, kind, client_id, user_id, tenant_id, scope, resource, code_hash, family_id,
                  expires_at <= now() AS expired, rotated_at, revoked_at FROM oauth_tokens WHERE token_hash = ${hash} FOR UPDATE`.pipe(Effect.orDie)
              const row = rows[0]
              if (!row || row.kind !== "refresh" || row.client_id !== client.client_id) {
                return yield* Effect.fail(oauthError("invalid_grant", "The refresh token is not valid"))
              }
              if (row.rotated_at !== null) return { leaked: row.family_id }
              if (row.revoked_at !== null) return yield* Effect.fail(oauthError("invalid_grant", "The refresh token was revoked"))
              if (row.expired) return yield* Effect.fail(oauthError("invalid_grant", "The refresh token expired"))
              const granted = row.scope.split(" ")
              const asked = scope === undefined ? granted : yield* Either.match(parseScope(scope), { onLeft: Effect.fail, onRight: Effect.succeed })
              const beyond = asked.filter((item) => !granted.includes(item))
              if (beyond.length > 0) return yield* Effect.fail(oauthError("invalid_scope", `Not granted originally: ${beyond.join(" ")}`))
              if (resource !== undefined && !sameResource(resource, row.resource)) {
                return yield* Effect.fail(oauthError("invalid_target", "resource differs from the one of the grant"))
              }
              if (row.tenant_id === null && !sameResource(row.resource, mcpResource(issuer))) {
                return yield* Effect.fail(oauthError("invalid_target", "This grant covers every company of the user and is for the MCP resource only"))
              }
              yield* sql`UPDATE oauth_tokens SET rotated_at = now() WHERE id = ${row.id}::uuid`.pipe(Effect.orDie)
              const tokens = yield* issueTokens(
                { clientId: client.client_id, userId: row.user_id, tenantId: row.tenant_id, scope: asked.join(" "), resource: row.resource, codeHash: row.code_hash, familyId: row.family_id },
                issuer,
                key
              )
              return { tokens }
            })
          )
          if ("leaked" in outcome) {
            // A rotated refresh token presented again: the grant has leaked, so all of it is revoked
            // (after the read committed, so the failure below cannot undo it).
            yield* revokeWhere(sql`family_id = ${outcome.leaked}::uuid`)
            return yield* Effect.fail(oauthError("invalid_grant", "The refresh token was already used; the grant is revoked"))
          }
          return outcome.tokens
        }),

      revoke: ({ client, token }, { issuer }) =>
        Effect.gen(function* () {
          const jwt = looksLikeJwt(token)
          const jti = jwt ? yield* verifyOurs(token, issuer).pipe(
            Effect.flatMap(() => Effect.try(() => decodeJwt(token).jti)),
            Effect.orElseSucceed(() => undefined)
          ) : undefined
          const row = yield* tokenRow(hashSecret(jwt ? jti ?? "" : token))
          // RFC 7009 2.2: an unknown or already invalid token is not an error.
          if (Option.isNone(row)) return
          if (row.value.client_id !== client.client_id) {
            return yield* Effect.fail(oauthError("invalid_request", "The token was not issued to this client"))
          }
          yield* row.value.kind === "refresh" ? revokeWhere(sql`family_id = ${row.value.family_id}::uuid`) : revokeWhere(sql`id = ${row.value.id}::uuid`)
        }),

      accessPrincipal,
      userPrincipal,
      userinfo: (userId) =>
        Effect.gen(function* () {
          const user = yield* tenancy.getUser(userId).pipe(Effect.mapError(() => unauthenticated("The user no longer exists")))
          const tenants = yield* memberships(user.id)
          return {
            sub: user.id,
            id: user.id,
            email: user.email,
            name: user.name,
            tenants: tenants.map((item) => ({ id: item.tenant_id, name: item.tenant_name, country_code: item.country_code, role: item.role }))
          }
        }),
      tokenUser: (token, context) =>
        looksLikeJwt(token)
          ? Effect.map(verifyJwt(token, context), (verified) => verified.userId)
          : Effect.map(accessPrincipal(token), (principal) => principal.actor.id),
      jwks: Effect.map(signingKeys.publicKeys, (keys) => ({ keys })),
      verifyJwt
    })
  })
)

