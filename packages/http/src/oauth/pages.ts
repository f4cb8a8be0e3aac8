import { describeScopes, type TenantMembership } from "@erp/core"
import { html } from "../html.js"
import { hiddenFields, page } from "./layout.js"

/** The authorization request as it travels through the sign-in and consent forms. */
export interface AuthorizeParams {
  readonly response_type?: string
  readonly client_id?: string
  readonly redirect_uri?: string
  readonly scope?: string
  readonly state?: string
  readonly code_challenge?: string
  readonly code_challenge_method?: string
  readonly resource?: string
}

export const AUTHORIZE_PARAMS = [
  "response_type",
  "client_id",
  "redirect_uri",
  "scope",
  "state",
  "code_challenge",
  "code_challenge_method",
  "resource"
] as const

export const errorPage = (title: string, message: string) =>
  page(title, html`
    <h1>${title}</h1><p class="error">${message}</p>
    <p class="muted">Go back to the application and try again, or tell its developer.</p>`)

export const signInPage = (input: { readonly action: string; readonly clientName: string; readonly params: AuthorizeParams; readonly csrf: string; readonly email?: string; readonly error?: string }) =>
  page("Sign in", html`
    <h1>Sign in to continue to ${input.clientName}</h1>
    ${input.error && html`<p class="error" role="alert">${input.error}</p>`}
    <form method="post" action="${input.action}">
    ${hiddenFields({ ...input.params, action: "sign_in", csrf: input.csrf })}
    <label for="email">Email</label><input id="email" name="email" type="email" autocomplete="username" required value="${input.email ?? ""}">
    <label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>
    <button class="primary" type="submit">Sign in</button></form>`)

export const consentPage = (input: {
  /** Where the form posts: `/oauth/authorize` under the public path. */
  readonly action: string
  readonly clientName: string
  readonly userEmail: string
  readonly params: AuthorizeParams
  readonly scopes: ReadonlyArray<string>
  readonly tenants: ReadonlyArray<TenantMembership>
  /** The grant acts in every company listed (the MCP resource), or in the one chosen here. */
  readonly everyCompany: boolean
  readonly csrf: string
}) => {
  const companyLine = (tenant: TenantMembership) => html`<li><strong>${tenant.tenant_name}</strong> <span class="muted">as ${tenant.role}</span></li>`
  const tenantField = input.everyCompany
    ? html`
      <p>It will act in ${input.tenants.length === 1 ? "your company" : `each of your ${input.tenants.length} companies`}, within your role in each; it names the company on each request:</p>
      <ul id="companies">${input.tenants.map(companyLine)}</ul>`
    : input.tenants.length === 1
    ? html`
      <p>Company: <strong>${input.tenants[0].tenant_name}</strong> <span class="muted">as ${input.tenants[0].role}</span></p>
      ${hiddenFields({ tenant_id: input.tenants[0].tenant_id })}
      <p class="muted">It will act in this company only.</p>`
    : html`
      <label for="tenant_id">Company</label><select id="tenant_id" name="tenant_id" required>
      ${input.tenants.map((tenant) => html`<option value="${tenant.tenant_id}">${tenant.tenant_name} (${tenant.role})</option>`)}
      </select><p class="muted">It will act in the company you choose only.</p>`
  const scopeList = describeScopes(input.scopes).map((line) => html`<li><strong>${line.resource}</strong>: ${line.actions.join(", ")}</li>`)
  return page("Authorize access", html`
    <h1>${input.clientName} wants to access your account</h1>
    <p class="muted">Signed in as ${input.userEmail}.</p>
    <form method="post" action="${input.action}">
    ${hiddenFields({ ...input.params, action: "consent", csrf: input.csrf })}
    ${tenantField}
    <p>It asks to:</p><ul id="scopes">${scopeList}</ul>
    <p class="muted">It never gets more than your role in ${input.everyCompany ? "each" : "the"} company allows.</p>
    <button class="primary" type="submit" name="decision" value="allow">Allow</button>
    <button class="secondary" type="submit" name="decision" value="deny">Deny</button></form>`)
}
