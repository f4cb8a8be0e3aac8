import type { AnyResource, Member, Role } from "@erp/core"
import { Effect, Option } from "effect"
import { HttpRouter } from "effect/http"
import { fieldError, type FieldProblems, formProblem, invalidAttributes } from "./forms.js"
import { formOfGrants, grantsFromForm, permissionMatrix, permissionSummary } from "./keys.js"
import { type Form, type Kit, seeOther } from "./kit.js"
import { attributes, html } from "../html.js"
import { csrfField, type PanelContext, time } from "./layout.js"
import { withQuery } from "./display.js"

/** What a member can be granted: every resource a role can reach (admin-only ones come with the admin role alone). */
export const memberResources = (registry: ReadonlyArray<AnyResource>) => registry.filter((resource) => !resource.adminOnly && !resource.nestedUnder)

const roleOf = (value: string | undefined): Role | undefined => (value === "admin" || value === "member" ? value : undefined)

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

/** The invite form's own checks; the permission matrix counts for members only (admins can do everything). */
export const inviteProblems = (registry: ReadonlyArray<AnyResource>, form: Form): FieldProblems => {
  const problems: Record<string, string> = {}
  if (!EMAIL.test(form.email?.trim() ?? "")) problems.email = "must be an email address"
  const role = roleOf(form.role)
  if (!role) problems.role = "is required"
  if (role === "member" && grantsFromForm(registry, form, memberResources(registry)).length === 0) problems.permissions = "choose at least one permission"
  return problems
}

const roleField = (ctx: PanelContext, form: Form, problems: FieldProblems) => html`
  <label for="role">${ctx.t("Role")}</label><select id="role" name="role"${invalidAttributes(problems, "role", "role-hint")}>
  ${(["member", "admin"] as const).map((role) => html`<option value="${role}"${attributes({ selected: form.role === role })}>${ctx.t(role)}</option>`)}
  </select><p class="hint" id="role-hint">${ctx.t("Admins can do everything; members only what the permissions below allow.")}</p>${fieldError(ctx, problems, "role")}`

