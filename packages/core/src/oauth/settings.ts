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
  /**
   * Public base URL of this server, path included when it is served under one
   * (`https://app.example.com/erp`): the OAuth issuer and the base of every URL, form
   * action and cookie path it generates. When unset: each request's Host plus `basePath`.
   */
  readonly publicUrl: string | undefined
  /**
   * The path prefix requests arrive with when the fetch handler is mounted under one (`/erp`;
   * `createFetchHandler({ basePath })` sets it and takes it off before routing): part of every
   * generated URL when `publicUrl` is unset. `""` for none.
   */
  readonly basePath: string
  readonly dynamicRegistration: boolean
  /** Dynamic registrations one address may make a minute (`ERP_OAUTH_REGISTRATIONS_PER_MINUTE`, default 10): more behind a shared NAT. */
  readonly registrationsPerMinute: number
  /**
   * Take the caller's address for per-IP limits from the last X-Forwarded-For entry, the one
   * the proxy in front appended: only behind one proxy of yours that appends it. Needed behind
   * the fetch handler, which sees no socket.
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

const registrationsPerMinute = (text: string | undefined): number => {
  if (text === undefined || text.trim() === "") return 10
  const value = Number(text)
  if (!Number.isInteger(value) || value < 1) throw new InvalidSetting(`ERP_OAUTH_REGISTRATIONS_PER_MINUTE must be a whole number above 0, got "${text}"`)
  return value
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
    const settings: OAuthSettings = {
      publicUrl: env.ERP_PUBLIC_URL || undefined,
      basePath: "",
      dynamicRegistration: env.ERP_DYNAMIC_REGISTRATION !== "false",
      registrationsPerMinute: registrationsPerMinute(env.ERP_OAUTH_REGISTRATIONS_PER_MINUTE),
      trustProxy: env.ERP_TRUST_PROXY === "true",
      externalIdp: external,
      lifetimes: DEFAULT_LIFETIMES,
      ...overrides
    }
    return { ...settings, publicUrl: normalizePublicUrl(settings.publicUrl), basePath: normalizeBasePath(settings.basePath) }
  }

  static layer = (overrides: Partial<OAuthSettings> = {}) => Layer.succeed(OAuthConfig, OAuthConfig.fromEnv(overrides))
}

/** A configuration value the host cannot start with. */
export class InvalidSetting extends Error {
  readonly _tag = "InvalidSetting"
}

/** `erp`, `/erp/` and `/erp` all mean `/erp`; `/` and `""` mean none. */
export const normalizeBasePath = (value: string): string => {
  const trimmed = value.trim().replace(/\/+$/, "")
  if (trimmed === "") return ""
  const path = trimmed.startsWith("/") ? trimmed : `/${trimmed}`
  if (!/^(\/[A-Za-z0-9._~!$&'()*+,;=:@-]+)+$/.test(path)) {
    throw new InvalidSetting(`base path "${value}" is not a URL path such as /erp`)
  }
  return path
}

/** An absolute http(s) URL without query or fragment, without a trailing slash. */
export const normalizePublicUrl = (value: string | undefined): string | undefined => {
  if (value === undefined || value.trim() === "") return undefined
  let url: URL
  try {
    url = new URL(value.trim())
  } catch {
    throw new InvalidSetting(`public URL "${value}" is not an absolute URL such as https://erp.example.com`)
  }
  if ((url.protocol !== "http:" && url.protocol !== "https:") || url.search || url.hash) {
    throw new InvalidSetting(`public URL "${value}" must be an http(s) URL without query or fragment`)
  }
  return url.toString().replace(/\/+$/, "")
}

/**
 * The MCP server's resource identifier (RFC 8707): the spec serves MCP at `POST /`,
 * so it is the server's own base URL. A trailing slash names the same resource.
 */
export const mcpResource = (issuer: string) => issuer.replace(/\/+$/, "")

export const sameResource = (left: string | null | undefined, right: string | null | undefined) =>
  left != null && right != null && left.replace(/\/+$/, "") === right.replace(/\/+$/, "")
