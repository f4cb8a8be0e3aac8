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
  readonly csrf: string
}) => {
  const tenantField = input.tenants.length === 1
    ? `<p>Company: <strong>${escapeHtml(input.tenants[0].tenant_name)}</strong></p>` + hiddenFields({ tenant_id: input.tenants[0].tenant_id })
    : `<label for="tenant_id">Company</label><select id="tenant_id" name="tenant_id" required>` +
      input.tenants.map((tenant) => `<option value="${escapeHtml(tenant.tenant_id)}">${escapeHtml(tenant.tenant_name)} (${escapeHtml(tenant.role)})</option>`).join("") +
      `</select>`
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
      `<p class="muted">It never gets more than your role in the company allows.</p>` +
      `<button class="primary" type="submit" name="decision" value="allow">Allow</button>` +
      `<button class="secondary" type="submit" name="decision" value="deny">Deny</button></form>`
  )
}
