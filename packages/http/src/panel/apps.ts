import type { OAuthClient, OAuthGrant } from "@erp/core"
import { Effect } from "effect"
import { HttpRouter } from "effect/http"
import { withQuery } from "./display.js"
import { fieldError, type FieldProblems, formProblem, invalidAttributes } from "./forms.js"
import { type Form, type Kit, queryOf, seeOther } from "./kit.js"
import { attributes, html } from "../html.js"
import { csrfField, type PanelContext, time } from "./layout.js"

/** A page asking once more before something that cannot be undone; the form posts only after it. */
export const confirmScreen = (ctx: PanelContext, input: { title: string; subject: string; message: string; action: string; back: string; button: string }) => html`
  <h1>${input.title}</h1><div class="card"><p><strong>${input.subject}</strong></p><p>${input.message}</p>
  <form method="post" action="${input.action}">${csrfField(ctx)}<div class="form-actions">
  <button class="danger" type="submit">${input.button}</button><a class="btn secondary" href="${input.back}">${ctx.t("Cancel")}</a></div></form></div>`

const secretScreen = (ctx: PanelContext, client: OAuthClient, secret: string | undefined) => html`
  <h1>${client.name}</h1><div class="card"><dl class="record"><dt>client_id</dt><dd><code id="client-id">${client.client_id}</code></dd></dl>
  ${secret && html`
    <p class="alert" role="alert">${ctx.t("Copy this token now: it is shown only once.")}</p><div class="token"><output id="client-secret" class="mono">${secret}</output>
    <button type="button" class="secondary" data-copy="client-secret" data-copied="${ctx.t("Copied")}" hidden>${ctx.t("Copy")}</button></div>`}
  <div class="form-actions"><a class="btn primary" href="${ctx.root}/apps">${ctx.t("Back")}</a></div></div>`

/** Redirect URIs, one per line. */
const urisOf = (text: string | undefined) => (text ?? "").split(/\r?\n/).map((line) => line.trim()).filter(Boolean)

/**
 * Authorized apps (the consents acting in the company, each revocable) and the company's own
 * OAuth clients (create with the secret shown once, rotate the secret, revoke). Admin only.
 */
