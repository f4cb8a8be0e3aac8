import { AUTHORIZE_LIMIT, RateLimiter } from "@erp/core"
import { Effect, Option, Result } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import { cookieOptions, CSRF_COOKIE, newFormToken, sameText, secureCookies, SESSION_COOKIE, sessionCookiePath, setSessionCookie } from "../browser-session.js"
import { readForm } from "../oauth/form.js"
import { clientLimitKey, rateLimitHeaders, tooManyRequests } from "../rate-limit.js"
import { checkPassword } from "../sign-in-attempts.js"
import type { Translate } from "./i18n.js"
import { type Form, type Kit, panelResponse, queryOf, seeOther } from "./kit.js"
import { bare } from "./layout.js"
import { attributes, html } from "../html.js"

/** C0 and C1 control characters: no path of ours has one, and CR or LF in a `Location` would split the header. */
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f-\u009f]/

/**
 * Where to go after signing in: only a path of the panel itself, never another site (an open
 * redirect), else the panel's first page. The path is taken as the URL parser reads it, so
 * what the `Location` header carries is percent-encoded ASCII and its dot segments resolved.
 */
export const safeNext = (root: string, next: string | undefined): string => {
  if (next === undefined || next.includes("//") || CONTROL_CHARACTER.test(next)) return root
  if (next !== root && !next.startsWith(`${root}/`) && !next.startsWith(`${root}?`)) return root
  const url = new URL(next, "http://panel.invalid")
  const path = url.pathname
  return url.origin === "http://panel.invalid" && (path === root || path.startsWith(`${root}/`)) ? `${path}${url.search}` : root
}

const signInForm = (input: { root: string; t: Translate; csrf: string; next: string; email?: string; error?: string }) => {
  const { t } = input
  return html`
    <h1>${t("Sign in to the panel")}</h1>
    ${input.error && html`<p class="error" role="alert" id="sign-in-error">${input.error}</p>`}
    <form method="post" action="${input.root}/sign-in">
    <input type="hidden" name="csrf" value="${input.csrf}"><input type="hidden" name="next" value="${input.next}">
    <label for="email">${t("Email")}</label><input id="email" name="email" type="email" autocomplete="username" required value="${input.email ?? ""}"
    ${attributes({ "aria-describedby": input.error ? "sign-in-error" : undefined })}>
    <label for="password">${t("Password")}</label><input id="password" name="password" type="password" autocomplete="current-password" required>
    <div class="form-actions"><button class="primary" type="submit">${t("Sign in")}</button></div></form>`
}

/** The panel's sign-in: the OAuth pages' accounts and session; the form's CSRF token rides in a cookie scoped to the panel. */
export const makeSignIn = (kit: Kit) =>
  Effect.gen(function* () {
    const limiter = yield* RateLimiter
    const show = (request: HttpServerRequest.HttpServerRequest, extra: { next?: string; email?: string; error?: string; status?: number } = {}) => {
      const { root, locale, t } = kit.bareContext(request)
      const csrf = newFormToken()
      const next = safeNext(root, extra.next)
      return panelResponse(bare({ root, locale }, t("Sign in"), signInForm({ ...extra, root, t, csrf, next })), extra.status ?? 200).pipe(
        HttpServerResponse.setCookieUnsafe(CSRF_COOKIE, csrf, cookieOptions(root, secureCookies(kit.config, request), 3600))
      )
    }

    const get = Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      return show(request, { next: queryOf(request).get("next") ?? undefined })
    })

    const post = Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      // The authorization page's limits, per address here and per account in `checkPassword`: password guessing is as slow here as there.
      const decision = yield* limiter.hit(`panel-sign-in:${clientLimitKey(request, kit.config.trustProxy)}`, AUTHORIZE_LIMIT)
      if (!decision.allowed) return tooManyRequests(decision, "Too many sign-in attempts from this address")
      const { t } = kit.bareContext(request)
      const read = yield* readForm(request).pipe(Effect.option)
      // A body no form of ours sends (a NUL, a field twice): the form again, and nothing tried.
      if (Option.isNone(read)) return show(request, { error: t("The form could not be read; please try again."), status: 400 })
      const form: Form = read.value
      const expected = request.cookies[CSRF_COOKIE]
      if (!expected || !form.csrf || !sameText(expected, form.csrf)) {
        return show(request, { next: form.next, error: t("Your form expired; please try again."), status: 403 })
      }
      const checked = yield* checkPassword({ limiter, oauth: kit.oauth }, form.email ?? "", form.password ?? "")
      if (Result.isFailure(checked)) return checked.failure
      const user = checked.success
      if (Option.isNone(user)) return show(request, { next: form.next, email: form.email ?? "", error: t("Email or password is not right."), status: 401 })
      const session = yield* kit.oauth.createSession(user.value.id)
      return seeOther(safeNext(kit.root, form.next)).pipe(
        setSessionCookie(kit.basePath, secureCookies(kit.config, request), session),
        kit.forget(request, CSRF_COOKIE, kit.root),
        HttpServerResponse.setHeaders(rateLimitHeaders(decision))
      )
    })

    /** Ends our session (an embedding app's own session is its to end). */
    const signOut = kit.posted((_ctx, _form, request) =>
      Effect.gen(function* () {
        const token = request.cookies[SESSION_COOKIE]
        if (token) yield* kit.oauth.endSession(token)
        return seeOther(`${kit.root}/sign-in`).pipe(kit.forget(request, SESSION_COOKIE, sessionCookiePath(kit.basePath)))
      }))

    /** The company switcher: only one of the user's own companies is remembered. */
    const switchTenant = kit.posted((ctx, form, request) =>
      Effect.succeed(
        ctx.tenants.some((item) => item.tenant_id === form.tenant_id)
          ? seeOther(ctx.root).pipe(kit.remember(request, form.tenant_id!))
          : seeOther(ctx.root)
      ))

    return { get, post, signOut, switchTenant }
  })
