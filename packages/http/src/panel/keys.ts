import { ACTIONS, type Action, allResources, allScopes, type AnyResource, type ApiKey, type PermissionGrant } from "@erp/core"
import { Effect } from "effect"
import { HttpRouter } from "effect/http"
import { type Form, type Kit, seeOther } from "./kit.js"
import { attributes, html } from "../html.js"
import { csrfField, type PanelContext, time } from "./layout.js"
import { fieldError, invalidAttributes, type FieldProblems, formProblem } from "./forms.js"

export type KeyStatus = "active" | "expired" | "revoked"

/** A key's state as a person reads it; expiry is at 00:00 UTC of `expires_at` (the store's rule). */
export const keyStatus = (key: Pick<ApiKey, "revoked_at" | "expires_at">, now = new Date()): KeyStatus =>
  key.revoked_at !== null ? "revoked" : key.expires_at !== null && new Date(`${key.expires_at.slice(0, 10)}T00:00:00Z`) <= now ? "expired" : "active"

/** Rows of the permission matrix: what a key can be granted (no admin-only or panel-only resources: keys have no role and those have no route). */
export const grantableResources = (registry: ReadonlyArray<AnyResource>) =>
  registry.filter((resource) => !resource.adminOnly && !resource.panelOnly && !resource.nestedUnder)

const actionsOf = (resource: AnyResource): ReadonlyArray<Action> => (resource.storage === "catalog" || resource.name === "events" ? ["read"] : ACTIONS)

interface PermissionRow {
  readonly code: string
  readonly actions: ReadonlyArray<Action>
}

/**
 * The matrix's rows: the resources given, then each permission code that is no resource (the
 * reports), with the actions its OAuth scopes name.
 */
const permissionRows = (resources: ReadonlyArray<AnyResource>): ReadonlyArray<PermissionRow> => {
  const scopes = new Set(allScopes())
  const resourceCodes = new Set(allResources.map((resource) => resource.permission))
  const others = [...new Set([...scopes].map((scope) => scope.split(":")[0]))].filter((code) => !resourceCodes.has(code))
  return [
    ...resources.map((resource) => ({ code: resource.name, actions: actionsOf(resource) })),
    ...others.map((code) => ({ code, actions: ACTIONS.filter((action) => scopes.has(`${code}:${action}`)) }))
  ]
}

const fieldName = (resource: string, action: Action) => `perm.${resource}.${action}`

/** The matrix's ticked boxes as grants, one per resource. */
export const grantsFromForm = (registry: ReadonlyArray<AnyResource>, form: Form, rows = grantableResources(registry)): ReadonlyArray<PermissionGrant> =>
  ["*", ...permissionRows(rows).map((row) => row.code)].flatMap((code) => {
    const ticked = (action: Action) => form[fieldName(code, action)] !== undefined
    if (!ACTIONS.some(ticked)) return []
    return [{ resource_code: code, can_read: ticked("read"), can_create: ticked("create"), can_update: ticked("update"), can_delete: ticked("delete") }]
  })

const todayUtc = (now = new Date()) => now.toISOString().slice(0, 10)

/** The create form's own checks, before core's: the same words as the rest of the panel, next to the field. */
export const keyFormProblems = (registry: ReadonlyArray<AnyResource>, form: Form, now = new Date()): FieldProblems => {
  const problems: Record<string, string> = {}
  if (!form.name?.trim()) problems.name = "is required"
  if (grantsFromForm(registry, form).length === 0) problems.permissions = "choose at least one permission"
  const expiry = form.expires_at?.trim()
  if (expiry && (!/^\d{4}-\d{2}-\d{2}$/.test(expiry) || Number.isNaN(Date.parse(`${expiry}T00:00:00Z`)) || expiry <= todayUtc(now))) {
    problems.expires_at = "must be a future date (YYYY-MM-DD)"
  }
  return problems
}

const statusBadge = (ctx: PanelContext, status: KeyStatus) => html`<span class="badge ${status}">${ctx.t(status)}</span>`

export const permissionSummary = (permissions: ReadonlyArray<PermissionGrant>) =>
  permissions
    .map((grant) => `${grant.resource_code}:${ACTIONS.filter((action) => grant[`can_${action}`]).join(",")}`)
    .join(" ")

