import { type AnyResource, can, events, type Page } from "@erp/core"
import { Effect } from "effect"
import { keyStatus } from "./keys.js"
import { type Kit, resourceLabel } from "./kit.js"
import { html, type Html } from "../html.js"
import { type PanelContext, time } from "./layout.js"
import { tenantResources } from "./display.js"
import type { PanelReports } from "./reports.js"

/** Keys expiring within this many days are shown on the overview. */
export const EXPIRY_WARNING_DAYS = 14
/** Counts stop here: one page of the engine's list, never a scan of a large table. */
const COUNT_LIMIT = 100

export const eventRows = (ctx: PanelContext, page: Page) =>
  (page.data as ReadonlyArray<Record<string, string>>).map((event) => html`
    <tr><td data-label="${ctx.t("When")}">${time(ctx, event.created_at)}</td><td data-label="${ctx.t("Type")}"><code>${event.type}</code></td>
    <td data-label="${ctx.t("Record")}"><a class="mono small" href="${ctx.root}/r/${event.resource}/${event.resource_id}">${event.resource_id}</a></td></tr>`)

export const eventTable = (ctx: PanelContext, page: Page, id: string) =>
  page.data.length === 0
    ? html`<p class="muted">${ctx.t("None.")}</p>`
    : html`
      <div class="table-wrap"><table class="stack" id="${id}"><thead><tr><th>${ctx.t("When")}</th><th>${ctx.t("Type")}</th><th>${ctx.t("Record")}</th></tr></thead>
      <tbody>${eventRows(ctx, page)}</tbody></table></div>`

/** The overview: what there is, what changed, what needs attention. */
export const makeOverview = (kit: Kit, reports: PanelReports) =>
  kit.signedIn((ctx) =>
    Effect.gen(function* () {
      const { t } = ctx
      const charts = yield* reports.overviewCards(ctx)
      const readable = tenantResources(kit.registry).filter((resource) => can(ctx.principal, resource.permission, "read", resource.adminOnly))
      const counts = yield* Effect.forEach(readable, (resource: AnyResource) =>
        kit.engine.list(resource, ctx.principal, [["limit", String(COUNT_LIMIT)]]).pipe(
          Effect.map((page) => ({ resource, text: page.pagination.has_next_page ? `${COUNT_LIMIT}+` : String(page.data.length) })),
          Effect.orElseSucceed(() => undefined)
        ))
      const countList = counts
        .filter((item) => item !== undefined)
        .map((item) => html`<li><a href="${ctx.root}/r/${item.resource.name}"><strong>${item.text}</strong><span>${resourceLabel(item.resource)}</span></a></li>`)
      const recent = yield* kit.engine.list(events, ctx.principal, [["limit", "10"], ["sort", "created_at:desc"]]).pipe(Effect.option)
      let attention: Html | undefined
      if (ctx.isAdmin) {
        const endpoints = kit.registry.find((resource) => resource.name === "webhook-endpoints")
        const failing = endpoints
          ? yield* kit.engine.list(endpoints, ctx.principal, [["limit", "100"]]).pipe(
            Effect.map((page) => page.data.filter((endpoint) => endpoint.failing_since !== null || endpoint.enabled === false)),
            Effect.orElseSucceed(() => [])
          )
          : []
        const keys = yield* kit.tenancy.listApiKeys(ctx.tenant.id).pipe(Effect.orElseSucceed(() => []))
        const soon = new Date(Date.now() + EXPIRY_WARNING_DAYS * 86_400_000).toISOString().slice(0, 10)
        const expiring = keys.filter((key) => keyStatus(key) === "active" && key.expires_at !== null && key.expires_at.slice(0, 10) <= soon)
        const failingItem = (endpoint: Readonly<Record<string, unknown>>) => html`
          <li><a href="${ctx.root}/r/webhook-endpoints/${String(endpoint.id)}">${String(endpoint.url)}</a> <span class="badge failing">${String(endpoint.disabled_reason ?? "failing")}</span>
          ${typeof endpoint.failing_since === "string" && html` <span class="muted small">${time(ctx, endpoint.failing_since)}</span>`}</li>`
        attention = html`
          <div class="grid">
          <section class="card" aria-labelledby="failing-title"><h2 id="failing-title">${t("Failing webhook endpoints")}</h2>
          ${failing.length === 0 ? html`<p class="muted">${t("None.")}</p>` : html`<ul id="failing">${failing.map(failingItem)}</ul>`}
          </section><section class="card" aria-labelledby="expiring-title"><h2 id="expiring-title">${t("Keys about to expire")}</h2>
          ${expiring.length === 0
            ? html`<p class="muted">${t("None.")}</p>`
            : html`<ul id="expiring">${expiring.map((key) => html`<li><a href="${ctx.root}/keys">${key.name}</a> <span class="muted small">${key.expires_at!.slice(0, 10)}</span></li>`)}</ul>`}
          </section></div>`
      }
      const body = html`
        <h1>${t("Overview")} &middot; ${ctx.tenant.name}</h1>
        ${charts}
        <section class="card" aria-labelledby="counts-title"><h2 id="counts-title">${t("Records")}</h2><ul class="counts" id="counts">${countList}</ul></section>
        ${attention}
        ${recent._tag === "Some" && html`
          <section class="card" aria-labelledby="recent-title"><h2 id="recent-title">${t("Recent events")}</h2>${eventTable(ctx, recent.value, "recent-events")}
          <p><a href="${ctx.root}/events">${t("Event feed")} &rarr;</a></p></section>`}`
      return kit.page(ctx, { title: t("Overview"), current: "overview", body })
    }))
