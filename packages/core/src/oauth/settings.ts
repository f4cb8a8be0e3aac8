import { Config, Context, Effect, Layer, Option } from "effect"
import { InvalidSetting, loadConfig } from "../config/load.js"
import { oauthSettings } from "../config/variables.js"

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
  /** Dynamic registrations one address may make a minute (`ERP_OAUTH_REGISTRATIONS_PER_MINUTE`): more behind a shared NAT. */
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

export const DEFAULT_LIFETIMES: OAuthSettings["lifetimes"] = {
  codeSeconds: 300,
  accessSeconds: 3600,
  refreshSeconds: 30 * 24 * 3600,
  sessionSeconds: 8 * 3600
}

const fromConfig = Config.all({
  publicUrl: oauthSettings.publicUrl.config,
  dynamicRegistration: oauthSettings.dynamicRegistration.config,
  registrationsPerMinute: oauthSettings.registrationsPerMinute.config,
  trustProxy: oauthSettings.trustProxy.config,
  issuer: oauthSettings.jwtIssuer.config,
  audience: oauthSettings.jwtAudience.config,
  jwksUrl: oauthSettings.jwtJwksUrl.config,
  algorithms: oauthSettings.jwtAlgorithms.config,
  userClaim: oauthSettings.jwtUserClaim.config
})

type Configured = Config.Success<typeof fromConfig>

/** The identity provider the three ERP_JWT_* settings name together; one or two of them alone is a mistake, not "none". */
const externalIdpOf = (configured: Configured): ExternalIdentityProvider | undefined => {
  const parts = [oauthSettings.jwtIssuer, oauthSettings.jwtAudience, oauthSettings.jwtJwksUrl]
  const values = [configured.issuer, configured.audience, configured.jwksUrl]
  const missing = parts.filter((_, index) => Option.isNone(values[index])).map((part) => part.name)
  if (missing.length === parts.length) return undefined
  if (missing.length > 0) {
    throw new InvalidSetting(`${parts.map((part) => part.name).join(", ")} are set together: ${missing.join(" and ")} ${missing.length > 1 ? "are" : "is"} not`)
  }
  return {
    issuer: Option.getOrThrow(configured.issuer),
    audience: Option.getOrThrow(configured.audience),
    jwksUrl: Option.getOrThrow(configured.jwksUrl),
    algorithms: configured.algorithms,
    userClaim: configured.userClaim
  }
}

/** The settings from the configuration (ERP_PUBLIC_URL, ERP_DYNAMIC_REGISTRATION, ERP_TRUST_PROXY, ERP_JWT_*, …), `overrides` winning. */
const settingsOf = (configured: Configured, overrides: Partial<OAuthSettings>): OAuthSettings => {
  const settings: OAuthSettings = {
    publicUrl: Option.getOrUndefined(configured.publicUrl),
    basePath: "",
    dynamicRegistration: configured.dynamicRegistration,
    registrationsPerMinute: configured.registrationsPerMinute,
    trustProxy: configured.trustProxy,
    externalIdp: "externalIdp" in overrides ? undefined : externalIdpOf(configured),
    lifetimes: DEFAULT_LIFETIMES,
    ...overrides
  }
  return { ...settings, publicUrl: normalizePublicUrl(settings.publicUrl), basePath: normalizeBasePath(settings.basePath) }
}

export class OAuthConfig extends Context.Service<OAuthConfig, OAuthSettings>()("erp/core/OAuthConfig") {
  /** Read from the `ConfigProvider` in context as the host starts; `overrides` (an embedding app's options, the CLI's flags) win. */
  static layer = (overrides: Partial<OAuthSettings> = {}) =>
    Layer.effect(
      OAuthConfig,
      Effect.flatMap(loadConfig(fromConfig), (configured) =>
        Effect.try({
          try: () => settingsOf(configured, overrides),
          catch: (error) => (error instanceof InvalidSetting ? error : new InvalidSetting(String(error)))
        }))
    )
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
