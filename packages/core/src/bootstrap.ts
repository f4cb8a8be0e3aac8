import { Effect } from "effect"
import { ALL_PERMISSIONS } from "./auth/permissions.js"
import { Tenancy, type Tenant } from "./tenancy/tenancy.js"

export interface DemoSetup {
  readonly tenant: Tenant
  readonly email: string
  readonly token: string
}

/**
 * On a store without tenants: a demo tenant, its admin user, and an admin API key
 * whose token is returned once. Does nothing when any tenant exists.
 */
export const ensureDemoTenant = (options: { name?: string; countryCode?: string; email?: string } = {}) =>
  Effect.gen(function* () {
    const tenancy = yield* Tenancy
    if ((yield* tenancy.countTenants) > 0) return undefined
    const tenant = yield* tenancy.createTenant({ name: options.name ?? "Demo Company", countryCode: options.countryCode ?? "BR" })
    const email = options.email ?? "admin@demo.example"
    const user = yield* tenancy.getUser(email).pipe(Effect.catch(() => tenancy.createUser({ email, name: "Demo Admin" })))
    yield* tenancy.addMember({ tenantId: tenant.id, userId: user.id, role: "admin" })
    const { token } = yield* tenancy.createApiKey({
      tenantId: tenant.id,
      name: "Demo admin key",
      description: "Created on first start",
      permissions: ALL_PERMISSIONS,
      createdByUserId: user.id
    })
    return { tenant, email, token } satisfies DemoSetup
  }).pipe(Effect.orDie)

/** What a first start prints: the demo tenant, its admin and the key (shown only then), and a request to try. */
export const firstStartBanner = (url: string, demo: DemoSetup): string =>
  [
    "",
    "First start: created a demo tenant and an admin API key.",
    `  tenant: ${demo.tenant.name} (${demo.tenant.id})`,
    `  admin user: ${demo.email}`,
    "  API key (shown only now, store it safely):",
    `  ${demo.token}`,
    "",
    "Try it:",
    `  curl -s ${url}/products -H "Authorization: Bearer ${demo.token}"`,
    ""
  ].join("\n")
