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

/** Whether `X-Tenant-Id` (when sent) names the principal's own tenant. */
const actsIn = (principal: Principal, tenantId: string | undefined) => tenantId === undefined || tenantId.trim().toLowerCase() === principal.tenantId.toLowerCase()

/**
 * API keys and `svc_` access tokens belong to one company (the one chosen on the consent
 * page): `X-Tenant-Id` naming another is refused rather than ignored, so a caller never
 * believes it acts where it does not.
 */
const boundTo = (principal: Principal, tenantId: string | undefined): Effect.Effect<Principal, Unauthenticated> =>
  actsIn(principal, tenantId)
    ? Effect.succeed(principal)
    : Effect.fail(new Unauthenticated({
      message: "This credential was issued for another company than X-Tenant-Id names; it acts only in its own (authorize again choosing that company)",
      code: "INVALID_CREDENTIALS"
    }))

const JWT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/

/**
 * Who a credential is, before any tenant is chosen: a user (a JWT carries only the
 * user; the tenant is chosen per request or per MCP call), or a principal already bound
 * to one tenant (`sk_` API keys, `svc_` tokens issued for one company).
 */
export type Identity =
  | { readonly kind: "user"; readonly userId: string; readonly scopes: ReadonlyArray<string> | undefined }
  | { readonly kind: "bound"; readonly principal: Principal }

/**
 * Turns the `Authorization` header of any transport into a principal, each token
 * kind by its shape: `sk_` API keys, `svc_` OAuth access tokens, JWTs of this
 * server or of the configured identity provider.
 */
export class Authenticator extends Context.Service<Authenticator, {
  readonly authenticate: (authorization: string | undefined, context?: RequestContext) => Effect.Effect<Principal, Unauthenticated | InvalidRequest>
  /** The credential's identity, with no tenant resolved yet (MCP sessions are bound to it). */
  readonly identify: (authorization: string | undefined, context?: Omit<RequestContext, "tenantId">) => Effect.Effect<Identity, Unauthenticated>
}>()("erp/core/Authenticator") {
  static readonly layer = Layer.effect(
    Authenticator,
    Effect.gen(function* () {
      const tenancy = yield* Tenancy
      const oauth = yield* OAuth
      const identify = (authorization: string | undefined, context: RequestContext = {}): Effect.Effect<Identity, Unauthenticated> => {
        const token = tokenFromAuthorization(authorization)
        if (!token) {
          return Effect.fail(
            new Unauthenticated({ message: "Authentication required: send Authorization: Bearer <token>", code: "MISSING_CREDENTIALS" })
          )
        }
        const bound = (principal: Principal): Identity => ({ kind: "bound", principal })
        if (token.startsWith("sk_")) return Effect.map(tenancy.authenticateApiKey(token), bound)
        if (token.startsWith("svc_")) return Effect.map(oauth.accessPrincipal(token), bound)
        if (JWT.test(token) && context.issuer) {
          return Effect.map(oauth.verifyJwt(token, { issuer: context.issuer }), ({ userId, scopes }): Identity => ({ kind: "user", userId, scopes }))
        }
        return Effect.fail(new Unauthenticated({ message: "The token is not a recognised credential", code: "INVALID_CREDENTIALS" }))
      }
      return Authenticator.of({
        identify,
        authenticate: (authorization, context = {}) =>
          Effect.flatMap(identify(authorization, context), (identity): Effect.Effect<Principal, Unauthenticated | InvalidRequest> =>
            identity.kind === "bound" ? boundTo(identity.principal, context.tenantId) : oauth.userPrincipal(identity.userId, context.tenantId, identity.scopes))
      })
    })
  )
}
