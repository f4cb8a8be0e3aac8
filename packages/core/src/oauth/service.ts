import { Context, type Effect, type Option } from "effect"
import type { Principal, Role } from "../auth/principal.js"
import type { InvalidRequest, NotFound, Unauthenticated } from "../errors.js"
import type { User } from "../tenancy/tenancy.js"
import type { OAuthError } from "./errors.js"

export interface OAuthClient {
  readonly id: string
  readonly client_id: string
  readonly name: string
  readonly redirect_uris: ReadonlyArray<string>
  /** Confidential clients authenticate with a secret; public ones (PKCE only) do not. */
  readonly kind: "confidential" | "public"
  readonly registration: "operator" | "dynamic"
  readonly created_at: string
  readonly revoked_at: string | null
}

/**
 * An application's access to a tenant, as the panel's "Authorized apps" lists it: one
 * refresh-token family (a consent), alive while its refresh token is.
 */
export interface OAuthGrant {
  /** The token family: revoking it ends every token of the consent. */
  readonly id: string
  readonly client_id: string
  readonly client_name: string
  readonly user_email: string
  readonly scope: string
  /** The MCP resource's grants act in each company of the user: they name none. */
  readonly every_company: boolean
  readonly created_at: string
  /** When the last token of the family was issued (the app's last refresh). */
  readonly last_issued_at: string
  readonly expires_at: string
}

export interface TokenSet {
  readonly access_token: string
  readonly token_type: "Bearer"
  readonly expires_in: number
  readonly refresh_token: string
  readonly scope: string
}

export interface TenantMembership {
  readonly tenant_id: string
  readonly tenant_name: string
  readonly country_code: string
  readonly role: Role
}

export interface UserInfo {
  readonly sub: string
  readonly id: string
  readonly email: string
  readonly name: string
  readonly tenants: ReadonlyArray<{ readonly id: string; readonly name: string; readonly country_code: string; readonly role: Role }>
}

export interface CodeRequest {
  readonly client: OAuthClient
  readonly userId: string
  /**
   * The company chosen on the consent page, which `svc_` tokens act in. None for the MCP
   * resource: its JWTs name only the user, who picks the company per call within each role.
   */
  readonly tenantId: string | undefined
  readonly redirectUri: string
  /** Whether the authorization request named it (else the client's only URI was used): then the token request must too. */
  readonly redirectUriGiven: boolean
  readonly scopes: ReadonlyArray<string>
  readonly codeChallenge: string
  readonly resource: string | undefined
}

/** Where the caller reaches us: tokens for the MCP resource are JWTs signed by this issuer. */
export interface IssuerContext {
  readonly issuer: string
}

/** The authorization server: clients, sign-in, codes, tokens. Implemented in `oauth/authorization-server.ts` over `OAuthRepository`. */
export class OAuth extends Context.Service<OAuth, {
  readonly createClient: (input: {
    readonly name: string
    readonly redirectUris: ReadonlyArray<string>
    readonly kind: OAuthClient["kind"]
    readonly registration: OAuthClient["registration"]
    /** The tenant whose admin made it in the panel (none for operator and dynamic clients). */
    readonly tenantId?: string
  }) => Effect.Effect<{ readonly client: OAuthClient; readonly secret: string | undefined }, InvalidRequest>
  /** Clients a tenant's admins made in the panel. */
  readonly tenantClients: (tenantId: string) => Effect.Effect<ReadonlyArray<OAuthClient>>
  /** A new secret for a tenant's confidential client (the old one stops working at once); shown only here. */
  readonly rotateClientSecret: (tenantId: string, clientId: string) => Effect.Effect<{ readonly client: OAuthClient; readonly secret: string }, NotFound | InvalidRequest>
  /** Live consents acting in the tenant: its own grants and its members' every-company (MCP) grants. */
  readonly tenantGrants: (tenantId: string) => Effect.Effect<ReadonlyArray<OAuthGrant>>
  /** Ends one of `tenantGrants`: every access and refresh token of the family. */
  readonly revokeGrant: (tenantId: string, grantId: string) => Effect.Effect<void, NotFound>
  readonly listClients: Effect.Effect<ReadonlyArray<OAuthClient>>
  readonly findClient: (clientId: string) => Effect.Effect<Option.Option<OAuthClient>>
  /** RFC 6749 2.3: a confidential client proves its secret; a public client sends none. */
  readonly authenticateClient: (input: { readonly clientId: string; readonly secret: string | undefined }) => Effect.Effect<OAuthClient, OAuthError>
  readonly revokeClient: (clientId: string) => Effect.Effect<OAuthClient, NotFound>

  readonly setPassword: (userReference: string, password: string) => Effect.Effect<User, NotFound | InvalidRequest>
  /** The user whose email and password match; None otherwise (same time either way). */
  readonly signIn: (email: string, password: string) => Effect.Effect<Option.Option<User>>
  readonly memberships: (userId: string) => Effect.Effect<ReadonlyArray<TenantMembership>>

  readonly createSession: (userId: string) => Effect.Effect<{ readonly token: string; readonly csrf: string; readonly maxAgeSeconds: number }>
  readonly findSession: (token: string) => Effect.Effect<Option.Option<{ readonly userId: string; readonly csrf: string }>>
  readonly endSession: (token: string) => Effect.Effect<void>

  readonly issueCode: (request: CodeRequest) => Effect.Effect<string>
  readonly exchangeCode: (
    input: { readonly client: OAuthClient; readonly code: string; readonly redirectUri: string | undefined; readonly codeVerifier: string | undefined; readonly resource: string | undefined },
    context: IssuerContext
  ) => Effect.Effect<TokenSet, OAuthError>
  readonly refresh: (
    input: { readonly client: OAuthClient; readonly refreshToken: string; readonly scope: string | undefined; readonly resource: string | undefined },
    context: IssuerContext
  ) => Effect.Effect<TokenSet, OAuthError>
  /** RFC 7009: revokes an access or refresh token (a refresh token takes its whole grant with it). */
  readonly revoke: (input: { readonly client: OAuthClient; readonly token: string }, context: IssuerContext) => Effect.Effect<void, OAuthError>

  /** The principal behind a `svc_` access token. */
  readonly accessPrincipal: (token: string) => Effect.Effect<Principal, Unauthenticated>
  /** The principal of a user in a tenant (from a JWT): their membership's role, optionally narrowed by scopes. */
  readonly userPrincipal: (userId: string, tenantId: string | undefined, scopes?: ReadonlyArray<string>) => Effect.Effect<Principal, Unauthenticated | InvalidRequest>
  readonly userinfo: (userId: string) => Effect.Effect<UserInfo, Unauthenticated>
  /** The user behind any bearer accepted for /oauth/userinfo (`svc_` or a JWT of ours). */
  readonly tokenUser: (token: string, context: IssuerContext) => Effect.Effect<string, Unauthenticated>

  /** Public signing keys (JWKS) for JWT access tokens. */
  readonly jwks: Effect.Effect<{ readonly keys: ReadonlyArray<Record<string, unknown>> }>
  /** Verifies a JWT of ours or of the configured identity provider; the user id it names. */
  readonly verifyJwt: (token: string, context: IssuerContext) => Effect.Effect<{ readonly userId: string; readonly scopes: ReadonlyArray<string> | undefined }, Unauthenticated>
}>()("erp/core/OAuth") {}
