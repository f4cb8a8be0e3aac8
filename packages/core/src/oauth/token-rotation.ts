import { Effect, Option } from "effect"
import { hashSecret } from "../auth/tokens.js"
import type { SigningKeys } from "../store/signing-keys.js"
import { oauthError } from "./errors.js"
import type { OAuthRepository } from "./repository.js"
import { parseScope } from "./scopes.js"
import type { OAuth } from "./service.js"
import { mcpResource, sameResource } from "./settings.js"
import type { makeTokenIssuance } from "./token-issuance.js"

/**
 * Refresh-token rotation (OAuth 2.1 section 4.3.1): each refresh token is used once and answered
 * with a new pair in its grant's family, within the grant's scopes and resource. A rotated token
 * presented again means the grant leaked: the whole family is revoked.
 */
export const makeTokenRotation = (
  repo: OAuthRepository["Service"],
  signingKeys: SigningKeys["Service"],
  issuance: ReturnType<typeof makeTokenIssuance>
) => {
  const refresh: OAuth["Service"]["refresh"] = ({ client, refreshToken, scope, resource }, { issuer }) =>
    Effect.gen(function* () {
      const key = yield* signingKeys.current
      const outcome = yield* repo.transaction(
        Effect.gen(function* () {
          const row = Option.getOrUndefined(yield* repo.lockToken(hashSecret(refreshToken)))
          if (!row || row.kind !== "refresh" || row.client_id !== client.client_id) {
            return yield* Effect.fail(oauthError("invalid_grant", "The refresh token is not valid"))
          }
          if (row.rotated_at !== null) return { leaked: row.family_id }
          if (row.revoked_at !== null) return yield* Effect.fail(oauthError("invalid_grant", "The refresh token was revoked"))
          if (row.expired) return yield* Effect.fail(oauthError("invalid_grant", "The refresh token expired"))
          const granted = row.scope.split(" ")
          const asked = scope === undefined ? granted : yield* Effect.fromResult(parseScope(scope))
          const beyond = asked.filter((item) => !granted.includes(item))
          if (beyond.length > 0) return yield* Effect.fail(oauthError("invalid_scope", `Not granted originally: ${beyond.join(" ")}`))
          if (resource !== undefined && !sameResource(resource, row.resource)) {
            return yield* Effect.fail(oauthError("invalid_target", "resource differs from the one of the grant"))
          }
          if (row.tenant_id === null && !sameResource(row.resource, mcpResource(issuer))) {
            return yield* Effect.fail(oauthError("invalid_target", "This grant covers every company of the user and is for the MCP resource only"))
          }
          yield* repo.markRotated(row.id)
          const tokens = yield* issuance.issueTokens(
            { clientId: client.client_id, userId: row.user_id, tenantId: row.tenant_id, scope: asked.join(" "), resource: row.resource, codeHash: row.code_hash, familyId: row.family_id },
            issuer,
            key
          )
          return { tokens }
        })
      )
      if (outcome.leaked !== undefined) {
        // A rotated refresh token presented again: the grant has leaked, so all of it is revoked
        // (after the read committed, so the failure below cannot undo it).
        yield* repo.revokeFamily(outcome.leaked)
        return yield* Effect.fail(oauthError("invalid_grant", "The refresh token was already used; the grant is revoked"))
      }
      return outcome.tokens
    })

  return { refresh }
}
