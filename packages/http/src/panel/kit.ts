import { type AnyResource, can, OAuth, OAuthConfig, REPORTS_PERMISSION, ResourceEngine, Tenancy } from "@erp/core"
import { Effect, Option } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import { clearCookie, cookieOptions, makeCurrentUser, sameText, secureCookies, SESSION_COOKIE, setSessionCookie } from "../browser-session.js"
import { FormError, readForm } from "../oauth/form.js"
import { html, type Html, htmlResponse } from "../html.js"
import { publicPath } from "../public-url.js"
import { localeFrom, translator } from "./i18n.js"
import { bare, layout, type NavItem, PANEL_HEADERS, type PanelContext, type Screen } from "./layout.js"

/** Remembers the company chosen in the switcher (a hint only: membership is checked on every request). */
export const TENANT_COOKIE = "erp_panel_tenant"

/** A resource's plural name for people: `fiscal-rules-br` reads "Fiscal rules (BR)". */
export const resourceLabel = (resource: Pick<AnyResource, "name">) => {
  const words = resource.name.split("-")
  const country = words.length > 1 && words[words.length - 1].length === 2 ? ` (${words.pop()!.toUpperCase()})` : ""
  const text = words.join(" ")
  return text[0].toUpperCase() + text.slice(1) + country
}

export type Form = Readonly<Record<string, string | undefined>>
type Response = HttpServerResponse.HttpServerResponse

/** A panel page: `Html` only, with the panel's headers. */
export const panelResponse = (body: Html, status = 200) => htmlResponse(body, { status, headers: PANEL_HEADERS })

/** 303 after every successful post, so a reload never posts twice. */
export const seeOther = (location: string) =>
  HttpServerResponse.empty({ status: 303, headers: { location, "cache-control": "no-store" } })

const FAILURE_STATUS: Readonly<Record<string, number>> = { InvalidRequest: 400, Unauthenticated: 401, Forbidden: 403, NotFound: 404, Conflict: 409, Unprocessable: 422 }

/** The status the API answers an engine failure with. */
export const failureStatus = (tag: string): number => FAILURE_STATUS[tag] ?? 400