const listScreen = (ctx: PanelContext, keys: ReadonlyArray<ApiKey>) => {
  const { t } = ctx
  const rows = keys.map((key) => {
    const status = keyStatus(key)
    return html`
      <tr><td data-label="${t("Name")}"><strong>${key.name}</strong>
      ${key.description && html`<br><span class="muted small">${key.description}</span>`}
      </td><td data-label="${t("Prefix")}"><code>${key.prefix}</code></td>
      <td data-label="${t("Status")}">${statusBadge(ctx, status)}</td>
      <td data-label="${t("Permissions")}" class="small mono">${permissionSummary(key.permissions)}</td>
      <td data-label="${t("Last used")}">${key.last_used_at ? time(ctx, key.last_used_at) : t("Never")}</td>
      <td data-label="${t("Expires")}">${key.expires_at ? key.expires_at.slice(0, 10) : "—"}</td>
      <td class="actions">${status === "active" && html`<a class="btn secondary" href="${ctx.root}/keys/${key.id}/revoke">${t("Revoke")}<span hidden> ${key.name}</span></a>`}</td></tr>`
  })
  return html`
    <div class="bar"><h1>${t("API keys")}</h1><a class="btn primary" href="${ctx.root}/keys/new">${t("New key")}</a></div>
    ${keys.length === 0
      ? html`<p class="card muted">${t("None.")}</p>`
      : html`
        <div class="table-wrap card"><table class="stack" id="keys"><thead><tr><th>${t("Name")}</th><th>${t("Prefix")}</th><th>${t("Status")}</th>
        <th>${t("Permissions")}</th><th>${t("Last used")}</th><th>${t("Expires")}</th><th><span hidden>${t("Actions")}</span></th></tr></thead><tbody>${rows}</tbody></table></div>`}`
}

/** Form values of stored grants, to tick the matrix of an edit form. */
export const formOfGrants = (grants: ReadonlyArray<PermissionGrant>): Form =>
  Object.fromEntries(grants.flatMap((grant) => ACTIONS.filter((action) => grant[`can_${action}`]).map((action) => [fieldName(grant.resource_code, action), "on"])))

/** The resources × read/create/update/delete matrix, `*` (every resource) first. */
export const permissionMatrix = (ctx: PanelContext, rows: ReadonlyArray<AnyResource>, form: Form, problems: FieldProblems) => {
  const { t } = ctx
  const box = (code: string, label: string, action: Action, enabled: boolean) =>
    enabled
      ? html`
        <td><input type="checkbox" id="${fieldName(code, action)}" name="${fieldName(code, action)}" aria-label="${label}: ${t(action)}"
        ${attributes({ checked: form[fieldName(code, action)] !== undefined })}></td>`
      : html`<td></td>`
  const row = (code: string, label: string, actions: ReadonlyArray<Action>) =>
    html`<tr><td>${label}</td>${ACTIONS.map((action) => box(code, label, action, actions.includes(action)))}</tr>`
  return html`
    <fieldset id="permissions"${attributes({ "aria-describedby": problems.permissions ? "permissions-error" : undefined })}><legend>${t("Permissions")}</legend>
    ${fieldError(ctx, problems, "permissions")}
    <div class="table-wrap"><table class="matrix"><thead><tr><th>${t("Resource")}</th>${ACTIONS.map((action) => html`<th>${t(action)}</th>`)}</tr></thead>
    <tbody>${row("*", t("Every resource"), ACTIONS)}${permissionRows(rows).map((permission) => row(permission.code, permission.code, permission.actions))}</tbody></table></div></fieldset>`
}

const createScreen = (ctx: PanelContext, registry: ReadonlyArray<AnyResource>, form: Form, problems: FieldProblems) => {
  const { t } = ctx
  return html`
    <h1>${t("New key")}</h1>${formProblem(ctx, problems)}
    <form method="post" action="${ctx.root}/keys" class="card" novalidate>${csrfField(ctx)}
    <label for="name">${t("Name")}</label><input type="text" id="name" name="name" maxlength="200" value="${form.name ?? ""}"${invalidAttributes(problems, "name")}>
    ${fieldError(ctx, problems, "name")}
    <label for="description">${t("Description")}</label><input type="text" id="description" name="description" maxlength="1000" value="${form.description ?? ""}">
    <label for="expires_at">${t("Expiry date")}</label><input type="date" id="expires_at" name="expires_at" value="${form.expires_at ?? ""}"
    ${invalidAttributes(problems, "expires_at", "expires_at-hint")}>
    <p class="hint" id="expires_at-hint">${t("Optional. The key stops working at 00:00 UTC of this date.")}</p>${fieldError(ctx, problems, "expires_at")}
    ${permissionMatrix(ctx, grantableResources(registry), form, problems)}
    <div class="form-actions"><button class="primary" type="submit">${t("Create key")}</button><a class="btn secondary" href="${ctx.root}/keys">${t("Cancel")}</a></div></form>`
}

