import {
  type Identity,
  invalid,
  type InvalidRequest,
  NotFound,
  OAuth,
  type Principal,
  type Role,
  Tenancy,
  type Unauthenticated
} from "@erp/core"
import { Effect } from "effect"

/** A tenant the caller reaches, as `list_tenants` answers it. */
export interface ReachableTenant {
  readonly id: string
  readonly name: string
  readonly country_code: string
  /** The user's role there; null for an API key, which has permissions but no role. */
  readonly role: Role | null
}

export type CallerError = Unauthenticated | InvalidRequest | NotFound

/**
 * Who is calling the MCP server, resolved again for every call (so a revoked key or an
 * expired token stops working at once). A user reaches every tenant they are a member
 * of, each tool call naming one (`tenant_id`); an API key or a company-bound token reaches one.
 */
export interface McpCaller {
  /** Who owns a session: `user:<id>` or `api_key:<id>`. */
  readonly owner: string
  /** True when tools must name a tenant: a user, who may belong to several. */
  readonly choosesTenant: boolean
  readonly tenants: Effect.Effect<ReadonlyArray<ReachableTenant>, CallerError, Tenancy | OAuth>
  /** The principal for one call: `tenant_id` as given (or the only tenant), with its role and permissions. */
  readonly principalFor: (tenantId: string | undefined) => Effect.Effect<Principal, CallerError, Tenancy | OAuth>
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

const notReached = (tenantId: string) =>
  new NotFound({ message: `No tenant ${tenantId} among those this credential reaches; list_tenants names them`, code: "TENANT_NOT_FOUND" })

const checkedTenantId = (tenantId: string | undefined): Effect.Effect<string | undefined, InvalidRequest> =>
  tenantId === undefined || UUID.test(tenantId)
    ? Effect.succeed(tenantId?.toLowerCase())
    : Effect.fail(invalid(`tenant_id must be a UUID, got "${tenantId.slice(0, 60)}"`, "INVALID_TENANT", { tenant_id: ["must be a UUID"] }))

/** A credential bound to one tenant (an API key, a `svc_` token): `tenant_id` may be left out or must name it. */
export const boundCaller = (principal: Principal): McpCaller => ({
  owner: `${principal.actor.kind}:${principal.actor.id}`,
  choosesTenant: false,
  tenants: Effect.map(
    Effect.flatMap(Tenancy, (tenancy) => tenancy.getTenant(principal.tenantId)),
    ({ id, name, country_code }) => [{ id, name, country_code, role: principal.role ?? null }]
  ),
  principalFor: (tenantId) =>
    Effect.flatMap(checkedTenantId(tenantId), (checked) =>
      checked === undefined || checked === principal.tenantId ? Effect.succeed(principal) : Effect.fail(notReached(checked)))
})

/** A user (from a JWT, or a local user over stdio): every tenant they are a member of, within each role. */
export const userCaller = (userId: string, scopes?: ReadonlyArray<string>): McpCaller => ({
  owner: `user:${userId}`,
  choosesTenant: true,
  tenants: Effect.map(
    Effect.flatMap(OAuth, (oauth) => oauth.memberships(userId)),
    (memberships) => memberships.map(({ tenant_id, tenant_name, country_code, role }) => ({ id: tenant_id, name: tenant_name, country_code, role }))
  ),
  principalFor: (tenantId) =>
    Effect.gen(function* () {
      const checked = yield* checkedTenantId(tenantId)
      const oauth = yield* OAuth
      if (checked !== undefined && !(yield* oauth.memberships(userId)).some((membership) => membership.tenant_id === checked)) {
        return yield* Effect.fail(notReached(checked))
      }
      return yield* oauth.userPrincipal(userId, checked, scopes).pipe(
        Effect.catchTag("InvalidRequest", (error) =>
          Effect.fail(error.code === "TENANT_REQUIRED"
            ? invalid("You belong to several tenants: pass tenant_id (list_tenants names them)", "TENANT_REQUIRED", { tenant_id: ["is required"] })
            : error))
      )
    })
})

export const callerOf = (identity: Identity): McpCaller =>
  identity.kind === "bound" ? boundCaller(identity.principal) : userCaller(identity.userId, identity.scopes)
