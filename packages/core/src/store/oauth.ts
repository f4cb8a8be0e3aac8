import * as SqlClient from "effect/sql/SqlClient"
import type { Fragment } from "effect/sql/Statement"
import { Effect, Layer, Option } from "effect"
import { layerAuthorizationServer } from "../oauth/authorization-server.js"
import { type ClientRow, type CodeRow, type MembershipRow, OAuthRepository, type PermissionRow, type TokenRow } from "../oauth/repository.js"
import type { OAuthGrant } from "../oauth/service.js"

/** The authorization server's storage over SQL: every statement of OAuth, and nothing it decides. */
export const makeOAuthRepository = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  const clientRows = (where: Fragment) =>
    sql<ClientRow>`SELECT id, client_id, secret_hash, name, redirect_uris, kind, registration, created_at, revoked_at
      FROM oauth_clients WHERE ${where}`.pipe(Effect.orDie)

  const first = <A>(rows: ReadonlyArray<A>) => Option.fromNullishOr(rows[0])

  const revokeWhere = (where: Fragment) =>
    sql`UPDATE oauth_tokens SET revoked_at = coalesce(revoked_at, now()) WHERE ${where}`.pipe(Effect.orDie, Effect.asVoid)

  return OAuthRepository.of({
    transaction: <A, E>(effect: Effect.Effect<A, E>) => sql.withTransaction(effect).pipe(Effect.catchTag("SqlError", Effect.die)) as Effect.Effect<A, E>,

    insertClient: ({ clientId, secretHash, name, redirectUris, kind, registration, tenantId }) =>
      sql<ClientRow>`INSERT INTO oauth_clients (client_id, secret_hash, name, redirect_uris, kind, registration, tenant_id)
        VALUES (${clientId}, ${secretHash}, ${name}, ${JSON.stringify(redirectUris)}::jsonb, ${kind}, ${registration}, ${tenantId}::uuid)
        RETURNING id, client_id, secret_hash, name, redirect_uris, kind, registration, created_at, revoked_at`.pipe(Effect.orDie, Effect.map((rows) => rows[0])),
    findClient: (clientId) => Effect.map(clientRows(sql`client_id = ${clientId}`), first),
    allClients: clientRows(sql`TRUE ORDER BY created_at, id`),
    tenantClients: (tenantId) => clientRows(sql`tenant_id = ${tenantId}::uuid ORDER BY created_at, id`),
    liveTenantClient: (tenantId, clientId) =>
      Effect.map(clientRows(sql`client_id = ${clientId} AND tenant_id = ${tenantId}::uuid AND revoked_at IS NULL`), first),
    setClientSecret: (clientId, secretHash) =>
      sql`UPDATE oauth_clients SET secret_hash = ${secretHash}, updated_at = now() WHERE client_id = ${clientId}`.pipe(Effect.orDie, Effect.asVoid),
    revokeClient: (clientId) =>
      sql`UPDATE oauth_clients SET revoked_at = coalesce(revoked_at, now()), updated_at = now() WHERE client_id = ${clientId}`.pipe(Effect.orDie, Effect.asVoid),

    insertCode: (code) =>
      sql`INSERT INTO oauth_authorization_codes (code_hash, client_id, user_id, tenant_id, redirect_uri, redirect_uri_given, scope, code_challenge, resource, expires_at)
        VALUES (${code.codeHash}, ${code.clientId}, ${code.userId}::uuid, ${code.tenantId}::uuid, ${code.redirectUri}, ${code.redirectUriGiven},
          ${code.scope}, ${code.codeChallenge}, ${code.resource}, now() + ${`${code.lifetimeSeconds} seconds`}::interval)`.pipe(Effect.orDie, Effect.asVoid),
    lockCode: (codeHash) =>
      sql<CodeRow>`SELECT code_hash, client_id, user_id, tenant_id, redirect_uri, redirect_uri_given, scope, code_challenge, resource,
          expires_at <= now() AS expired, used_at FROM oauth_authorization_codes WHERE code_hash = ${codeHash} FOR UPDATE`.pipe(Effect.orDie, Effect.map(first)),
    markCodeUsed: (codeHash) => sql`UPDATE oauth_authorization_codes SET used_at = now() WHERE code_hash = ${codeHash}`.pipe(Effect.orDie, Effect.asVoid),

    insertToken: (token) =>
      sql`INSERT INTO oauth_tokens (token_hash, kind, client_id, user_id, tenant_id, scope, resource, code_hash, family_id, expires_at)
        VALUES (${token.hash}, ${token.kind}, ${token.clientId}, ${token.userId}::uuid, ${token.tenantId}::uuid, ${token.scope}, ${token.resource},
          ${token.codeHash}, ${token.familyId}::uuid, now() + ${`${token.lifetimeSeconds} seconds`}::interval)`.pipe(Effect.orDie, Effect.asVoid),
    findToken: (hash) =>
      sql<TokenRow>`SELECT id, kind, client_id, user_id, tenant_id, scope, resource, code_hash, family_id, expires_at <= now() AS expired,
          rotated_at, revoked_at FROM oauth_tokens WHERE token_hash = ${hash}`.pipe(Effect.orDie, Effect.map(first)),
    lockToken: (hash) =>
      sql<TokenRow>`SELECT id, kind, client_id, user_id, tenant_id, scope, resource, code_hash, family_id,
          expires_at <= now() AS expired, rotated_at, revoked_at FROM oauth_tokens WHERE token_hash = ${hash} FOR UPDATE`.pipe(Effect.orDie, Effect.map(first)),
    markRotated: (tokenId) => sql`UPDATE oauth_tokens SET rotated_at = now() WHERE id = ${tokenId}::uuid`.pipe(Effect.orDie, Effect.asVoid),
    revokeToken: (tokenId) => revokeWhere(sql`id = ${tokenId}::uuid`),
    revokeFamily: (familyId) => revokeWhere(sql`family_id = ${familyId}::uuid`),
    revokeIssuedByCode: (codeHash) => revokeWhere(sql`code_hash = ${codeHash}`),
    revokeClientTokens: (clientId) => revokeWhere(sql`client_id = ${clientId}`),

    tenantGrants: (tenantId) =>
      sql<OAuthGrant>`SELECT t.family_id AS id, t.client_id, c.name AS client_name, u.email AS user_email, min(t.scope) AS scope,
          bool_and(t.tenant_id IS NULL) AS every_company, min(t.created_at) AS created_at, max(t.created_at) AS last_issued_at,
          max(t.expires_at) FILTER (WHERE t.kind = 'refresh') AS expires_at
        FROM oauth_tokens t JOIN oauth_clients c ON c.client_id = t.client_id JOIN users u ON u.id = t.user_id
        WHERE (t.tenant_id = ${tenantId}::uuid
          OR (t.tenant_id IS NULL AND EXISTS (SELECT 1 FROM memberships m WHERE m.tenant_id = ${tenantId}::uuid AND m.user_id = t.user_id)))
        GROUP BY t.family_id, t.client_id, c.name, u.email
        HAVING bool_or(t.kind = 'refresh' AND t.revoked_at IS NULL AND t.rotated_at IS NULL AND t.expires_at > now())
        ORDER BY min(t.created_at) DESC`.pipe(Effect.orDie),
    revokeTenantGrant: (tenantId, grantId) =>
      sql<{ id: string }>`UPDATE oauth_tokens t SET revoked_at = coalesce(t.revoked_at, now())
        WHERE t.family_id = ${grantId}::uuid AND (t.tenant_id = ${tenantId}::uuid
          OR (t.tenant_id IS NULL AND EXISTS (SELECT 1 FROM memberships m WHERE m.tenant_id = ${tenantId}::uuid AND m.user_id = t.user_id)))
        RETURNING t.id`.pipe(Effect.orDie, Effect.map((rows) => rows.length > 0)),

    memberships: (userId) =>
      sql<MembershipRow>`SELECT m.tenant_id, t.name AS tenant_name, t.country_code::text AS country_code, m.role, t.rate_limit_per_minute
        FROM memberships m JOIN tenants t ON t.id = m.tenant_id WHERE m.user_id = ${userId}::uuid ORDER BY t.name, t.id`.pipe(Effect.orDie),
    membershipPermissions: (tenantId, userId) =>
      sql<PermissionRow>`
        SELECT p.resource_code, p.can_read, p.can_create, p.can_update, p.can_delete FROM membership_permissions p
        JOIN memberships m ON m.tenant_id = p.tenant_id AND m.id = p.membership_id
        WHERE m.tenant_id = ${tenantId}::uuid AND m.user_id = ${userId}::uuid`.pipe(Effect.orDie),

    findPasswordHash: (email) =>
      sql<{ id: string; password_hash: string | null }>`SELECT id, password_hash FROM users WHERE lower(email) = lower(${email})`.pipe(Effect.orDie, Effect.map(first)),
    setPasswordHash: (userId, hash) => sql`UPDATE users SET password_hash = ${hash}, updated_at = now() WHERE id = ${userId}::uuid`.pipe(Effect.orDie, Effect.asVoid),
    replacePasswordHash: (userId, current, hash) =>
      sql`UPDATE users SET password_hash = ${hash} WHERE id = ${userId}::uuid AND password_hash = ${current}`.pipe(Effect.orDie, Effect.asVoid),

    insertSession: ({ tokenHash, userId, csrf, lifetimeSeconds }) =>
      sql`INSERT INTO web_sessions (id_hash, user_id, csrf_token, expires_at)
        VALUES (${tokenHash}, ${userId}::uuid, ${csrf}, now() + ${`${lifetimeSeconds} seconds`}::interval)`.pipe(Effect.orDie, Effect.asVoid),
    deleteExpiredSessions: sql`DELETE FROM web_sessions WHERE expires_at < now()`.pipe(Effect.orDie, Effect.asVoid),
    findSession: (tokenHash) =>
      sql<{ user_id: string; csrf_token: string }>`SELECT user_id, csrf_token FROM web_sessions
        WHERE id_hash = ${tokenHash} AND expires_at > now()`.pipe(
        Effect.orDie,
        Effect.map((rows) => Option.map(first(rows), (row) => ({ userId: row.user_id, csrf: row.csrf_token })))
      ),
    deleteSession: (tokenHash) => sql`DELETE FROM web_sessions WHERE id_hash = ${tokenHash}`.pipe(Effect.orDie, Effect.asVoid),
    deleteUserSessions: (userId) => sql`DELETE FROM web_sessions WHERE user_id = ${userId}::uuid`.pipe(Effect.orDie, Effect.asVoid)
  })
})

export const layerOAuthRepository = Layer.effect(OAuthRepository, makeOAuthRepository)

/** The authorization server over this store. */
export const layerOAuth = layerAuthorizationServer.pipe(Layer.provide(layerOAuthRepository))
