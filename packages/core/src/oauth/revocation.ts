import { Effect, Option } from "effect"
import { decodeJwt } from "jose"
import { hashSecret } from "../auth/tokens.js"
import { isUuid } from "../engine/filter.js"
import { NotFound } from "../errors.js"
import { oauthError } from "./errors.js"
import { looksLikeJwt, type makeJwtAccessTokens } from "./jwt-access-tokens.js"
import type { OAuthRepository } from "./repository.js"
import type { OAuth } from "./service.js"

/** Ending access: a token by its client (RFC 7009), a grant by the tenant's admins. A refresh token takes its grant with it. */
export const makeRevocation = (repo: OAuthRepository["Service"], jwt: ReturnType<typeof makeJwtAccessTokens>) => {
  const revoke: OAuth["Service"]["revoke"] = ({ client, token }, { issuer }) =>
    Effect.gen(function* () {
      const isJwt = looksLikeJwt(token)
      const jti = isJwt ? yield* jwt.verifyOurs(token, issuer).pipe(
        Effect.flatMap(() => Effect.try(() => decodeJwt(token).jti)),
        Effect.orElseSucceed(() => undefined)
      ) : undefined
      const row = yield* repo.findToken(hashSecret(isJwt ? jti ?? "" : token))
      // RFC 7009 2.2: an unknown or already invalid token is not an error.
      if (Option.isNone(row)) return
      if (row.value.client_id !== client.client_id) {
        return yield* Effect.fail(oauthError("invalid_request", "The token was not issued to this client"))
      }
      yield* row.value.kind === "refresh" ? repo.revokeFamily(row.value.family_id) : repo.revokeToken(row.value.id)
    })

  const revokeGrant: OAuth["Service"]["revokeGrant"] = (tenantId, grantId) =>
    Effect.gen(function* () {
      const notFound = new NotFound({ message: `Grant ${grantId} not found`, code: "GRANT_NOT_FOUND" })
      if (!isUuid(tenantId) || !isUuid(grantId)) return yield* Effect.fail(notFound)
      if (!(yield* repo.revokeTenantGrant(tenantId, grantId))) return yield* Effect.fail(notFound)
    })

  return {
    revoke,
    tenantGrants: (tenantId: string) => (isUuid(tenantId) ? repo.tenantGrants(tenantId) : Effect.succeed([])),
    revokeGrant
  }
}
