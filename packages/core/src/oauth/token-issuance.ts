import { Effect, Option } from "effect"
import { randomUUID } from "node:crypto"
import { hashSecret } from "../auth/tokens.js"
import type { SigningKey, SigningKeys } from "../store/signing-keys.js"
import { oauthError } from "./errors.js"
import type { makeJwtAccessTokens } from "./jwt-access-tokens.js"
import { pkceMatches, wellFormedVerifier } from "./pkce.js"
import { redirectUriMatches } from "./redirect-uris.js"
import type { Grant, OAuthRepository } from "./repository.js"
import type { CodeRequest, OAuth, TokenSet } from "./service.js"
import { mcpResource, type OAuthSettings, sameResource } from "./settings.js"
import { newToken, TOKEN_PREFIX } from "./tokens.js"


/** The authorization code flow: codes for a consent, exchanged once (PKCE, the same redirect URI) for tokens. */
export const makeTokenIssuance = (
  repo: OAuthRepository["Service"],
  lifetimes: OAuthSettings["lifetimes"],
  signingKeys: SigningKeys["Service"],
  jwt: ReturnType<typeof makeJwtAccessTokens>
) => {
  /** Access and refresh token for a grant; for the MCP resource the access token is a JWT. */
  const issueTokens = (grant: Grant, issuer: string, key: SigningKey) =>
    Effect.gen(function* () {
      const asJwt = sameResource(grant.resource, mcpResource(issuer))
      const jti = randomUUID()
      const access = asJwt ? yield* jwt.sign(key, grant.userId, grant.resource!, issuer, jti) : newToken(TOKEN_PREFIX.access)
      const refresh = newToken(TOKEN_PREFIX.refresh)
      const stored = { clientId: grant.clientId, userId: grant.userId, tenantId: grant.tenantId, scope: grant.scope, resource: grant.resource, codeHash: grant.codeHash, familyId: grant.familyId }
      yield* repo.insertToken({ ...stored, hash: hashSecret(asJwt ? jti : access), kind: asJwt ? "jwt" : "access", lifetimeSeconds: lifetimes.accessSeconds })
      yield* repo.insertToken({ ...stored, hash: hashSecret(refresh), kind: "refresh", lifetimeSeconds: lifetimes.refreshSeconds })
      return {
        access_token: access,
        token_type: "Bearer",
        expires_in: lifetimes.accessSeconds,
        refresh_token: refresh,
        scope: grant.scope
      } satisfies TokenSet
    })

  const issueCode = (request: CodeRequest) =>
    Effect.gen(function* () {
      const code = newToken(TOKEN_PREFIX.code)
      yield* repo.insertCode({
        codeHash: hashSecret(code),
        clientId: request.client.client_id,
        userId: request.userId,
        tenantId: request.tenantId ?? null,
        redirectUri: request.redirectUri,
        redirectUriGiven: request.redirectUriGiven,
        scope: request.scopes.join(" "),
        codeChallenge: request.codeChallenge,
        resource: request.resource ?? null,
        lifetimeSeconds: lifetimes.codeSeconds
      })
      return code
    })

  const exchangeCode: OAuth["Service"]["exchangeCode"] = ({ client, code, redirectUri, codeVerifier, resource }, { issuer }) =>
    Effect.gen(function* () {
      // The key is read before the transaction: on the one-connection embedded store a
      // read from outside the transaction would wait for it forever.
      const key = yield* signingKeys.current
      const codeHash = hashSecret(code)
      const outcome = yield* repo.transaction(
        Effect.gen(function* () {
          const row = Option.getOrUndefined(yield* repo.lockCode(codeHash))
          if (!row || row.client_id !== client.client_id) return yield* Effect.fail(oauthError("invalid_grant", "The authorization code is not valid"))
          if (row.used_at !== null) return { reused: true as const }
          if (row.expired) return yield* Effect.fail(oauthError("invalid_grant", "The authorization code expired"))
          if (!redirectUriMatches(row, redirectUri)) return yield* Effect.fail(oauthError("invalid_grant", "redirect_uri does not match the authorization request"))
          if (!wellFormedVerifier(codeVerifier)) {
            return yield* Effect.fail(oauthError("invalid_grant", "code_verifier is missing or malformed (43 to 128 characters of A-Z a-z 0-9 - . _ ~)"))
          }
          if (!pkceMatches(codeVerifier, row.code_challenge)) return yield* Effect.fail(oauthError("invalid_grant", "code_verifier does not match the code_challenge"))
          if (resource !== undefined && !sameResource(resource, row.resource)) {
            return yield* Effect.fail(oauthError("invalid_target", "resource differs from the one of the authorization request"))
          }
          if (row.tenant_id === null && !sameResource(row.resource, mcpResource(issuer))) {
            return yield* Effect.fail(oauthError("invalid_target", "This grant covers every company of the user and is for the MCP resource only"))
          }
          yield* repo.markCodeUsed(codeHash)
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
        yield* repo.revokeIssuedByCode(codeHash)
        return yield* Effect.fail(oauthError("invalid_grant", "The authorization code was already used; the tokens it issued are revoked"))
      }
      return outcome.tokens
    })

  return { issueTokens, issueCode, exchangeCode }
}