const createdScreen = (ctx: PanelContext, key: ApiKey, token: string) => {
  const { t } = ctx
  return html`
    <h1>${t("Your new key")}</h1><div class="card"><p><strong>${key.name}</strong></p>
    <p class="alert" role="alert">${t("Copy this token now: it is shown only once.")}</p>
    <div class="token"><output id="token" class="mono">${token}</output>
    <button type="button" class="secondary" data-copy="token" data-copied="${t("Copied")}" hidden>${t("Copy")}</button></div>
    <div class="form-actions"><a class="btn primary" href="${ctx.root}/keys">${t("Back to keys")}</a></div></div>`
}

const revokeScreen = (ctx: PanelContext, key: ApiKey) => {
  const { t } = ctx
  return html`
    <h1>${t("Revoke key")}</h1><div class="card"><p><strong>${key.name}</strong> <code>${key.prefix}</code></p>
    <p>${t("Revoke this key? Integrations using it stop working at once.")}</p>
    <form method="post" action="${ctx.root}/keys/${key.id}/revoke">${csrfField(ctx)}<div class="form-actions">
    <button class="danger" type="submit">${t("Revoke")}</button><a class="btn secondary" href="${ctx.root}/keys">${t("Cancel")}</a></div></form></div>`
}

/** The API keys screens: admin only, over core's key services (Tenancy), never SQL of their own. */
export const makeKeys = (kit: Kit) => {
  /** The tenant's own key by id: another tenant's key is as unknown as a missing one. */
  const tenantKey = (ctx: PanelContext, id: string | undefined) =>
    Effect.map(kit.tenancy.listApiKeys(ctx.tenant.id).pipe(Effect.orDie), (keys) => keys.find((key) => key.id === id))
  const keyId = Effect.map(HttpRouter.params, (params) => params.id)
  const notFound = (ctx: PanelContext) => kit.refusal(ctx, ctx.t("Not found"), ctx.t("Not found"), 404)

  const list = kit.signedIn(kit.adminOnly((ctx, request) =>
    Effect.gen(function* () {
      const keys = yield* kit.tenancy.listApiKeys(ctx.tenant.id).pipe(Effect.orDie)
      const flash = new URL(request.url, "http://local").searchParams.get("revoked") ? ctx.t("The key was revoked.") : undefined
      return kit.page(ctx, { title: ctx.t("API keys"), current: "keys", body: listScreen(ctx, [...keys].reverse()), flash })
    })))

  const form = kit.signedIn(kit.adminOnly((ctx) =>
    Effect.succeed(kit.page(ctx, { title: ctx.t("New key"), current: "keys", body: createScreen(ctx, kit.registry, {}, {}) }))))

  const create = kit.posted((ctx, form) =>
    Effect.gen(function* () {
      if (!ctx.isAdmin) return kit.refusal(ctx, ctx.t("Admins only"), ctx.t("This screen is for the company's admins."), 403)
      const problems = keyFormProblems(kit.registry, form)
      const again = (found: FieldProblems) => kit.page(ctx, { title: ctx.t("New key"), current: "keys", body: createScreen(ctx, kit.registry, form, found) }, 422)
      if (Object.keys(problems).length > 0) return again(problems)
      const made = yield* kit.tenancy.createApiKey({
        tenantId: ctx.tenant.id,
        name: form.name!.trim(),
        description: form.description?.trim() || undefined,
        permissions: grantsFromForm(kit.registry, form),
        expiresAt: form.expires_at?.trim() || undefined,
        createdByUserId: ctx.user.id
      }).pipe(Effect.result)
      if (made._tag === "Failure") return again({ name: made.failure.message })
      // Shown once, in this answer only: never stored in the clear, never in a URL.
      return (kit.page(ctx, { title: ctx.t("Your new key"), current: "keys", body: createdScreen(ctx, made.success.key, made.success.token) }, 201))
    }))

  const confirmRevoke = kit.signedIn(kit.adminOnly((ctx) =>
    Effect.gen(function* () {
      const key = yield* tenantKey(ctx, yield* keyId)
      return key ? kit.page(ctx, { title: ctx.t("Revoke key"), current: "keys", body: revokeScreen(ctx, key) }) : notFound(ctx)
    })))

  const revoke = kit.posted((ctx) =>
    Effect.gen(function* () {
      if (!ctx.isAdmin) return kit.refusal(ctx, ctx.t("Admins only"), ctx.t("This screen is for the company's admins."), 403)
      const key = yield* tenantKey(ctx, yield* keyId)
      if (!key) return notFound(ctx)
      if (key.revoked_at === null) yield* kit.tenancy.revokeApiKey(key.id).pipe(Effect.orDie)
      return seeOther(`${ctx.root}/keys?revoked=1`)
    }))

  return { list, form, create, confirmRevoke, revoke }
}
