import { type AnyResource, can, forbidden, type ResourceAction, sendTestEvent } from "@erp/core"
import { Effect } from "effect"
import { HttpRouter } from "effect/http"
import { pager, recordLabel, showValue, tenantResources, withQuery } from "./display.js"
import { formProblem, type FieldProblems } from "./forms.js"
import { failureStatus, type Form, type Kit, queryOf, resourceLabel, seeOther } from "./kit.js"
import { html, type Html } from "../html.js"
import { csrfField, type PanelContext } from "./layout.js"
import { bodyFromForm, createFields, formFields, problemsFromEngine, renderFields, updateFields, valuesOf } from "./record-form.js"

type Row = Readonly<Record<string, unknown>>
type TestEventServices = Effect.Services<ReturnType<typeof sendTestEvent>>

interface EngineFailure {
  readonly _tag: string
  readonly message: string
  readonly fields?: Readonly<Record<string, ReadonlyArray<string>>>
}


/** An action's answer holding a secret (`rotate-secret`): shown with the once-only warning. */
const carriesSecret = (answer: unknown) =>
  typeof answer === "object" && answer !== null && Object.keys(answer).some((name) => name === "secret" || name.endsWith("_secret"))

/** Columns a list shows: the naming field, then a few short scalar fields of the declaration. */
const listColumns = (resource: AnyResource, records: ReadonlyArray<Row>): ReadonlyArray<string> => {
  const sample = records[0] ?? {}
  const skip = new Set(["id", "tenant_id", "metadata", "created_at", "deleted_at", "updated_at", "description"])
  return Object.keys(sample)
    .filter((name) => !skip.has(name) && !resource.hidden.includes(name))
    .filter((name) => typeof sample[name] !== "object" || sample[name] === null)
    .slice(0, 4)
}

/**
 * Every tenant resource of the registry, listed, created, edited, deleted and acted on through
 * the engine, with forms derived from the declaration: no screen is written per resource.
 */
