import { Context, type Effect, type Option } from "effect"
import type { OAuthClient, OAuthGrant, TenantMembership } from "./service.js"

/** A client as stored: its secret's hash beside what the API shows. */
export interface ClientRow extends OAuthClient {
  readonly secret_hash: string | null
}

/** An authorization code as stored (by its hash), with whether it expired. */
export interface CodeRow {
  readonly code_hash: string
  readonly client_id: string
  readonly user_id: string
  /** Null for a grant of the MCP resource (JWTs), which binds no company. */
  readonly tenant_id: string | null
  readonly redirect_uri: string
  readonly redirect_uri_given: boolean
  readonly scope: string
  readonly code_challenge: string
  readonly resource: string | null
  readonly expired: boolean
  readonly used_at: string | null
}

/** An issued token as stored (by its hash, or its jti's for a JWT), with whether it expired. */
export interface TokenRow {
  readonly id: string
  readonly kind: "access" | "refresh" | "jwt"
  readonly client_id: string
  readonly user_id: string
  readonly tenant_id: string | null
  readonly scope: string
  readonly resource: string | null
  readonly code_hash: string | null
  readonly family_id: string
  readonly expired: boolean
  readonly rotated_at: string | null
  readonly revoked_at: string | null
}

/** What a pair of tokens is issued for: the grant of a code, or the grant a refresh token carries on. */
export interface Grant {
  readonly clientId: string
  readonly userId: string
  readonly tenantId: string | null
  readonly scope: string
  readonly resource: string | null
  readonly codeHash: string | null
  readonly familyId: string
}

/** A token to store, for its grant: `hash` is of the token (or of a JWT's jti), never the token itself. */
export interface NewToken extends Grant {
  readonly hash: string
  readonly kind: TokenRow["kind"]
  readonly lifetimeSeconds: number
}

/** An authorization code to store, by its hash. */
export interface NewCode {
  readonly codeHash: string
  readonly clientId: string
  readonly userId: string
  readonly tenantId: string | null
  readonly redirectUri: string
  readonly redirectUriGiven: boolean
  readonly scope: string
  readonly codeChallenge: string
  readonly resource: string | null
  readonly lifetimeSeconds: number
}

/** A membership as the principal of a user is made of it: the tenant's own rate limit too. */
export type MembershipRow = TenantMembership & { readonly rate_limit_per_minute: number | null }

export interface PermissionRow {
  readonly resource_code: string
  readonly can_read: boolean
  readonly can_create: boolean
  readonly can_update: boolean
  readonly can_delete: boolean
}

/**
 * What the authorization server stores: clients, codes, tokens, sign-in sessions, users' password
 * hashes and memberships. Secrets arrive hashed; tenant ids are checked UUIDs. Implemented over SQL
 * in `store/oauth.ts`.
 */
export class OAuthRepository extends Context.Service<OAuthRepository, {
  /** Runs `effect` in one transaction (its reads may lock rows). */
  readonly transaction: <A, E>(effect: Effect.Effect<A, E>) => Effect.Effect<A, E>

  readonly insertClient: (client: {
    readonly clientId: string
    readonly secretHash: string | null
    readonly name: string
    readonly redirectUris: ReadonlyArray<string>
    readonly kind: OAuthClient["kind"]
    readonly registration: OAuthClient["registration"]
    readonly tenantId: string | null
  }) => Effect.Effect<ClientRow>
  readonly findClient: (clientId: string) => Effect.Effect<Option.Option<ClientRow>>
  readonly allClients: Effect.Effect<ReadonlyArray<ClientRow>>
  readonly tenantClients: (tenantId: string) => Effect.Effect<ReadonlyArray<ClientRow>>
  /** A live client the tenant's admins made. */
  readonly liveTenantClient: (tenantId: string, clientId: string) => Effect.Effect<Option.Option<ClientRow>>
  readonly setClientSecret: (clientId: string, secretHash: string) => Effect.Effect<void>
  readonly revokeClient: (clientId: string) => Effect.Effect<void>

  readonly insertCode: (code: NewCode) => Effect.Effect<void>
  /** The code, locked until the transaction ends. */
  readonly lockCode: (codeHash: string) => Effect.Effect<Option.Option<CodeRow>>
  readonly markCodeUsed: (codeHash: string) => Effect.Effect<void>

  readonly insertToken: (token: NewToken) => Effect.Effect<void>
  readonly findToken: (hash: string) => Effect.Effect<Option.Option<TokenRow>>
  /** The token, locked until the transaction ends. */
  readonly lockToken: (hash: string) => Effect.Effect<Option.Option<TokenRow>>
  readonly markRotated: (tokenId: string) => Effect.Effect<void>
  readonly revokeToken: (tokenId: string) => Effect.Effect<void>
  /** Every token of a grant (a refresh-token family). */
  readonly revokeFamily: (familyId: string) => Effect.Effect<void>
  /** Every token an authorization code issued. */
  readonly revokeIssuedByCode: (codeHash: string) => Effect.Effect<void>
  readonly revokeClientTokens: (clientId: string) => Effect.Effect<void>

  /** Live grants acting in the tenant: its own and its members' every-company ones. */
  readonly tenantGrants: (tenantId: string) => Effect.Effect<ReadonlyArray<OAuthGrant>>
  /** Revokes a grant acting in the tenant; false when there is none. */
  readonly revokeTenantGrant: (tenantId: string, grantId: string) => Effect.Effect<boolean>

  readonly memberships: (userId: string) => Effect.Effect<ReadonlyArray<MembershipRow>>
  readonly membershipPermissions: (tenantId: string, userId: string) => Effect.Effect<ReadonlyArray<PermissionRow>>

  /** The user of an email (case-insensitive) and their password hash. */
  readonly findPasswordHash: (email: string) => Effect.Effect<Option.Option<{ readonly id: string; readonly password_hash: string | null }>>
  readonly setPasswordHash: (userId: string, hash: string) => Effect.Effect<void>
  /** Replaces the hash only while it is still `current` (a password changed meanwhile keeps its own). */
  readonly replacePasswordHash: (userId: string, current: string, hash: string) => Effect.Effect<void>

  readonly insertSession: (session: { readonly tokenHash: string; readonly userId: string; readonly csrf: string; readonly lifetimeSeconds: number }) => Effect.Effect<void>
  readonly deleteExpiredSessions: Effect.Effect<void>
  readonly findSession: (tokenHash: string) => Effect.Effect<Option.Option<{ readonly userId: string; readonly csrf: string }>>
  readonly deleteSession: (tokenHash: string) => Effect.Effect<void>
  readonly deleteUserSessions: (userId: string) => Effect.Effect<void>
}>()("erp/core/OAuthRepository") {}
