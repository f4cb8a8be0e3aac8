import { describeScopes, type TenantMembership } from "@erp/core"
import { escapeHtml, hiddenFields, page } from "./html.js"

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
  page(title, `<h1>${escapeHtml(title)}</h1><p class="error">${escapeHtml(message)}</p>` +
    `<p class="muted">Go back to the application and try again, or tell its developer.</p>`)

export const signInPage = (input: { readonly action: string; readonly clientName: string; readonly params: AuthorizeParams; readonly csrf: string; readonly email?: string; readonly error?: string }) =>
  page(
    "Sign in",
    `<h1>Sign in to continue to ${escapeHtml(input.clientName)}</h1>` +
      (input.error ? `<p class="error" role="alert">${escapeHtml(input.error)}</p>` : "") +
      `<form method="post" action="${escapeHtml(input.action)}">` +
      hiddenFields({ ...input.params, action: "sign_in", csrf: input.csrf }) +
      `<label for="email">Email</label><input id="email" name="email" type="email" autocomplete="username" required value="${escapeHtml(input.email ?? "")}">` +
      `<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>` +
      `<button class="primary" type="submit">Sign in</button></form>`
  )

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
  const companyLine = (tenant: TenantMembership) =>
    `<li><strong>${escapeHtml(tenant.tenant_name)}</strong> <span class="muted">as ${escapeHtml(tenant.role)}</span></li>`
  const tenantField = input.everyCompany
    ? `<p>It will act in ${input.tenants.length === 1 ? "your company" : `each of your ${input.tenants.length} companies`}, ` +
      `within your role in each; it names the company on each request:</p><ul id="companies">${input.tenants.map(companyLine).join("")}</ul>`
    : input.tenants.length === 1
    ? `<p>Company: <strong>${escapeHtml(input.tenants[0].tenant_name)}</strong> <span class="muted">as ${escapeHtml(input.tenants[0].role)}</span></p>` +
      hiddenFields({ tenant_id: input.tenants[0].tenant_id }) +
      `<p class="muted">It will act in this company only.</p>`
    : `<label for="tenant_id">Company</label><select id="tenant_id" name="tenant_id" required>` +
      input.tenants.map((tenant) => `<option value="${escapeHtml(tenant.tenant_id)}">${escapeHtml(tenant.tenant_name)} (${escapeHtml(tenant.role)})</option>`).join("") +
      `</select><p class="muted">It will act in the company you choose only.</p>`
  const scopeList = describeScopes(input.scopes)
    .map((line) => `<li><strong>${escapeHtml(line.resource)}</strong>: ${escapeHtml(line.actions.join(", "))}</li>`)
    .join("")
  return page(
    "Authorize access",
    `<h1>${escapeHtml(input.clientName)} wants to access your account</h1>` +
      `<p class="muted">Signed in as ${escapeHtml(input.userEmail)}.</p>` +
      `<form method="post" action="${escapeHtml(input.action)}">` +
      hiddenFields({ ...input.params, action: "consent", csrf: input.csrf }) +
      tenantField +
      `<p>It asks to:</p><ul id="scopes">${scopeList}</ul>` +
      `<p class="muted">It never gets more than your role in ${input.everyCompany ? "each" : "the"} company allows.</p>` +
      `<button class="primary" type="submit" name="decision" value="allow">Allow</button>` +
      `<button class="secondary" type="submit" name="decision" value="deny">Deny</button></form>`
  )
}
