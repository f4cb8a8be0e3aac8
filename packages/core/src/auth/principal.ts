import { Context, Effect } from "effect"
import { Forbidden } from "../errors.js"

/** What a permission grants on a resource. */
export type Action = "read" | "create" | "update" | "delete"
export const ACTIONS: ReadonlyArray<Action> = ["read", "create", "update", "delete"]

export type Role = "admin" | "member"

/** Permission grants: resource code (or `*` for every resource) to the actions allowed. */
export type Grants = ReadonlyMap<string, ReadonlySet<Action>>

export type Actor =
  | { readonly kind: "api_key"; readonly id: string; readonly name: string }
  | { readonly kind: "user"; readonly id: string; readonly email: string }
  /** An operator's tool acting as a tenant's admin: the CLI, or the embedding app through core. */
  | { readonly kind: "operator"; readonly id: string }

/** Who is calling, for which tenant, with which rights. Every core operation takes one. */
export interface Principal {
  readonly tenantId: string
  readonly tenantCountry: string
  readonly actor: Actor
  /** A user's role in the tenant; API keys have none and rely on their grants alone. */
  readonly role: Role | undefined
  readonly grants: Grants
  /** OAuth scopes granted to the token: they narrow what the role allows, never widen it. */
  readonly scopes?: Grants
  /**
   * The credential the request came with, for per-credential rate limits: `key:<id>`,
   * `oauth:<client>:<user>` or `user:<id>`, with its per-minute limit when the key or the
   * tenant sets one. Operators (CLI, embedding app) have none and are not limited.
   */
  readonly credential?: { readonly id: string; readonly rateLimitPerMinute?: number }
}

/** The operator (CLI, embedding app) acting as a tenant's admin; `name` says which tool, for the event log. */
export const asOperator = (tenant: { readonly id: string; readonly country_code: string }, name: string): Principal => ({
  tenantId: tenant.id,
  tenantCountry: tenant.country_code,
  actor: { kind: "operator", id: name },
  role: "admin",
  grants: new Map()
})

export class CurrentPrincipal extends Context.Service<CurrentPrincipal, Principal>()("erp/core/CurrentPrincipal") {}

const allows = (grants: Grants, resource: string, action: Action) =>
  Boolean(grants.get(resource)?.has(action) || grants.get("*")?.has(action))

export const can = (principal: Principal, resource: string, action: Action, adminOnly = false): boolean => {
  const byRole = principal.role === "admin" || (!adminOnly && allows(principal.grants, resource, action))
  return byRole && (principal.scopes === undefined || allows(principal.scopes, resource, action))
}

/** The 403 of a principal that may not do `action` on `resource`, saying what it lacks. */
export const forbidden = (principal: Principal, resource: string, action: Action, adminOnly = false) =>
  new Forbidden({
    message: adminOnly && principal.role !== "admin"
      ? `This operation on ${resource} requires the admin role`
      : principal.scopes && !allows(principal.scopes, resource, action)
      ? `This token was not granted the ${resource}:${action} scope`
      : `This credential lacks the ${resource}:${action} permission`,
    code: "PERMISSION_DENIED"
  })

/** 403 when the principal may not do `action` on `resource`. */
export const authorize = (principal: Principal, resource: string, action: Action, adminOnly = false) =>
  can(principal, resource, action, adminOnly) ? Effect.void : Effect.fail(forbidden(principal, resource, action, adminOnly))

/** Grants from permission rows (`can_read`, `can_create`, `can_update`, `can_delete`). */
export const grantsFromRows = (
  rows: ReadonlyArray<{ resource_code: string; can_read: boolean; can_create: boolean; can_update: boolean; can_delete: boolean }>
): Grants => {
  const grants = new Map<string, Set<Action>>()
  for (const row of rows) {
    const actions = grants.get(row.resource_code) ?? new Set<Action>()
    if (row.can_read) actions.add("read")
    if (row.can_create) actions.add("create")
    if (row.can_update) actions.add("update")
    if (row.can_delete) actions.add("delete")
    grants.set(row.resource_code, actions)
  }
  return grants
}
