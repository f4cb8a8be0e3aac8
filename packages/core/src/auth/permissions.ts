import { Result } from "effect"
import { ACTIONS, type Action } from "./principal.js"
import { type InvalidRequest, invalid } from "../errors.js"
import { allResources } from "../resources/index.js"
import { REPORTS_PERMISSION } from "../reports/report.js"

/**
 * Every `resource_code` a permission can name: business resources, the change feed (`events`),
 * webhook endpoints (their deliveries included), the catalogs and the reports (`reports:read`).
 */
export const resourceCodes = (): ReadonlyArray<string> => [...new Set([...allResources.map((resource) => resource.permission), REPORTS_PERMISSION])]

export interface PermissionGrant {
  readonly resource_code: string
  readonly can_read: boolean
  readonly can_create: boolean
  readonly can_update: boolean
  readonly can_delete: boolean
}

/** Every action on every resource, present and future. */
export const ALL_PERMISSIONS: ReadonlyArray<PermissionGrant> = [
  { resource_code: "*", can_read: true, can_create: true, can_update: true, can_delete: true }
]

/**
 * Parses `resource:action` specs (`products:read`, `customers:*`, `*:read`) into
 * one grant per resource. Unknown resources or actions are refused.
 */
export const parsePermissionSpecs = (specs: ReadonlyArray<string>): Result.Result<ReadonlyArray<PermissionGrant>, InvalidRequest> => {
  const codes = resourceCodes()
  const grants = new Map<string, Set<Action>>()
  for (const spec of specs) {
    const [resource, action, extra] = spec.split(":")
    if (!resource || !action || extra !== undefined) {
      return Result.fail(invalid(`Permission "${spec}" must look like resource:action, e.g. products:read`))
    }
    if (resource !== "*" && !codes.includes(resource)) {
      return Result.fail(invalid(`Unknown resource "${resource}" in permission "${spec}". Resources: ${codes.join(", ")}`))
    }
    if (action !== "*" && !(ACTIONS as ReadonlyArray<string>).includes(action)) {
      return Result.fail(invalid(`Unknown action "${action}" in permission "${spec}". Actions: ${ACTIONS.join(", ")}, *`))
    }
    const actions = grants.get(resource) ?? new Set<Action>()
    for (const granted of action === "*" ? ACTIONS : [action as Action]) actions.add(granted)
    grants.set(resource, actions)
  }
  return Result.succeed(
    [...grants].map(([resource_code, actions]) => ({
      resource_code,
      can_read: actions.has("read"),
      can_create: actions.has("create"),
      can_update: actions.has("update"),
      can_delete: actions.has("delete")
    }))
  )
}
