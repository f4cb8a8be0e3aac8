import type { HttpServerRequest } from "@effect/platform"
import type { OAuthSettings } from "@erp/core"

/**
 * The public base URL of this server (the OAuth issuer): the configured one, or
 * taken from the request's Host when none is configured (development). Behind a
 * proxy, configure ERP_PUBLIC_URL: a Host header is the client's to choose.
 */
export const publicUrl = (config: OAuthSettings, request: HttpServerRequest.HttpServerRequest): string => {
  if (config.publicUrl) return config.publicUrl
  const host = request.headers.host ?? "localhost"
  const secure = request.headers["x-forwarded-proto"] === "https"
  return `${secure ? "https" : "http"}://${host}`
}
