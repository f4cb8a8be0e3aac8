import { Effect, Option } from "effect"
import { grantsFromRows, type Principal, type Role } from "../auth/principal.js"
import { hashSecret } from "../auth/tokens.js"
import { isUuid } from "../engine/filter.js"
import { invalid, Unauthenticated } from "../errors.js"
import type { Tenancy } from "../tenancy/tenancy.js"
import type { OAuthRepository } from "./repository.js"
import { grantsFromScopes } from "./scopes.js"
import type { UserInfo } from "./service.js"

export const unauthenticated = (message: string, code = "INVALID_CREDENTIALS") => new Unauthenticated({ message, code })

/** Who acts with a user's token: the user, in one of their tenants, within their role and the token's scopes. */
export const makePrincipals = (repo: OAuthRepository["Service"], tenancy: Tenancy["Service"]) => {
  const userPrincipal = (userId: string, tenantId: string | undefined, scopes?: ReadonlyArray<string>) =>
    Effect.gen(function* () {
      const all = yield* repo.memberships(userId)
      if (tenantId !== undefined && !isUuid(tenantId)) return yield* Effect.fail(invalid(`X-Tenant-Id must be a UUID, got "${tenantId}"`, "INVALID_TENANT"))
      const chosen = tenantId === undefined ? (all.length === 1 ? all[0] : undefined) : all.find((item) => item.tenant_id === tenantId.toLowerCase())
      if (!chosen) {
        return yield* Effect.fail(
          tenantId === undefined && all.length > 1
            ? invalid("This user belongs to several tenants: send the X-Tenant-Id header", "TENANT_REQUIRED")
            : unauthenticated("The user is not a member of this tenant")
        )
      }
      const rows = yield* repo.membershipPermissions(chosen.tenant_id, userId)
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

  /** The principal behind a `svc_` access token. */
  const accessPrincipal = (token: string) =>
    Effect.gen(function* () {
      const row = yield* repo.findToken(hashSecret(token))
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

  const userinfo = (userId: string) =>
    Effect.gen(function* () {
      const user = yield* tenancy.getUser(userId).pipe(Effect.mapError(() => unauthenticated("The user no longer exists")))
      const tenants = yield* repo.memberships(user.id)
      return {
        sub: user.id,
        id: user.id,
        email: user.email,
        name: user.name,
        tenants: tenants.map((item) => ({ id: item.tenant_id, name: item.tenant_name, country_code: item.country_code, role: item.role }))
      } satisfies UserInfo
    })

  return { userPrincipal, accessPrincipal, userinfo }
}