export const makeRecords = (kit: Kit) =>
  Effect.gen(function* () {
    const services = yield* Effect.context<TestEventServices>()
    const known = (name: string | undefined) => tenantResources(kit.registry).concat(kit.registry.filter((item) => item.nestedUnder)).find((item) => item.name === name)
    const writable = (resource: AnyResource) => resource.write !== undefined && resource.storage !== "catalog"

    const resourceFor = (ctx: PanelContext) =>
      Effect.map(HttpRouter.params, (params) => {
        const resource = known(params.resource)
        return resource && can(ctx.principal, resource.permission, "read", resource.adminOnly) ? { resource, params } : undefined
      })
    const notFound = (ctx: PanelContext) => kit.refusal(ctx, ctx.t("Not found"), ctx.t("Not found"), 404)
    const failure = kit.failure

    const list = kit.signedIn((ctx, request) =>
      Effect.gen(function* () {
        const found = yield* resourceFor(ctx)
        if (!found || found.resource.nestedUnder) return notFound(ctx)
        const { resource } = found
        const { t } = ctx
        const query = queryOf(request)
        const search = query.get("search")?.trim() ?? ""
        const params: Array<[string, string]> = [["limit", "25"]]
        if (search && resource.search) params.push(["search", search])
        const cursor = query.get("cursor")
        if (cursor) params.push(["cursor", cursor])
        const page = yield* kit.engine.list(resource, ctx.principal, params).pipe(Effect.result)
        if (page._tag === "Failure") return failure(ctx, resourceLabel(resource), page.failure)
        const records = page.success.data
        const columns = listColumns(resource, records)
        const rows = records.map((record) => html`
          <tr><td data-label="${t("Name")}"><a href="${ctx.root}/r/${resource.name}/${String(record.id)}">${recordLabel(record)}</a></td>
          ${columns.map((column) => html`<td data-label="${column}">${showValue(ctx, record[column])}</td>`)}</tr>`)
        const mayCreate = writable(resource) && can(ctx.principal, resource.permission, "create", resource.adminOnly)
        const flash = query.get("deleted") ? t("The record was deleted.") : undefined
        const body = html`
          <div class="bar"><h1>${resourceLabel(resource)}</h1>
          ${mayCreate && html`<a class="btn primary" href="${ctx.root}/r/${resource.name}/new">${t("New record")}</a>`}</div>
          <p class="muted">${resource.description}</p>
          ${resource.search && html`
            <form method="get" action="${ctx.root}/r/${resource.name}" class="card filters" role="search"><div><label for="search">${t("Search")}</label>
            <input type="search" id="search" name="search" value="${search}"></div><div><button class="primary" type="submit">${t("Search")}</button></div></form>`}
          <section class="card">
          ${records.length === 0
            ? html`<p class="muted">${t("No records.")}</p>`
            : html`
              <div class="table-wrap"><table class="stack" id="records"><thead><tr><th>${t("Name")}</th>${columns.map((column) => html`<th>${column}</th>`)}</tr></thead>
              <tbody>${rows}</tbody></table></div>`}
          ${pager(ctx, page.success, (next) => withQuery(`${ctx.root}/r/${resource.name}`, { search, cursor: next }))}</section>`
        return kit.page(ctx, { title: resourceLabel(resource), current: `r:${resource.name}`, body, flash })
      }))

    const editor = (ctx: PanelContext, resource: AnyResource, mode: { readonly id?: string }, values: Form, problems: FieldProblems) => {
      const fields = mode.id ? updateFields(resource) : createFields(resource)
      // The form posts where the record is shown, and Cancel goes back there.
      const target = mode.id ? `${ctx.root}/r/${resource.name}/${mode.id}` : `${ctx.root}/r/${resource.name}`
      return html`
        ${formProblem(ctx, problems)}${problems._form && html`<p class="error">${problems._form}</p>`}
        <form method="post" action="${target}" class="card" novalidate>${csrfField(ctx)}${renderFields(ctx, fields, values, problems)}
        <div class="form-actions"><button class="primary" type="submit">${ctx.t(mode.id ? "Save" : "Create")}</button>
        <a class="btn secondary" href="${target}">${ctx.t("Cancel")}</a></div></form>`
    }

    const newForm = kit.signedIn((ctx) =>
      Effect.gen(function* () {
        const found = yield* resourceFor(ctx)
        if (!found || !writable(found.resource)) return notFound(ctx)
        const body = html`<h1>${ctx.t("New record")} &middot; ${resourceLabel(found.resource)}</h1>${editor(ctx, found.resource, {}, {}, {})}`
        return kit.page(ctx, { title: resourceLabel(found.resource), current: `r:${found.resource.name}`, body })
      }))

    /** A refused write: the form again with what was typed and each reason next to its field. */
    const refusedWrite = (ctx: PanelContext, resource: AnyResource, id: string | undefined, form: Form, error: EngineFailure) => {
      const problems = problemsFromEngine(error.fields)
      const withMessage = Object.keys(problems).length === 0 ? { _form: error.message } : problems
      const status = error._tag === "Unprocessable" || error._tag === "InvalidRequest" ? 422 : failureStatus(error._tag)
      const body = html`<h1>${resourceLabel(resource)}</h1>${editor(ctx, resource, id ? { id } : {}, form, withMessage)}`
      return kit.page(ctx, { title: resourceLabel(resource), current: `r:${resource.name}`, body }, status)
    }

    const create = kit.posted((ctx, form) =>
      Effect.gen(function* () {
        const found = yield* resourceFor(ctx)
        if (!found || !writable(found.resource)) return notFound(ctx)
        const { resource } = found
        const { body, problems } = bodyFromForm(createFields(resource), form)
        if (Object.keys(problems).length > 0) {
          return kit.page(ctx, { title: resourceLabel(resource), current: `r:${resource.name}`, body: html`<h1>${resourceLabel(resource)}</h1>${editor(ctx, resource, {}, form, problems)}` }, 422)
        }
        const made = yield* kit.engine.create(resource, ctx.principal, body).pipe(Effect.result)
        if (made._tag === "Failure") return refusedWrite(ctx, resource, undefined, form, made.failure)
        const revealed = Object.entries(made.success).filter(([name, value]) => typeof value === "string" && resource.fields[name]?.revealed)
        // A secret answered by the create only (a webhook endpoint's) is shown here, once.
        if (revealed.length > 0) return shown(ctx, resource, made.success, revealed)
        return seeOther(`${ctx.root}/r/${resource.name}/${String(made.success.id)}?saved=1`)
      }))

    const shown = (ctx: PanelContext, resource: AnyResource, record: Row, secrets: ReadonlyArray<[string, unknown]>) =>
      kit.page(ctx, {
        title: resourceLabel(resource),
        current: `r:${resource.name}`,
        body: html`
          <h1>${recordLabel(record)}</h1><div class="card"><p class="alert" role="alert">${ctx.t("Copy this token now: it is shown only once.")}</p>
          ${secrets.map(([name, value], index) => html`
            <p><strong>${name}</strong></p><div class="token"><output id="secret-${index}" class="mono">${String(value)}</output>
            <button type="button" class="secondary" data-copy="secret-${index}" data-copied="${ctx.t("Copied")}" hidden>${ctx.t("Copy")}</button></div>`)}
          <div class="form-actions"><a class="btn primary" href="${ctx.root}/r/${resource.name}/${String(record.id)}">${ctx.t("Open")}</a></div></div>`
      }, 201)

    const actionForms = (ctx: PanelContext, resource: AnyResource, record: Row) =>
      (resource.actions ?? [])
        .filter((action) => action.method === "POST" && !action.raw && can(ctx.principal, resource.permission, action.permission, resource.adminOnly))
        .map((action) => html`
          <form method="post" action="${ctx.root}/r/${resource.name}/${String(record.id)}/actions/${action.name}" class="card">${csrfField(ctx)}
          <h3>${action.summary}</h3><p class="muted small">${action.description}</p>
          ${action.input && renderFields(ctx, formFields(action.input), {}, {})}
          <div class="form-actions"><button class="secondary" type="submit">${action.name}</button></div></form>`)

    /** Nested resources (an endpoint's deliveries), listed on their parent's page. */
    const nestedLists = (ctx: PanelContext, resource: AnyResource, record: Row) =>
      Effect.forEach(kit.registry.filter((item) => item.nestedUnder?.parent().name === resource.name && can(ctx.principal, item.permission, "read", item.adminOnly)), (nested) =>
        kit.engine.list(nested, ctx.principal, [[nested.nestedUnder!.key, String(record.id)], ["limit", "25"]]).pipe(
          Effect.map((page) => {
            const rows = page.data.map((item) => html`
              <tr><td><a href="${ctx.root}/r/${nested.name}/${String(item.id)}">${String(item.event_type ?? recordLabel(item))}</a></td>
              <td>${showValue(ctx, item.status)}</td><td>${showValue(ctx, item.attempt_count)}</td><td>${showValue(ctx, item.last_status_code)}</td>
              <td class="small">${showValue(ctx, item.last_error)}</td><td>${showValue(ctx, item.created_at)}</td></tr>`)
            return html`
              <section class="card"><h2>${resourceLabel(nested)}</h2>
              ${rows.length === 0
                ? html`<p class="muted">${ctx.t("No records.")}</p>`
                : html`
                  <div class="table-wrap"><table class="stack" id="${nested.name}"><thead><tr><th>${ctx.t("Type")}</th><th>status</th><th>attempt_count</th><th>last_status_code</th>
                  <th>last_error</th><th>${ctx.t("Created")}</th></tr></thead><tbody>${rows}</tbody></table></div>`}
              </section>`
          }),
          Effect.orElseSucceed(() => null)
        ))

    const show = kit.signedIn((ctx, request) =>
      Effect.gen(function* () {
        const found = yield* resourceFor(ctx)
        if (!found) return notFound(ctx)
        const { resource, params } = found
        const { t } = ctx
        const record = yield* kit.engine.get(resource, ctx.principal, params.id ?? "", resource.softDelete === false ? [] : [["with_deleted", "true"]]).pipe(Effect.result)
        if (record._tag === "Failure") return failure(ctx, resourceLabel(resource), record.failure)
        const row = record.success
        const visible = Object.entries(row).filter(([name]) => !resource.hidden.includes(name))
        const details = html`<dl class="record">${visible.map(([name, value]) => html`<dt>${name}</dt><dd>${showValue(ctx, value)}</dd>`)}</dl>`
        const live = row.deleted_at === null || row.deleted_at === undefined
        const mayUpdate = live && writable(resource) && can(ctx.principal, resource.permission, "update", resource.adminOnly)
        const mayDelete = live && writable(resource) && can(ctx.principal, resource.permission, "delete", resource.adminOnly)
        const query = queryOf(request)
        const flash = query.get("saved") ? t("The record was saved.") : query.get("done") ? t("The record was saved.") : undefined
        const nested: ReadonlyArray<Html | null> = live ? yield* nestedLists(ctx, resource, row) : []
        const testEvent = resource.name === "webhook-endpoints" && live && can(ctx.principal, resource.permission, "update") && html`
          <form method="post" action="${ctx.root}/r/${resource.name}/${String(row.id)}/test" class="card">${csrfField(ctx)}<h3>webhook.test</h3>
          <div class="form-actions"><button class="secondary" type="submit">Send test event</button></div></form>`
        const home = resource.nestedUnder ? resource.nestedUnder.parent() : resource
        const body = html`
          <div class="bar"><h1>${recordLabel(row)}</h1>
          ${mayDelete && html`<a class="btn danger" href="${ctx.root}/r/${resource.name}/${String(row.id)}/delete">${t("Delete")}</a>`}</div>
          <p class="muted"><a href="${ctx.root}/r/${home.name}">${resourceLabel(home)}</a>
          ${!live && html` &middot; <span class="badge revoked">${t("Deleted")}</span> <a href="${withQuery(`${ctx.root}/deleted`, { resource: resource.name })}">${t("Deleted records")}</a>`}</p>
          <section class="card" aria-labelledby="details-title"><h2 id="details-title">${t("Details")}</h2>${details}</section>
          ${nested}
          ${mayUpdate && html`<section aria-labelledby="edit-title"><h2 id="edit-title">${t("Edit")}</h2>${editor(ctx, resource, { id: String(row.id) }, valuesOf(updateFields(resource), row), {})}</section>`}
          ${live && [testEvent, actionForms(ctx, resource, row)]}`
        return kit.page(ctx, { title: recordLabel(row), current: `r:${resource.nestedUnder ? resource.nestedUnder.parent().name : resource.name}`, body, flash })
      }))

    const update = kit.posted((ctx, form) =>
      Effect.gen(function* () {
        const found = yield* resourceFor(ctx)
        if (!found || !writable(found.resource)) return notFound(ctx)
        const { resource, params } = found
        const id = params.id ?? ""
        const current = yield* kit.engine.get(resource, ctx.principal, id, []).pipe(Effect.result)
        if (current._tag === "Failure") return failure(ctx, resourceLabel(resource), current.failure)
        const { body, problems } = bodyFromForm(updateFields(resource), form, current.success)
        if (Object.keys(problems).length > 0) {
          return kit.page(ctx, { title: resourceLabel(resource), current: `r:${resource.name}`, body: html`<h1>${resourceLabel(resource)}</h1>${editor(ctx, resource, { id }, form, problems)}` }, 422)
        }
        const saved = yield* kit.engine.update(resource, ctx.principal, id, body).pipe(Effect.result)
        if (saved._tag === "Failure") return refusedWrite(ctx, resource, id, form, saved.failure)
        return seeOther(`${ctx.root}/r/${resource.name}/${id}?saved=1`)
      }))

    const confirmDelete = kit.signedIn((ctx) =>
      Effect.gen(function* () {
        const found = yield* resourceFor(ctx)
        if (!found || !writable(found.resource)) return notFound(ctx)
        const { resource, params } = found
        const record = yield* kit.engine.get(resource, ctx.principal, params.id ?? "", []).pipe(Effect.result)
        if (record._tag === "Failure") return failure(ctx, resourceLabel(resource), record.failure)
        const row = record.success
        const body = html`
          <h1>${ctx.t("Delete")}</h1><div class="card"><p><strong>${recordLabel(row)}</strong></p><p>${ctx.t("Delete this record?")}</p>
          <form method="post" action="${ctx.root}/r/${resource.name}/${String(row.id)}/delete">${csrfField(ctx)}<div class="form-actions">
          <button class="danger" type="submit">${ctx.t("Delete")}</button><a class="btn secondary" href="${ctx.root}/r/${resource.name}/${String(row.id)}">${ctx.t("Cancel")}</a></div></form></div>`
        return kit.page(ctx, { title: ctx.t("Delete"), current: `r:${resource.name}`, body })
      }))

    const remove = kit.posted((ctx) =>
      Effect.gen(function* () {
        const found = yield* resourceFor(ctx)
        if (!found || !writable(found.resource)) return notFound(ctx)
        const removed = yield* kit.engine.remove(found.resource, ctx.principal, found.params.id ?? "").pipe(Effect.result)
        if (removed._tag === "Failure") return failure(ctx, ctx.t("Delete"), removed.failure)
        return seeOther(`${ctx.root}/r/${found.resource.name}?deleted=1`)
      }))

    const runAction = kit.posted((ctx, form) =>
      Effect.gen(function* () {
        const found = yield* resourceFor(ctx)
        if (!found) return notFound(ctx)
        const { resource, params } = found
        const action: ResourceAction | undefined = resource.actions?.find((item) => item.name === params.action && item.method === "POST" && !item.raw)
        if (!action) return notFound(ctx)
        const fields = action.input ? formFields(action.input) : []
        const { body, problems } = bodyFromForm(fields, form)
        if (Object.keys(problems).length > 0) return kit.refusal(ctx, action.summary, Object.entries(problems).map(([name, reason]) => `${name} ${reason}`).join("; "), 422)
        const answer = yield* kit.engine.action(resource, action, ctx.principal, params.id ?? "", {}, action.input ? body : undefined).pipe(Effect.result)
        if (answer._tag === "Failure") return failure(ctx, action.summary, answer.failure)
        const back = `${ctx.root}/r/${resource.name}/${params.id}`
        return kit.page(ctx, {
          title: action.summary,
          current: `r:${resource.nestedUnder ? resource.nestedUnder.parent().name : resource.name}`,
          body: html`
            <h1>${action.summary}</h1><div class="card">
            ${answer.success !== undefined && html`
              ${carriesSecret(answer.success) && html`<p class="alert" role="alert">${ctx.t("Copy this token now: it is shown only once.")}</p>`}
              <pre id="action-result" class="mono">${JSON.stringify(answer.success, null, 2)}</pre>`}
            <div class="form-actions"><a class="btn primary" href="${back}">${ctx.t("Open")}</a></div></div>`
        })
      }))

    /** Signs and sends a `webhook.test` to the endpoint now, outside the delivery log, and shows the answer: an action on the endpoint (update). */
    const testEvent = kit.posted((ctx) =>
      Effect.gen(function* () {
        const params = yield* HttpRouter.params
        if (params.resource !== "webhook-endpoints" || !can(ctx.principal, "webhook-endpoints", "read")) return notFound(ctx)
        if (!can(ctx.principal, "webhook-endpoints", "update")) return failure(ctx, "webhook.test", forbidden(ctx.principal, "webhook-endpoints", "update"))
        const result = yield* sendTestEvent(ctx.tenant.id, params.id ?? "").pipe(Effect.provide(services), Effect.result)
        if (result._tag === "Failure") return failure(ctx, "webhook.test", result.failure)
        return kit.page(ctx, {
          title: "webhook.test",
          current: "r:webhook-endpoints",
          body: html`
            <h1>webhook.test</h1><div class="card"><pre id="test-result" class="mono">${JSON.stringify(result.success, null, 2)}</pre>
            <div class="form-actions"><a class="btn primary" href="${ctx.root}/r/webhook-endpoints/${params.id ?? ""}">${ctx.t("Open")}</a></div></div>`
        })
      }))

    return { list, newForm, create, show, update, confirmDelete, remove, runAction, testEvent }
  })
