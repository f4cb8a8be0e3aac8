import { events } from "@erp/core"
import { Effect } from "effect"
import { pager, withQuery } from "./display.js"
import { type Kit, queryOf } from "./kit.js"
import { attributes, html } from "../html.js"
import { eventTable } from "./overview.js"

const EVENT_ACTIONS = ["create", "update", "delete", "restore"] as const

/**
 * The change feed, newest first, through the engine's list of `events` (its filters,
 * authorization and cursors): a member without `events:read` is refused as by the API.
 */
export const makeEventFeed = (kit: Kit) =>
  kit.signedIn((ctx, request) =>
    Effect.gen(function* () {
      const { t } = ctx
      const query = queryOf(request)
      const resource = query.get("resource") ?? ""
      const action = query.get("action") ?? ""
      const type = resource && action ? `${resource}.${action}` : ""
      const params: Array<[string, string]> = [["limit", "25"], ["sort", "created_at:desc"]]
      if (type) params.push(["type", type])
      else if (resource) params.push(["resource", resource])
      else if (action) params.push(["action", action])
      const cursor = query.get("cursor")
      if (cursor) params.push(["cursor", cursor])
      const page = yield* kit.engine.list(events, ctx.principal, params).pipe(Effect.result)
      if (page._tag === "Failure") return kit.refusal(ctx, t("Event feed"), page.failure.message, page.failure._tag === "Forbidden" ? 403 : 400)
      const option = (value: string, chosen: string, label = value) => html`<option value="${value}"${attributes({ selected: value === chosen })}>${label}</option>`
      const body = html`
        <h1>${t("Event feed")}</h1>
        <form method="get" action="${ctx.root}/events" class="card filters" role="search">
        <div><label for="resource">${t("Resource")}</label><select id="resource" name="resource">${option("", resource, t("Any"))}
        ${kit.registry.filter((item) => item.events).map((item) => option(item.name, resource))}</select></div>
        <div><label for="action">${t("Action")}</label><select id="action" name="action">${option("", action, t("Any"))}
        ${EVENT_ACTIONS.map((name) => option(name, action, t(name === "restore" ? "Restore" : name)))}</select></div>
        <div><button class="primary" type="submit">${t("Filter")}</button></div></form>
        <section class="card">${eventTable(ctx, page.success, "events")}
        ${pager(ctx, page.success, (next) => withQuery(`${ctx.root}/events`, { resource, action, cursor: next }))}
        <p class="muted small">${t("Times are shown in your time zone.")}</p></section>`
      return kit.page(ctx, { title: t("Event feed"), current: "events", body })
    }))
