/** Why a client may not register `uri` as a redirect URI, or `undefined` when it may. */
export const redirectUriProblem = (uri: string): string | undefined => {
  try {
    const url = new URL(uri)
    if (url.hash) return "must not contain a fragment"
    if (url.protocol === "https:") return undefined
    if (url.protocol === "http:" && (url.hostname === "localhost" || url.hostname === "127.0.0.1" || url.hostname === "[::1]")) return undefined
    // Native apps may use private-use URI schemes (RFC 8252 section 7.1).
    if (/^[a-z][a-z0-9+.-]*\.[a-z0-9+.-]+:$/.test(url.protocol)) return undefined
    return "must be https (http only for localhost), or a private-use scheme such as com.example.app:"
  } catch {
    return "must be an absolute URI"
  }
}

/** RFC 6749 4.1.3: the token request's redirect_uri is required, and identical, when the authorization request included it. */
export const redirectUriMatches = (code: { readonly redirect_uri: string; readonly redirect_uri_given: boolean }, given: string | undefined) =>
  code.redirect_uri_given ? given === code.redirect_uri : given === undefined || given === code.redirect_uri
