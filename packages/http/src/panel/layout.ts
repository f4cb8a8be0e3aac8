import type { Principal, Tenant, TenantMembership, User } from "@erp/core"
import { attributes, html, type Html } from "../html.js"
import type { Locale, Translate } from "./i18n.js"

/** Everything a screen needs about who is looking and where the panel lives. */
export interface PanelContext {
  readonly locale: Locale
  readonly t: Translate
  /** `/panel` under the public path: every link and form action starts with it. */
  readonly root: string
  readonly user: User
  readonly tenant: Tenant
  readonly tenants: ReadonlyArray<TenantMembership>
  readonly principal: Principal
  readonly isAdmin: boolean
  /** The session's CSRF token, carried by every form. */
  readonly csrf: string
}

export const csrfField = (ctx: Pick<PanelContext, "csrf">) => html`<input type="hidden" name="csrf" value="${ctx.csrf}">`

/**
 * A timestamp in the tenant's time zone on the server; the panel's script rewrites it into
 * the browser's own zone (the user's), so without script the tenant's zone is shown and named.
 */
export const time = (ctx: Pick<PanelContext, "locale" | "tenant">, iso: string | null | undefined): Html => {
  if (!iso) return html``
  const date = new Date(iso)
  if (Number.isNaN(date.getTime())) return html`${iso}`
  const text = new Intl.DateTimeFormat(ctx.locale, { dateStyle: "medium", timeStyle: "short", timeZone: ctx.tenant.time_zone }).format(date)
  return html`<time datetime="${date.toISOString()}" data-local>${text}</time>`
}

export interface NavItem {
  readonly href: string
  readonly label: string
  readonly key: string
}

export interface Screen {
  readonly title: string
  /** Which navigation entry is the current page. */
  readonly current: string
  readonly body: Html
  readonly flash?: string | undefined
}

const head = (ctx: Pick<PanelContext, "root" | "locale">, title: string) => html`
  <!doctype html><html lang="${ctx.locale}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
  <title>${title} &middot; erp</title><link rel="icon" href="data:,"><link rel="stylesheet" href="${ctx.root}/assets/panel.css">
  <script src="${ctx.root}/assets/panel.js" defer></script></head>`

const navGroup = (heading: string, items: ReadonlyArray<NavItem>, current: string) =>
  items.length > 0 && html`
    <div class="group"><h2>${heading}</h2><ul>
    ${items.map((item) => html`<li><a href="${item.href}"${attributes({ "aria-current": item.key === current && "page" })}>${item.label}</a></li>`)}
    </ul></div>`

/** The signed-in page: top bar (company switch, sign out), navigation, the screen. */
export const layout = (ctx: PanelContext, nav: { readonly main: ReadonlyArray<NavItem>; readonly resources: ReadonlyArray<NavItem> }, screen: Screen): Html => {
  const { t } = ctx
  const companies = ctx.tenants.length > 1
    ? html`
      <form method="post" action="${ctx.root}/tenant">${csrfField(ctx)}
      <select id="tenant-switch" name="tenant_id" aria-label="${t("Company")}">
      ${ctx.tenants.map((item) => html`<option value="${item.tenant_id}"${attributes({ selected: item.tenant_id === ctx.tenant.id })}>${item.tenant_name}</option>`)}
      </select><button type="submit">${t("Switch")}</button></form>`
    : html`<span>${ctx.tenant.name}</span>`
  return html`
    ${head(ctx, screen.title)}
    <body><a class="skip" href="#content">${t("Skip to content")}</a>
    <header class="top"><a class="brand" href="${ctx.root}">erp <span>${t("Panel")}</span></a>
    <div class="who">${companies}<span class="small">${ctx.user.email} &middot; ${t(ctx.isAdmin ? "admin" : "member")}</span>
    <form method="post" action="${ctx.root}/sign-out">${csrfField(ctx)}<button type="submit">${t("Sign out")}</button></form></div></header>
    <div class="shell"><nav class="side" aria-label="${t("Main")}">
    ${navGroup(t("Panel"), nav.main, screen.current)}
    ${navGroup(t("Resources"), nav.resources, screen.current)}
    </nav><main id="content" tabindex="-1">
    ${screen.flash && html`<p class="flash" role="status">${screen.flash}</p>`}
    ${screen.body}
    </main></div></body></html>`
}

/** A page without the signed-in chrome: sign-in, refusals before a session exists. */
export const bare = (ctx: Pick<PanelContext, "root" | "locale">, title: string, body: Html): Html =>
  html`${head(ctx, title)}<body><main id="content" class="signin"><div class="card">${body}</div></main></body></html>`

/** Headers of every panel page: strict CSP (our own script and stylesheet only), no framing, no caching. */
export const PANEL_HEADERS = {
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  "x-frame-options": "DENY",
  "cache-control": "no-store",
  "referrer-policy": "no-referrer",
  "x-content-type-options": "nosniff"
} as const
