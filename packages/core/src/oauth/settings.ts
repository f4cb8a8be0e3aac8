import { Context, Layer } from "effect"

/** A JWT issuer whose tokens also authenticate REST calls (verified with `jose`, algorithms pinned). */
export interface ExternalIdentityProvider {
  readonly issuer: string
  readonly audience: string
  readonly jwksUrl: string
  readonly algorithms: ReadonlyArray<string>
  /** The claim holding our user id (or the user's email, when it contains an @). */
  readonly userClaim: string
}

export interface OAuthSettings {
  /** Public base URL of this server (issuer); when unset, taken from each request's Host. */
  readonly publicUrl: string | undefined
  readonly dynamicRegistration: boolean
  /**
   * Take the caller's address for per-IP limits from the first X-Forwarded-For entry: only
   * behind a proxy that sets that header itself. Needed behind the fetch handler, which sees no socket.
   */
  readonly trustProxy: boolean
  readonly externalIdp: ExternalIdentityProvider | undefined
  readonly lifetimes: {
    readonly codeSeconds: number
    readonly accessSeconds: number
    readonly refreshSeconds: number
    readonly sessionSeconds: number
  }
}

export const DEFAULT_LIFETIMES: OAuthSettings["lifetimes"] = {
  codeSeconds: 300,
  accessSeconds: 3600,
  refreshSeconds: 30 * 24 * 3600,
  sessionSeconds: 8 * 3600
}

export class OAuthConfig extends Context.Tag("erp/core/OAuthConfig")<OAuthConfig, OAuthSettings>() {
  /** From the environment: ERP_PUBLIC_URL, ERP_DYNAMIC_REGISTRATION=false, ERP_JWT_ISSUER/AUDIENCE/JWKS_URL/ALGORITHMS/USER_CLAIM. */
  static fromEnv(overrides: Partial<OAuthSettings> = {}): OAuthSettings {
    const env = process.env
    const external = env.ERP_JWT_ISSUER && env.ERP_JWT_AUDIENCE && env.ERP_JWT_JWKS_URL
      ? {
        issuer: env.ERP_JWT_ISSUER,
        audience: env.ERP_JWT_AUDIENCE,
        jwksUrl: env.ERP_JWT_JWKS_URL,
        algorithms: (env.ERP_JWT_ALGORITHMS ?? "RS256,ES256").split(",").map((item) => item.trim()).filter(Boolean),
        userClaim: env.ERP_JWT_USER_CLAIM ?? "sub"
      }
      : undefined
    return {
      publicUrl: env.ERP_PUBLIC_URL?.replace(/\/+$/, "") || undefined,
      dynamicRegistration: env.ERP_DYNAMIC_REGISTRATION !== "false",
      trustProxy: env.ERP_TRUST_PROXY === "true",
      externalIdp: external,
      lifetimes: DEFAULT_LIFETIMES,
      ...overrides
    }
  }

  static layer = (overrides: Partial<OAuthSettings> = {}) => Layer.succeed(OAuthConfig, OAuthConfig.fromEnv(overrides))
}

/**
 * The MCP server's resource identifier (RFC 8707): the spec serves MCP at `POST /`,
 * so it is the server's own base URL. A trailing slash names the same resource.
 */
export const mcpResource = (issuer: string) => issuer.replace(/\/+$/, "")

export const sameResource = (left: string | null | undefined, right: string | null | undefined) =>
  left != null && right != null && left.replace(/\/+$/, "") === right.replace(/\/+$/, "")
