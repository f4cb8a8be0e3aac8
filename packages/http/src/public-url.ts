import type { OAuthSettings } from "@erp/core"

/**
 * The public base URL of this server (the OAuth issuer): the configured one, or
 * the request's Host plus the base path when none is configured (development).
 * Behind a proxy, configure ERP_PUBLIC_URL: a Host header is the client's to choose.
 */
export const publicUrl = (config: OAuthSettings, request: { readonly headers: Readonly<Record<string, string | undefined>> }): string => {
  if (config.publicUrl) return config.publicUrl
  const host = request.headers.host ?? "localhost"
  const secure = request.headers["x-forwarded-proto"] === "https"
  return `${secure ? "https" : "http"}://${host}${config.basePath}`
}

/**
 * The path of the public base URL (`""` or `/erp`): the prefix of every path the
 * browser is sent to (form actions, redirects) and of the session cookie's path.
 */
export const publicPath = (config: OAuthSettings): string =>
  config.publicUrl ? new URL(config.publicUrl).pathname.replace(/\/+$/, "") : config.basePath

/** The metadata documents we serve, under `/.well-known/`. */
export const WELL_KNOWN_DOCUMENTS = ["oauth-authorization-server", "oauth-protected-resource"] as const
export type WellKnownDocument = (typeof WELL_KNOWN_DOCUMENTS)[number]

/**
 * Where a client looks for a metadata document of `base` (RFC 8414 section 3, RFC 9728
 * section 3.1): `/.well-known/<document>` goes between the host and the base's path,
 * so `https://app.example.com/erp` has `https://app.example.com/.well-known/<document>/erp`.
 */
export const wellKnownUrl = (base: string, document: WellKnownDocument): string => {
  const url = new URL(base)
  const path = url.pathname.replace(/\/+$/, "")
  return `${url.origin}/.well-known/${document}${path}`
}

/** The `WWW-Authenticate` challenge of every 401 from a protected resource (RFC 6750, RFC 9728 section 5.1). */
export const bearerChallenge = (base: string, error?: string): string =>
  `Bearer realm="erp"${error ? `, error="${error}"` : ""}, resource_metadata="${wellKnownUrl(base, "oauth-protected-resource")}"`

/**
 * The path and query the router sees for a request that arrived at the fetch handler, or
 * undefined when it is not the handler's: under the base path, the prefix is taken off;
 * the metadata documents at their RFC 8414/9728 locations (`/.well-known/<document>/erp`,
 * forwarded by the embedding app) pass as they are (their routes check the suffix).
 */
export const routedUrl = (basePath: string, url: string): string | undefined => {
  const query = url.indexOf("?")
  const pathname = query === -1 ? url : url.slice(0, query)
  const search = query === -1 ? "" : url.slice(query)
  if (basePath === "") return url
  if (WELL_KNOWN_DOCUMENTS.some((name) => pathname.startsWith(`/.well-known/${name}/`))) return url
  if (pathname === basePath || pathname.startsWith(`${basePath}/`)) return `${pathname.slice(basePath.length) || "/"}${search}`
  return undefined
}