/** Members of the company: invite by email with a role and permissions, change a role, remove. Admin only. */
export const makeMembers = (kit: Kit) => {
  const rows = memberResources(kit.registry)
  const memberOf = (ctx: PanelContext, id: string | undefined) =>
    Effect.map(kit.tenancy.listMembers(ctx.tenant.id).pipe(Effect.orDie), (members) => Option.fromNullishOr(members.find((member) => member.id === id)))
  const notFound = (ctx: PanelContext) => kit.refusal(ctx, ctx.t("Not found"), ctx.t("Not found"), 404)
  const adminsOnly = (ctx: PanelContext) => kit.refusal(ctx, ctx.t("Admins only"), ctx.t("This screen is for the company's admins."), 403)

  const listScreen = (ctx: PanelContext, members: ReadonlyArray<Member>, form: Form, problems: FieldProblems) => {
    const { t } = ctx
    const body = members.map((member) => html`
      <tr><td data-label="${t("Email")}"><strong>${member.email}</strong><br><span class="muted small">${member.name}</span></td>
      <td data-label="${t("Role")}">${t(member.role)}</td>
      <td data-label="${t("Permissions")}" class="small mono">${member.role === "admin" ? "—" : permissionSummary(member.permissions)}</td>
      <td data-label="${t("Created")}">${time(ctx, member.created_at)}</td>
      <td class="actions"><a class="btn secondary" href="${ctx.root}/members/${member.id}">${t("Edit")}<span hidden> ${member.email}</span></a></td></tr>`)
    return html`
      <h1>${t("Members")}</h1>
      <div class="card table-wrap"><table class="stack" id="members"><thead><tr><th>${t("Email")}</th><th>${t("Role")}</th><th>${t("Permissions")}</th><th>${t("Created")}</th>
      <th><span hidden>${t("Actions")}</span></th></tr></thead><tbody>${body}</tbody></table></div>
      <section aria-labelledby="invite-title"><h2 id="invite-title">${t("Invite a member")}</h2>${formProblem(ctx, problems)}
      <form method="post" action="${ctx.root}/members" class="card" novalidate>${csrfField(ctx)}
      <label for="email">${t("Email")}</label><input type="email" id="email" name="email" value="${form.email ?? ""}"${invalidAttributes(problems, "email")}>${fieldError(ctx, problems, "email")}
      <label for="name">${t("Name")}</label><input type="text" id="name" name="name" value="${form.name ?? ""}">
      ${roleField(ctx, form, problems)}${permissionMatrix(ctx, rows, form, problems)}
      <div class="form-actions"><button class="primary" type="submit">${t("Invite")}</button></div></form></section>`
  }

  const editScreen = (ctx: PanelContext, member: Member, form: Form, problems: FieldProblems) => {
    const { t } = ctx
    return html`
      <h1>${member.email}</h1>${formProblem(ctx, problems)}
      <form method="post" action="${ctx.root}/members/${member.id}" class="card" novalidate>${csrfField(ctx)}
      ${roleField(ctx, form, problems)}${permissionMatrix(ctx, rows, form, problems)}
      <div class="form-actions"><button class="primary" type="submit">${t("Save")}</button><a class="btn secondary" href="${ctx.root}/members">${t("Cancel")}</a></div></form>
      <form method="post" action="${ctx.root}/members/${member.id}/remove" class="card">${csrfField(ctx)}<p>${t("Remove this member? They stop acting in the company at once.")}</p>
      <div class="form-actions"><button class="danger" type="submit">${t("Remove")}</button></div></form>`
  }

  const list = kit.signedIn(kit.adminOnly((ctx, request) =>
    Effect.gen(function* () {
      const members = yield* kit.tenancy.listMembers(ctx.tenant.id).pipe(Effect.orDie)
      const flash = new URL(request.url, "http://local").searchParams.get("done") ? ctx.t("The record was saved.") : undefined
      return kit.page(ctx, { title: ctx.t("Members"), current: "members", body: listScreen(ctx, members, { role: "member" }, {}), flash })
    })))

  const invite = kit.posted((ctx, form) =>
    Effect.gen(function* () {
      if (!ctx.isAdmin) return adminsOnly(ctx)
      const again = (problems: FieldProblems) =>
        Effect.map(kit.tenancy.listMembers(ctx.tenant.id).pipe(Effect.orDie), (members) =>
          kit.page(ctx, { title: ctx.t("Members"), current: "members", body: listScreen(ctx, members, form, problems) }, 422))
      const problems = inviteProblems(kit.registry, form)
      if (Object.keys(problems).length > 0) return yield* again(problems)
      const email = form.email!.trim()
      const role = roleOf(form.role)!
      // An invitation names a person by email: an existing user joins, anyone else gets an account (a password is set when they first sign in through the operator or the embedding app).
      const user = yield* kit.tenancy.getUser(email).pipe(
        Effect.catchTag("NotFound", () => kit.tenancy.createUser({ email, name: form.name?.trim() || email.split("@")[0] })),
        Effect.result
      )
      if (user._tag === "Failure") return yield* again({ email: user.failure.message })
      const added = yield* kit.tenancy.addMember({
        tenantId: ctx.tenant.id,
        userId: user.success.id,
        role,
        permissions: role === "admin" ? [] : grantsFromForm(kit.registry, form, rows)
      }).pipe(Effect.result)
      if (added._tag === "Failure") return yield* again({ email: added.failure._tag === "Conflict" ? "is already a member" : added.failure.message })
      return seeOther(withQuery(`${ctx.root}/members`, { done: "1" }))
    }))

  const edit = kit.signedIn(kit.adminOnly((ctx) =>
    Effect.gen(function* () {
      const params = yield* HttpRouter.params
      const member = yield* memberOf(ctx, params.id)
      if (Option.isNone(member)) return notFound(ctx)
      const form = { role: member.value.role, ...formOfGrants(member.value.permissions) }
      return kit.page(ctx, { title: member.value.email, current: "members", body: editScreen(ctx, member.value, form, {}) })
    })))

  const update = kit.posted((ctx, form) =>
    Effect.gen(function* () {
      if (!ctx.isAdmin) return adminsOnly(ctx)
      const params = yield* HttpRouter.params
      const member = yield* memberOf(ctx, params.id)
      if (Option.isNone(member)) return notFound(ctx)
      const role = roleOf(form.role)
      const problems: Record<string, string> = {}
      if (!role) problems.role = "is required"
      if (role === "member" && grantsFromForm(kit.registry, form, rows).length === 0) problems.permissions = "choose at least one permission"
      const again = (found: FieldProblems) => kit.page(ctx, { title: member.value.email, current: "members", body: editScreen(ctx, member.value, form, found) }, 422)
      if (Object.keys(problems).length > 0) return again(problems)
      const saved = yield* kit.tenancy.updateMember({ tenantId: ctx.tenant.id, membershipId: member.value.id, role: role!, permissions: grantsFromForm(kit.registry, form, rows) }).pipe(Effect.result)
      if (saved._tag === "Failure") return again({ role: saved.failure._tag === "Unprocessable" ? "the last admin cannot be demoted or removed" : saved.failure.message })
      return seeOther(withQuery(`${ctx.root}/members`, { done: "1" }))
    }))

  const remove = kit.posted((ctx) =>
    Effect.gen(function* () {
      if (!ctx.isAdmin) return adminsOnly(ctx)
      const params = yield* HttpRouter.params
      const member = yield* memberOf(ctx, params.id)
      if (Option.isNone(member)) return notFound(ctx)
      const removed = yield* kit.tenancy.removeMember(ctx.tenant.id, member.value.id).pipe(Effect.result)
      if (removed._tag === "Failure") {
        const form = { role: member.value.role, ...formOfGrants(member.value.permissions) }
        return kit.page(ctx, { title: member.value.email, current: "members", body: editScreen(ctx, member.value, form, { role: "the last admin cannot be demoted or removed" }) }, 422)
      }
      return seeOther(withQuery(`${ctx.root}/members`, { done: "1" }))
    }))

  return { list, invite, edit, update, remove }
}