export const makeApps = (kit: Kit) => {
  const adminsOnly = (ctx: PanelContext) => kit.refusal(ctx, ctx.t("Admins only"), ctx.t("This screen is for the company's admins."), 403)
  const notFound = (ctx: PanelContext) => kit.refusal(ctx, ctx.t("Not found"), ctx.t("Not found"), 404)
  /** "Revoke this …?" with its form: a client or an authorization. */
  const confirmRevoke = (ctx: PanelContext, subject: string, message: string, action: string) =>
    kit.page(ctx, {
      title: ctx.t("Revoke"),
      current: "apps",
      body: confirmScreen(ctx, { title: ctx.t("Revoke"), subject, message, action, back: `${ctx.root}/apps`, button: ctx.t("Revoke") })
    })

  const screen = (ctx: PanelContext, grants: ReadonlyArray<OAuthGrant>, clients: ReadonlyArray<OAuthClient>, form: Form, problems: FieldProblems) => {
    const { t } = ctx
    const grantRows = grants.map((grant) => html`
      <tr><td data-label="${t("Application")}"><strong>${grant.client_name}</strong></td><td data-label="${t("User")}">${grant.user_email}</td>
      <td data-label="${t("Permissions")}" class="small mono">${grant.scope || "—"}${grant.every_company && html` <span class="muted">(${t("every company of the user")})</span>`}</td>
      <td data-label="${t("Last used")}">${time(ctx, grant.last_issued_at)}</td>
      <td class="actions"><a class="btn secondary" href="${ctx.root}/apps/grants/${grant.id}/revoke">${t("Revoke")}<span hidden> ${grant.client_name}</span></a></td></tr>`)
    const clientActions = (client: OAuthClient) => html`
      ${client.kind === "confidential" && html`
        <form method="post" action="${ctx.root}/apps/clients/${client.client_id}/rotate">${csrfField(ctx)}
        <button class="secondary" type="submit">${t("Rotate secret")}<span hidden> ${client.name}</span></button></form> `}
      <a class="btn secondary" href="${ctx.root}/apps/clients/${client.client_id}/revoke">${t("Revoke")}<span hidden> ${client.name}</span></a>`
    const clientRows = clients.map((client) => html`
      <tr><td data-label="${t("Name")}"><strong>${client.name}</strong><br><code class="small">${client.client_id}</code></td>
      <td data-label="${t("Type")}">${client.kind}</td><td data-label="redirect_uris" class="small">${client.redirect_uris.map((uri, index) => html`${index > 0 && html`<br>`}${uri}`)}</td>
      <td data-label="${t("Status")}"><span class="badge ${client.revoked_at ? "revoked" : "active"}">${t(client.revoked_at ? "revoked" : "active")}</span></td>
      <td class="actions">${!client.revoked_at && clientActions(client)}</td></tr>`)
    return html`
      <h1>${t("Authorized apps")}</h1>
      <section class="card"><p class="muted">${t("Applications people of this company allowed to act for them.")}</p>
      ${grants.length === 0
        ? html`<p class="muted">${t("None.")}</p>`
        : html`
          <div class="table-wrap"><table class="stack" id="grants"><thead><tr><th>${t("Application")}</th><th>${t("User")}</th><th>${t("Permissions")}</th><th>${t("Last used")}</th>
          <th><span hidden>${t("Actions")}</span></th></tr></thead><tbody>${grantRows}</tbody></table></div>`}
      </section>
      <h2>${t("OAuth clients")}</h2><section class="card">
      ${clients.length === 0
        ? html`<p class="muted">${t("None.")}</p>`
        : html`
          <div class="table-wrap"><table class="stack" id="clients"><thead><tr><th>${t("Name")}</th><th>${t("Type")}</th><th>redirect_uris</th><th>${t("Status")}</th>
          <th><span hidden>${t("Actions")}</span></th></tr></thead><tbody>${clientRows}</tbody></table></div>`}
      </section>
      <section aria-labelledby="new-client"><h2 id="new-client">${t("New OAuth client")}</h2>${formProblem(ctx, problems)}
      <form method="post" action="${ctx.root}/apps/clients" class="card" novalidate>${csrfField(ctx)}
      <label for="client-name">${t("Name")}</label><input type="text" id="client-name" name="name" value="${form.name ?? ""}"${invalidAttributes(problems, "name")}>${fieldError(ctx, problems, "name")}
      <label for="redirect_uris">redirect_uris</label>
      <textarea id="redirect_uris" name="redirect_uris" class="mono"${invalidAttributes(problems, "redirect_uris", "redirect_uris-hint")}>${form.redirect_uris ?? ""}</textarea>
      <p class="hint" id="redirect_uris-hint">${t("One per line.")}</p>${fieldError(ctx, problems, "redirect_uris")}
      <label for="kind">${t("Type")}</label><select id="kind" name="kind">
      ${(["confidential", "public"] as const).map((kind) => html`<option value="${kind}"${attributes({ selected: form.kind === kind })}>${kind}</option>`)}
      </select>
      <div class="form-actions"><button class="primary" type="submit">${t("Create")}</button></div></form></section>`
  }

  const load = (ctx: PanelContext) => Effect.all([kit.oauth.tenantGrants(ctx.tenant.id), kit.oauth.tenantClients(ctx.tenant.id)])
  const ownClient = (ctx: PanelContext, clientId: string | undefined) =>
    Effect.map(kit.oauth.tenantClients(ctx.tenant.id), (clients) => clients.find((client) => client.client_id === clientId && client.revoked_at === null))

  const list = kit.signedIn(kit.adminOnly((ctx, request) =>
    Effect.gen(function* () {
      const [grants, clients] = yield* load(ctx)
      const flash = queryOf(request).get("done") ? ctx.t("The record was saved.") : undefined
      return kit.page(ctx, { title: ctx.t("Authorized apps"), current: "apps", body: screen(ctx, grants, clients, { kind: "confidential" }, {}), flash })
    })))

  const createClient = kit.posted((ctx, form) =>
    Effect.gen(function* () {
      if (!ctx.isAdmin) return adminsOnly(ctx)
      const problems: Record<string, string> = {}
      if (!form.name?.trim()) problems.name = "is required"
      if (urisOf(form.redirect_uris).length === 0) problems.redirect_uris = "is required"
      const again = (found: FieldProblems) => Effect.map(load(ctx), ([grants, clients]) => kit.page(ctx, { title: ctx.t("Authorized apps"), current: "apps", body: screen(ctx, grants, clients, form, found) }, 422))
      if (Object.keys(problems).length > 0) return yield* again(problems)
      const made = yield* kit.oauth.createClient({
        name: form.name!.trim(),
        redirectUris: urisOf(form.redirect_uris),
        kind: form.kind === "public" ? "public" : "confidential",
        registration: "operator",
        tenantId: ctx.tenant.id
      }).pipe(Effect.result)
      if (made._tag === "Failure") return yield* again({ redirect_uris: made.failure.message })
      return kit.page(ctx, { title: made.success.client.name, current: "apps", body: secretScreen(ctx, made.success.client, made.success.secret) }, 201)
    }))

  const rotate = kit.posted((ctx) =>
    Effect.gen(function* () {
      if (!ctx.isAdmin) return adminsOnly(ctx)
      const params = yield* HttpRouter.params
      const rotated = yield* kit.oauth.rotateClientSecret(ctx.tenant.id, params.clientId ?? "").pipe(Effect.result)
      if (rotated._tag === "Failure") return rotated.failure._tag === "NotFound" ? notFound(ctx) : kit.refusal(ctx, ctx.t("Rotate secret"), rotated.failure.message, 422)
      return kit.page(ctx, { title: rotated.success.client.name, current: "apps", body: secretScreen(ctx, rotated.success.client, rotated.success.secret) })
    }))

  const confirmClient = kit.signedIn(kit.adminOnly((ctx) =>
    Effect.gen(function* () {
      const params = yield* HttpRouter.params
      const client = yield* ownClient(ctx, params.clientId)
      if (!client) return notFound(ctx)
      return confirmRevoke(ctx, client.name, ctx.t("Revoke this client? Every token issued to it stops working at once."), `${ctx.root}/apps/clients/${client.client_id}/revoke`)
    })))

  const revokeClient = kit.posted((ctx) =>
    Effect.gen(function* () {
      if (!ctx.isAdmin) return adminsOnly(ctx)
      const params = yield* HttpRouter.params
      const client = yield* ownClient(ctx, params.clientId)
      if (!client) return notFound(ctx)
      yield* kit.oauth.revokeClient(client.client_id).pipe(Effect.orDie)
      return seeOther(withQuery(`${ctx.root}/apps`, { done: "1" }))
    }))

  const confirmGrant = kit.signedIn(kit.adminOnly((ctx) =>
    Effect.gen(function* () {
      const params = yield* HttpRouter.params
      const grant = (yield* kit.oauth.tenantGrants(ctx.tenant.id)).find((item) => item.id === params.id)
      if (!grant) return notFound(ctx)
      return confirmRevoke(ctx, `${grant.client_name} · ${grant.user_email}`, ctx.t("Revoke this authorization? The application stops acting for this person at once."), `${ctx.root}/apps/grants/${grant.id}/revoke`)
    })))

  const revokeGrant = kit.posted((ctx) =>
    Effect.gen(function* () {
      if (!ctx.isAdmin) return adminsOnly(ctx)
      const params = yield* HttpRouter.params
      const revoked = yield* kit.oauth.revokeGrant(ctx.tenant.id, params.id ?? "").pipe(Effect.result)
      if (revoked._tag === "Failure") return notFound(ctx)
      return seeOther(withQuery(`${ctx.root}/apps`, { done: "1" }))
    }))

  return { list, createClient, rotate, confirmClient, revokeClient, confirmGrant, revokeGrant }
}