/** The panel's request plumbing: who is signed in, in which company, the CSRF check of every form, the page frame. */
export const makeKit = (registry: ReadonlyArray<AnyResource>) =>
  Effect.gen(function* () {
    const oauth = yield* OAuth
    const tenancy = yield* Tenancy
    const engine = yield* ResourceEngine
    const config = yield* OAuthConfig
    const currentUser = yield* makeCurrentUser
    const basePath = publicPath(config)
    const root = `${basePath}/panel`

    const localeOf = (request: HttpServerRequest.HttpServerRequest) => localeFrom(request.headers["accept-language"])
    const bareContext = (request: HttpServerRequest.HttpServerRequest) => {
      const locale = localeOf(request)
      return { root, locale, t: translator(locale) }
    }

    /** Screens the registry offers: readable by the caller, listed by kind. */
    const navOf = (ctx: PanelContext): { main: ReadonlyArray<NavItem>; resources: ReadonlyArray<NavItem> } => {
      const { t } = ctx
      const main: Array<NavItem> = [{ href: root, label: t("Overview"), key: "overview" }]
      if (ctx.isAdmin) main.push({ href: `${root}/keys`, label: t("API keys"), key: "keys" }, { href: `${root}/members`, label: t("Members"), key: "members" }, { href: `${root}/apps`, label: t("Authorized apps"), key: "apps" })
      if (can(ctx.principal, "events", "read")) main.push({ href: `${root}/events`, label: t("Event feed"), key: "events" })
      if (can(ctx.principal, REPORTS_PERMISSION, "read")) main.push({ href: `${root}/reports`, label: t("Reports"), key: "reports" })
      if (can(ctx.principal, "financial-transactions", "read")) main.push({ href: `${root}/reconciliation`, label: t("Bank reconciliation"), key: "reconciliation" })
      main.push({ href: `${root}/deleted`, label: t("Deleted records"), key: "deleted" })
      const resources = registry
        .filter((resource) => resource.storage !== "catalog" && resource.name !== "events" && !resource.nestedUnder)
        .filter((resource) => can(ctx.principal, resource.permission, "read", resource.adminOnly))
        .map((resource) => ({ href: `${root}/r/${resource.name}`, label: resourceLabel(resource), key: `r:${resource.name}` }))
      return { main, resources }
    }

    const page = (ctx: PanelContext, screen: Screen, status = 200) => panelResponse(layout(ctx, navOf(ctx), screen), status)

    const refusal = (ctx: PanelContext, title: string, message: string, status: number) =>
      page(ctx, { title, current: "", body: html`<h1>${title}</h1><p class="error" role="alert">${message}</p>` }, status)

    /** An engine failure as a refusal page, with the status the API answers it with. */
    const failure = (ctx: PanelContext, title: string, error: { readonly _tag: string; readonly message: string }) =>
      refusal(ctx, title, error.message, failureStatus(error._tag))

    const signInRedirect = (request: HttpServerRequest.HttpServerRequest) => {
      const next = request.url.startsWith("/panel") ? `${basePath}${request.url}` : root
      return seeOther(`${root}/sign-in?next=${encodeURIComponent(next)}`)
    }

    /**
     * Runs a screen for the signed-in user in their chosen company, or sends them to sign in.
     * A user signed in by the embedding app's hook gets a session of ours here (it carries the CSRF token).
     */
    const signedIn = <E, R>(handler: (ctx: PanelContext, request: HttpServerRequest.HttpServerRequest) => Effect.Effect<Response, E, R>) =>
      Effect.gen(function* () {
        const request = yield* HttpServerRequest.HttpServerRequest
        const found = yield* currentUser(request, request.cookies)
        if (Option.isNone(found)) return signInRedirect(request)
        let csrf = found.value.csrf
        let created: { token: string; csrf: string; maxAgeSeconds: number } | undefined
        if (csrf === undefined) {
          // Signed in by the embedding app: our session (made on the first page) only carries the CSRF token of its forms.
          const token = request.cookies[SESSION_COOKIE]
          const ours = token ? yield* oauth.findSession(token) : Option.none()
          if (Option.isSome(ours) && ours.value.userId === found.value.user.id) csrf = ours.value.csrf
          else {
            created = yield* oauth.createSession(found.value.user.id)
            csrf = created.csrf
          }
        }
        const { locale, t } = bareContext(request)
        const tenants = yield* oauth.memberships(found.value.user.id)
        if (tenants.length === 0) {
          return panelResponse(bare({ root, locale }, t("Panel"), html`<h1>${t("Panel")}</h1><p class="error" role="alert">${t("You belong to no company.")}</p>`), 403)
        }
        const wanted = request.cookies[TENANT_COOKIE]
        const membership = tenants.find((item) => item.tenant_id === wanted) ?? tenants[0]
        const principal = yield* oauth.userPrincipal(found.value.user.id, membership.tenant_id).pipe(Effect.orDie)
        const tenant = yield* tenancy.getTenant(membership.tenant_id).pipe(Effect.orDie)
        const ctx: PanelContext = { locale, t, root, user: found.value.user, tenant, tenants, principal, isAdmin: principal.role === "admin", csrf }
        const response = yield* handler(ctx, request)
        return created ? setSessionCookie(basePath, secureCookies(config, request), created)(response) : response
      })

    /** A form post of a signed-in user: read, CSRF-checked against the session, then handled. */
    const posted = <E, R>(handler: (ctx: PanelContext, form: Form, request: HttpServerRequest.HttpServerRequest) => Effect.Effect<Response, E, R>) =>
      signedIn((ctx, request) =>
        Effect.gen(function* () {
          const form = yield* readForm(request).pipe(Effect.result)
          if (form._tag === "Failure") return refusal(ctx, ctx.t("Request refused"), form.failure instanceof FormError ? form.failure.message : "", 400)
          const sent = form.success.csrf
          if (!sent || !sameText(sent, ctx.csrf)) {
            return refusal(ctx, ctx.t("Request refused"), ctx.t("The form did not come from this page (CSRF check failed)."), 403)
          }
          return yield* handler(ctx, form.success, request)
        }))

    /** Admin-only screens refuse members with 403 (the API's rule for admin-only resources). */
    const adminOnly = <E, R>(handler: (ctx: PanelContext, request: HttpServerRequest.HttpServerRequest) => Effect.Effect<Response, E, R>) =>
      (ctx: PanelContext, request: HttpServerRequest.HttpServerRequest) =>
        ctx.isAdmin ? handler(ctx, request) : Effect.succeed<Response>(refusal(ctx, ctx.t("Admins only"), ctx.t("This screen is for the company's admins."), 403))

    const remember = (request: HttpServerRequest.HttpServerRequest, tenantId: string) =>
      HttpServerResponse.setCookieUnsafe(TENANT_COOKIE, tenantId, cookieOptions(root, secureCookies(config, request), 30 * 24 * 3600))

    const forget = (request: HttpServerRequest.HttpServerRequest, name: string, path: string) => clearCookie(name, path, secureCookies(config, request))

    return { oauth, tenancy, engine, config, registry, basePath, root, bareContext, page, refusal, failure, signedIn, posted, adminOnly, remember, forget }
  })

export type Kit = Effect.Success<ReturnType<typeof makeKit>>

/** A query parameter, once. */
export const queryOf = (request: HttpServerRequest.HttpServerRequest) => new URL(request.url, "http://local").searchParams
