import { Result } from "effect"
import type { Grants } from "../auth/principal.js"
import { ACTIONS, type Action } from "../auth/principal.js"
import { allResources } from "../resources/index.js"
import { REPORTS_PERMISSION } from "../reports/report.js"
import { type OAuthError, oauthError } from "./errors.js"

/**
 * Scopes map one to one to the granular permissions: `<resource>:<action>`,
 * e.g. `products:read`, `customers:update`. A token can never do more than the
 * user's role allows; the scopes narrow it further.
 */
export const allScopes = (): ReadonlyArray<string> => {
  // Only what can be done, per permission code (webhook endpoints govern their deliveries too): the read-only
  // catalogs have `read` alone; a read-only resource with actions also what they need.
  const actions = new Map<string, Set<Action>>()
  for (const resource of allResources) {
    const granted = actions.get(resource.permission) ?? actions.set(resource.permission, new Set<Action>(["read"])).get(resource.permission)!
    for (const action of ACTIONS) {
      if (resource.write || (resource.actions ?? []).some((declared) => declared.permission === action)) granted.add(action)
    }
  }
  actions.set(REPORTS_PERMISSION, new Set<Action>(["read"]))
  return [...actions].flatMap(([code, granted]) => ACTIONS.filter((action) => granted.has(action)).map((action) => `${code}:${action}`))
}

/** The scopes asked for, or every scope when none is asked (the user's role still bounds the token). */
export const parseScope = (scope: string | undefined): Result.Result<ReadonlyArray<string>, OAuthError> => {
  const known = new Set(allScopes())
  const asked = (scope ?? "").split(" ").filter((item) => item.length > 0)
  if (asked.length === 0) return Result.succeed([...known])
  const unknown = asked.filter((item) => !known.has(item))
  if (unknown.length > 0) return Result.fail(oauthError("invalid_scope", `Unknown scope ${unknown.join(", ")}; scopes look like products:read`))
  return Result.succeed([...new Set(asked)].sort())
}

export const grantsFromScopes = (scopes: ReadonlyArray<string>): Grants => {
  const grants = new Map<string, Set<Action>>()
  for (const scope of scopes) {
    const [resource, action] = scope.split(":")
    if (!(ACTIONS as ReadonlyArray<string>).includes(action)) continue
    const actions = grants.get(resource) ?? new Set<Action>()
    actions.add(action as Action)
    grants.set(resource, actions)
  }
  return grants
}

/** Human-readable lines for the consent page, grouped by resource. */
export const describeScopes = (scopes: ReadonlyArray<string>): ReadonlyArray<{ resource: string; actions: ReadonlyArray<string> }> =>
  [...grantsFromScopes(scopes)].map(([resource, actions]) => ({ resource, actions: ACTIONS.filter((action) => actions.has(action)) }))
