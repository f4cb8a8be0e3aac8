import { type HttpServerRequest, HttpServerResponse } from "effect/http"
import { BASE62, OAuth, type OAuthSettings, randomText, Tenancy, type User } from "@erp/core"
import { Context, Effect, Option } from "effect"
import { timingSafeEqual } from "node:crypto"
import { publicUrl } from "./public-url.js"

/**
 * The browser session shared by the OAuth pages and the panel: one sign-in serves both.
 * The session row (token and its CSRF secret) lives in core's OAuth store; this module
 * only carries it in cookies and checks the forms that claim it.
 */
export const SESSION_COOKIE = "erp_session"
/** The sign-in form's CSRF token before any session exists (double-submit cookie, scoped to the form's path). */
export const CSRF_COOKIE = "erp_csrf"

/**
 * Lets an embedding app sign its users in with its own session: given the
 * request, it answers the user's id or email, or nothing to show our sign-in page.
 */
export class SignInHook extends Context.Service<
  SignInHook,
  (request: { readonly headers: Readonly<Record<string, string | undefined>>; readonly url: string }) => Promise<string | undefined>
>()("erp/http/SignInHook") {}

export const sameText = (left: string, right: string) => {
  const a = Buffer.from(left)
  const b = Buffer.from(right)
  return a.length === b.length && timingSafeEqual(a, b)
}

export const newFormToken = () => randomText(32, BASE62)

export const secureCookies = (config: OAuthSettings, request: HttpServerRequest.HttpServerRequest) => publicUrl(config, request).startsWith("https:")

/**
 * `SameSite=Lax`, HttpOnly, Secure behind https. Lax, not Strict: an application sends the
 * user to /oauth/authorize from its own site, and the session must ride along on that
 * top-level GET; every state-changing form carries the session's CSRF token besides.
 */
export const cookieOptions = (path: string, secure: boolean, maxAgeSeconds: number) =>
  ({ httpOnly: true, sameSite: "lax", path, secure, maxAge: `${maxAgeSeconds} seconds` }) as const

/** The session cookie covers the whole public path, so the OAuth pages and the panel share it. */
export const sessionCookiePath = (basePath: string) => `${basePath}/`

export const setSessionCookie = (basePath: string, secure: boolean, session: { readonly token: string; readonly maxAgeSeconds: number }) =>
  HttpServerResponse.setCookieUnsafe(SESSION_COOKIE, session.token, cookieOptions(sessionCookiePath(basePath), secure, session.maxAgeSeconds))

export const clearCookie = (name: string, path: string, secure: boolean) =>
  HttpServerResponse.setCookieUnsafe(name, "", { ...cookieOptions(path, secure, 0), expires: new Date(0) })

export interface SignedIn {
  readonly user: User
  /** The session's CSRF token; undefined when the embedding app's hook signed the user in (no session of ours yet). */
  readonly csrf: string | undefined
  readonly external: boolean
}

/**
 * Reads the signed-in user of a request: the embedding app's session first (the
 * `SignInHook`), then ours. Built once with the services, called per request.
 */
export const makeCurrentUser = Effect.gen(function* () {
  const oauth = yield* OAuth
  const tenancy = yield* Tenancy
  const hook = yield* Effect.serviceOption(SignInHook)
  return (request: HttpServerRequest.HttpServerRequest, cookies: Readonly<Record<string, string | undefined>>) =>
    Effect.gen(function* () {
      if (Option.isSome(hook)) {
        const reference = yield* Effect.promise(() => hook.value({ headers: request.headers, url: request.url }))
        if (reference) {
          const user = yield* tenancy.getUser(reference).pipe(Effect.option)
          if (Option.isSome(user)) return Option.some<SignedIn>({ user: user.value, csrf: undefined, external: true })
        }
      }
      const token = cookies[SESSION_COOKIE]
      if (!token) return Option.none<SignedIn>()
      const session = yield* oauth.findSession(token)
      if (Option.isNone(session)) return Option.none<SignedIn>()
      const user = yield* tenancy.getUser(session.value.userId).pipe(Effect.option)
      return Option.map(user, (found): SignedIn => ({ user: found, csrf: session.value.csrf, external: false }))
    })
})
