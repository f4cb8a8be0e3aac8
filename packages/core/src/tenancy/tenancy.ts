import { Context, type Effect, Schema } from "effect"
import type { Principal, Role } from "../auth/principal.js"
import type { PermissionGrant } from "../auth/permissions.js"
import type { Conflict, InvalidRequest, NotFound, Unauthenticated, Unprocessable } from "../errors.js"

export const Tenant = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  country_code: Schema.String,
  /** IANA time zone: the tenant's "today" (when a payable becomes overdue). */
  time_zone: Schema.String,
  created_at: Schema.String,
  updated_at: Schema.String
}).annotate({ identifier: "Tenant" })
export type Tenant = typeof Tenant.Type

export interface User {
  readonly id: string
  readonly email: string
  readonly name: string
  readonly created_at: string
  readonly updated_at: string
}

export interface Membership {
  readonly id: string
  readonly tenant_id: string
  readonly user_id: string
  readonly role: Role
  readonly permissions: ReadonlyArray<PermissionGrant>
  readonly created_at: string
}

/** A membership with the user it names, as the panel's members screen lists it. */
export interface Member extends Membership {
  readonly email: string
  readonly name: string
}

export interface ApiKey {
  readonly id: string
  readonly tenant_id: string
  readonly name: string
  readonly description: string | null
  /** `sk_<publicId>`: identifies the key in logs without revealing the secret. */
  readonly prefix: string
  readonly permissions: ReadonlyArray<PermissionGrant>
  readonly expires_at: string | null
  readonly last_used_at: string | null
  readonly created_at: string
  readonly revoked_at: string | null
  /** Requests a minute this key may send; `null`: the tenant's limit (default 6,000). */
  readonly rate_limit_per_minute: number | null
}

export interface NewApiKey {
  readonly tenantId: string
  readonly name: string
  readonly description?: string | undefined
  readonly permissions: ReadonlyArray<PermissionGrant>
  readonly expiresAt?: string | undefined
  readonly createdByUserId?: string | undefined
  /** Requests a minute for this key instead of the tenant's limit. */
  readonly rateLimitPerMinute?: number | undefined
}

/** Tenants, users, memberships and API keys: the operator's side of the service. */
export class Tenancy extends Context.Service<Tenancy, {
  /** A tenant; its time zone defaults to its country's main one. */
  readonly createTenant: (input: { name: string; countryCode: string; timeZone?: string | undefined }) => Effect.Effect<Tenant, InvalidRequest>
  readonly setTimeZone: (id: string, timeZone: string) => Effect.Effect<Tenant, NotFound | InvalidRequest>
  /** Requests a minute each credential of the tenant may send (keys with their own limit aside); `null` restores the default (6,000). */
  readonly setRateLimit: (id: string, perMinute: number | null) => Effect.Effect<Tenant, NotFound | InvalidRequest>
  readonly listTenants: Effect.Effect<ReadonlyArray<Tenant>>
  readonly getTenant: (id: string) => Effect.Effect<Tenant, NotFound | InvalidRequest>
  readonly createUser: (input: { email: string; name: string }) => Effect.Effect<User, Conflict | InvalidRequest>
  /** By id or email. */
  readonly getUser: (reference: string) => Effect.Effect<User, NotFound>
  readonly addMember: (input: {
    tenantId: string
    userId: string
    role: Role
    permissions?: ReadonlyArray<PermissionGrant>
  }) => Effect.Effect<Membership, NotFound | Conflict | InvalidRequest>
  readonly listMembers: (tenantId: string) => Effect.Effect<ReadonlyArray<Member>, NotFound | InvalidRequest>
  /** Changes a member's role and replaces their permissions; a tenant always keeps one admin (422 LAST_ADMIN). */
  readonly updateMember: (input: {
    tenantId: string
    membershipId: string
    role: Role
    permissions: ReadonlyArray<PermissionGrant>
  }) => Effect.Effect<Member, NotFound | InvalidRequest | Unprocessable>
  /** Ends a membership (the user's sessions and tokens stop acting in the tenant); never the last admin's. */
  readonly removeMember: (tenantId: string, membershipId: string) => Effect.Effect<void, NotFound | InvalidRequest | Unprocessable>
  readonly createApiKey: (input: NewApiKey) => Effect.Effect<{ readonly key: ApiKey; readonly token: string }, NotFound | InvalidRequest>
  readonly listApiKeys: (tenantId: string) => Effect.Effect<ReadonlyArray<ApiKey>, NotFound | InvalidRequest>
  readonly revokeApiKey: (keyId: string) => Effect.Effect<ApiKey, NotFound | InvalidRequest>
  /** The principal behind an API key token; 401 for anything but a live, matching key. */
  readonly authenticateApiKey: (token: string) => Effect.Effect<Principal, Unauthenticated>
  readonly countTenants: Effect.Effect<number>
}>()("erp/core/Tenancy") {}
