import { Context, Effect, Layer } from "effect"
import { type InvalidRequest, Unauthenticated } from "../errors.js"
import { OAuth } from "../oauth/service.js"
import { Tenancy } from "../tenancy/tenancy.js"
import type { Principal } from "./principal.js"
import { tokenFromAuthorization } from "./tokens.js"

/** What a transport knows about the request beyond the token. */
export interface RequestContext {
  /** Public base URL the request reached (the issuer of our JWTs). */
  readonly issuer?: string
  /** `X-Tenant-Id`: which tenant a user token acts on when the user belongs to several. */
  readonly tenantId?: string
}

/**
 * API keys and `svc_` access tokens belong to one company (the one chosen on the consent
 * page): `X-Tenant-Id` naming another is refused rather than ignored, so a caller never
 * believes it acts where it does not.
 */
const boundTo = (principal: Principal, tenantId: string | undefined): Effect.Effect<Principal, Unauthenticated> =>
  tenantId === undefined || tenantId.trim().toLowerCase() === principal.tenantId.toLowerCase()
    ? Effect.succeed(principal)
    : Effect.fail(new Unauthenticated({
      message: "This credential was issued for another company than X-Tenant-Id names; it acts only in its own (authorize again choosing that company)",
      code: "INVALID_CREDENTIALS"
    }))

const JWT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/

/**
 * Turns the `Authorization` header of any transport into a principal, each token
 * kind by its shape: `sk_` API keys, `svc_` OAuth access tokens, JWTs of this
 * server or of the configured identity provider.
 */
export class Authenticator extends Context.Tag("erp/core/Authenticator")<Authenticator, {
  readonly authenticate: (authorization: string | undefined, context?: RequestContext) => Effect.Effect<Principal, Unauthenticated | InvalidRequest>
}>() {
  static readonly layer = Layer.effect(
    Authenticator,
    Effect.gen(function* () {
      const tenancy = yield* Tenancy
      const oauth = yield* OAuth
      return Authenticator.of({
        authenticate: (authorization, context = {}) => {
          const token = tokenFromAuthorization(authorization)
          if (!token) {
            return Effect.fail(
              new Unauthenticated({ message: "Authentication required: send Authorization: Bearer <token>", code: "MISSING_CREDENTIALS" })
            )
          }
          if (token.startsWith("sk_")) return Effect.flatMap(tenancy.authenticateApiKey(token), (principal) => boundTo(principal, context.tenantId))
          if (token.startsWith("svc_")) return Effect.flatMap(oauth.accessPrincipal(token), (principal) => boundTo(principal, context.tenantId))
          if (JWT.test(token) && context.issuer) {
            return Effect.flatMap(oauth.verifyJwt(token, { issuer: context.issuer }), ({ userId, scopes }) =>
              oauth.userPrincipal(userId, context.tenantId, scopes))
          }
          return Effect.fail(new Unauthenticated({ message: "The token is not a recognised credential", code: "INVALID_CREDENTIALS" }))
        }
      })
    })
  )
}
