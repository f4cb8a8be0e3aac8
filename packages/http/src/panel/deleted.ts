import { type AnyResource, can } from "@erp/core"
import { Effect } from "effect"
import { HttpRouter } from "effect/http"
import { pager, recordLabel, tenantResources, withQuery } from "./display.js"
import { type Kit, queryOf, resourceLabel, seeOther } from "./kit.js"
import { attributes, html } from "../html.js"
import { csrfField, type PanelContext, time } from "./layout.js"

/** Resources with soft delete the caller may read: where there is something to restore. */
export const restorable = (registry: ReadonlyArray<AnyResource>, ctx: PanelContext) =>
  tenantResources(registry).filter((resource) => resource.softDelete !== false && can(ctx.principal, resource.permission, "read", resource.adminOnly))

/** Deleted records per resource, searchable, each with a restore button: the engine's restore, which records `<resource>.restore`. */
export const makeDeleted = (kit: Kit) => {
  const list = kit.signedIn((ctx, request) =>
    Effect.gen(function* () {
      const { t } = ctx
      const query = queryOf(request)
      const choices = restorable(kit.registry, ctx)
      const resource = choices.find((item) => item.name === query.get("resource")) ?? choices[0]
      const search = query.get("search")?.trim() ?? ""
      const picker = html`
        <form method="get" action="${ctx.root}/deleted" class="card filters" role="search">
        <div><label for="resource">${t("Resource")}</label><select id="resource" name="resource">
        ${choices.map((item) => html`<option value="${item.name}"${attributes({ selected: item === resource })}>${resourceLabel(item)}</option>`)}</select></div>
        ${resource?.search && html`<div><label for="search">${t("Search")}</label><input type="search" id="search" name="search" value="${search}"></div>`}
        <div><button class="primary" type="submit">${t("Filter")}</button></div></form>`
      if (!resource) return kit.page(ctx, { title: t("Deleted records"), current: "deleted", body: html`<h1>${t("Deleted records")}</h1><p class="card muted">${t("None.")}</p>` })
      const params: Array<[string, string]> = [["with_deleted", "true"], ["deleted_at[is_not_null]", "true"], ["limit", "25"]]
      if (search && resource.search) params.push(["search", search])
      const cursor = query.get("cursor")
      if (cursor) params.push(["cursor", cursor])
      const page = yield* kit.engine.list(resource, ctx.principal, params).pipe(Effect.result)
      if (page._tag === "Failure") return kit.refusal(ctx, t("Deleted records"), page.failure.message, page.failure._tag === "Forbidden" ? 403 : 400)
      const mayRestore = can(ctx.principal, resource.permission, "update", resource.adminOnly)
      const rows = page.success.data.map((record) => html`
        <tr><td data-label="${t("Name")}"><a href="${ctx.root}/r/${resource.name}/${String(record.id)}">${recordLabel(record)}</a></td>
        <td data-label="${t("Deleted")}">${time(ctx, record.deleted_at as string)}</td><td class="actions">
        ${mayRestore && html`
          <form method="post" action="${ctx.root}/deleted/${resource.name}/${String(record.id)}/restore">${csrfField(ctx)}
          <button class="secondary" type="submit">${t("Restore")}<span hidden> ${recordLabel(record)}</span></button></form>`}
        </td></tr>`)
      const flash = query.get("restored") ? t("The record was restored.") : undefined
      const body = html`
        <h1>${t("Deleted records")}</h1>${picker}
        <section class="card">
        ${rows.length === 0
          ? html`<p class="muted">${t("No records.")}</p>`
          : html`
            <div class="table-wrap"><table class="stack" id="deleted"><thead><tr><th>${t("Name")}</th><th>${t("Deleted")}</th><th><span hidden>${t("Actions")}</span></th></tr></thead>
            <tbody>${rows}</tbody></table></div>`}
        ${pager(ctx, page.success, (next) => withQuery(`${ctx.root}/deleted`, { resource: resource.name, search, cursor: next }))}</section>`
      return kit.page(ctx, { title: t("Deleted records"), current: "deleted", body, flash })
    }))

  const restore = kit.posted((ctx) =>
    Effect.gen(function* () {
      const params = yield* HttpRouter.params
      const resource = restorable(kit.registry, ctx).find((item) => item.name === params.resource)
      if (!resource) return kit.refusal(ctx, ctx.t("Not found"), ctx.t("Not found"), 404)
      const restored = yield* kit.engine.restore(resource, ctx.principal, params.id ?? "").pipe(Effect.result)
      if (restored._tag === "Failure") {
        const error = restored.failure as { readonly _tag: string; readonly message: string }
        return kit.refusal(ctx, ctx.t("Restore"), error.message, error._tag === "NotFound" ? 404 : error._tag === "Forbidden" ? 403 : 422)
      }
      return seeOther(withQuery(`${ctx.root}/deleted`, { resource: resource.name, restored: "1" }))
    }))

  return { list, restore }
}
