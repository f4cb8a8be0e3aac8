import { Cause, Effect, Exit, type Layer, type ManagedRuntime } from "effect"
import { passwordProblem } from "./auth/passwords.js"
import { ALL_PERMISSIONS, type PermissionGrant, parsePermissionSpecs } from "./auth/permissions.js"
import { asOperator, type Principal, type Role } from "./auth/principal.js"
import { type DemoSetup, ensureDemoTenant } from "./bootstrap.js"
import type { AnyResource } from "./engine/resource.js"
import type { QueryParams } from "./engine/list-query.js"
import type { Page } from "./engine/page.js"
import { ResourceEngine } from "./engine/service.js"
import { invalid } from "./errors.js"
import { OAuth, type OAuthClient } from "./oauth/service.js"
import { allResources } from "./resources/index.js"
import type { layerCore } from "./store/layer.js"
import { type ApiKey, type Membership, Tenancy, type Tenant, type User } from "./tenancy/tenancy.js"

/** The services `layerCore` provides: what the admin facade runs against. */
export type CoreServices = Layer.Success<ReturnType<typeof layerCore>>

/**
 * The operator acting on a tenant's records: its admin, recorded in the event log as an
 * operator named `name` (`cli`, `embedding`).
 */
export const operatorPrincipal = (tenantId: string, name = "embedding") =>
  Effect.map(Effect.flatMap(Tenancy, (tenancy) => tenancy.getTenant(tenantId)), (tenant) => asOperator(tenant, name))

/** Which tenant a record operation acts on (as that tenant's admin). */
export interface TenantScope {
  readonly tenantId: string
}

/**
 * The permissions of a key: `"all"` (every action on every resource, present and future),
 * specs such as `products:read`, `customers:*`, `*:read`, or grant rows.
 */
export type PermissionsInput = "all" | ReadonlyArray<string> | ReadonlyArray<PermissionGrant>

/**
 * The operator's side of erp as Promises, for an embedding app that does not use Effect:
 * tenants, users and memberships, API keys, OAuth clients, and the records of every
 * resource. Failures reject with the core's tagged errors (`NotFound`, `InvalidRequest`,
 * `Unprocessable`, `Conflict`, …): `Error`s carrying `_tag`, `message` and, where there
 * is one, `code` and `fields`.
 */
export interface ErpAdmin {
  readonly tenants: {
    /** `timeZone`: an IANA name (`America/Sao_Paulo`); defaults to the country's main zone (UTC when unknown). */
    readonly create: (input: { readonly name: string; readonly countryCode: string; readonly timeZone?: string }) => Promise<Tenant>
    readonly list: () => Promise<ReadonlyArray<Tenant>>
    readonly get: (id: string) => Promise<Tenant>
    /** The tenant's "today" follows this zone from the next request on (payables read as overdue by it). */
    readonly setTimeZone: (id: string, timeZone: string) => Promise<Tenant>
    /** Requests a minute each of the tenant's credentials may send; `null` for the default (6,000). */
    readonly setRateLimit: (id: string, perMinute: number | null) => Promise<Tenant>
  }
  readonly users: {
    /** A user; with `password`, one who can sign in on the OAuth pages. */
    readonly create: (input: { readonly email: string; readonly name: string; readonly password?: string }) => Promise<User>
    /** By id or email. */
    readonly get: (reference: string) => Promise<User>
    /** Sets the sign-in password (10 characters or more) and ends the user's sessions. */
    readonly setPassword: (reference: string, password: string) => Promise<User>
  }
  readonly members: {
    /** Makes a user (id or email) a member of a tenant: `admin`, or `member` with `permissions`. */
    readonly add: (input: {
      readonly tenantId: string
      readonly user: string
      readonly role: Role
      readonly permissions?: PermissionsInput
    }) => Promise<Membership>
  }
  readonly keys: {
    /** An API key; its `token` is returned only here, never again. */
    readonly create: (input: {
      readonly tenantId: string
      readonly name: string
      readonly permissions: PermissionsInput
      readonly description?: string
      /** `YYYY-MM-DD`: the key stops working at 00:00 UTC of that date. */
      readonly expiresAt?: string
      /** Requests a minute for this key instead of the tenant's limit. */
      readonly rateLimitPerMinute?: number
    }) => Promise<{ readonly key: ApiKey; readonly token: string }>
    readonly list: (tenantId: string) => Promise<ReadonlyArray<ApiKey>>
    readonly revoke: (keyId: string) => Promise<ApiKey>
  }
  readonly oauthClients: {
    /** An OAuth client; a confidential one's `secret` is returned only here. `public: true` for PKCE-only apps. */
    readonly create: (input: {
      readonly name: string
      readonly redirectUris: ReadonlyArray<string>
      readonly public?: boolean
    }) => Promise<{ readonly client: OAuthClient; readonly secret: string | undefined }>
    readonly list: () => Promise<ReadonlyArray<OAuthClient>>
    /** Revokes the client and every token issued to it. */
    readonly revoke: (clientId: string) => Promise<OAuthClient>
  }
  /**
   * Records of any resource (`products`, `customers`, the catalogs), as the tenant's
   * admin, with the same rules and answers as the API: `query` takes the API's list
   * parameters (`{ limit: "10", "sale_price[gte]": "5", sort: "name:asc" }`).
   */
  readonly resources: {
    readonly list: (resource: string, scope: TenantScope & { readonly query?: QueryInput }) => Promise<Page>
    readonly get: (resource: string, id: string, scope: TenantScope & { readonly withDeleted?: boolean }) => Promise<unknown>
    readonly create: (resource: string, body: unknown, scope: TenantScope) => Promise<unknown>
    readonly update: (resource: string, id: string, changes: unknown, scope: TenantScope) => Promise<unknown>
    /** Soft delete: the record keeps a `deleted_at`. */
    readonly delete: (resource: string, id: string, scope: TenantScope) => Promise<void>
    /** The panel's restore: clears `deleted_at` and records `<resource>.restore` (the API has no route for it). */
    readonly restore: (resource: string, id: string, scope: TenantScope) => Promise<unknown>
    /**
     * Runs a declared action on a record (`rotate-secret` and `replay` of webhook-endpoints,
     * `retry` of webhook-deliveries, `cancel` of payables, …); `params` fills its path parameters.
     */
    readonly action: (resource: string, id: string, action: string, body: unknown, scope: TenantScope & { readonly params?: Readonly<Record<string, string>> }) => Promise<unknown>
  }
  /**
   * On a store without tenants: creates "Demo Company", its admin user and an API key
   * with every permission, and returns them (the token only here). Otherwise undefined.
   */
  readonly ensureDemoTenant: () => Promise<DemoSetup | undefined>
}

/** List parameters as an object (a value array repeats the parameter) or `URLSearchParams`. */
export type QueryInput = Readonly<Record<string, string | ReadonlyArray<string>>> | URLSearchParams

const queryParams = (query: QueryInput | undefined): QueryParams =>
  query === undefined
    ? []
    : query instanceof URLSearchParams
    ? [...query.entries()]
    : Object.entries(query).flatMap(([name, value]) => (typeof value === "string" ? [[name, value] as const] : value.map((item) => [name, item] as const)))

const grants = (permissions: PermissionsInput | undefined) =>
  permissions === undefined
    ? Effect.succeed([])
    : permissions === "all"
    ? Effect.succeed(ALL_PERMISSIONS)
    : permissions.every((item): item is string => typeof item === "string")
    ? Effect.fromResult(parsePermissionSpecs(permissions))
    : Effect.succeed(permissions as ReadonlyArray<PermissionGrant>)

const resourceNamed = (name: string): Effect.Effect<AnyResource, ReturnType<typeof invalid>> => {
  const resource = allResources.find((candidate) => candidate.name === name)
  return resource
    ? Effect.succeed(resource)
    : Effect.fail(invalid(`Unknown resource "${name}". Resources: ${allResources.map((candidate) => candidate.name).join(", ")}`, "UNKNOWN_RESOURCE"))
}

/** Runs an effect as a Promise that rejects with the typed error itself (or the defect), not a wrapper. */
const promiseRunner = <R>(runtime: ManagedRuntime.ManagedRuntime<R, unknown>) =>
  async <A, E>(effect: Effect.Effect<A, E, R>): Promise<A> => {
    const exit = await runtime.runPromiseExit(effect)
    if (Exit.isSuccess(exit)) return exit.value
    throw Cause.squash(exit.cause)
  }

/** The admin facade over a running core (the runtime `createFetchHandler` and `startServer` open). */
export const makeAdmin = (runtime: ManagedRuntime.ManagedRuntime<CoreServices, unknown>): ErpAdmin => {
  const run = promiseRunner(runtime)
  const tenancy = <A, E>(use: (service: Tenancy["Service"]) => Effect.Effect<A, E>) => run(Effect.flatMap(Tenancy, use))
  const oauth = <A, E>(use: (service: OAuth["Service"]) => Effect.Effect<A, E>) => run(Effect.flatMap(OAuth, use))
  /** Every record operation: the declaration by name, the engine, the tenant's admin. */
  const onRecords = <A, E>(name: string, scope: TenantScope, use: (engine: ResourceEngine["Service"], resource: AnyResource, principal: Principal) => Effect.Effect<A, E>) =>
    run(Effect.gen(function* () {
      const resource = yield* resourceNamed(name)
      const principal = yield* operatorPrincipal(scope.tenantId)
      const engine = yield* ResourceEngine
      return yield* use(engine, resource, principal)
    }))

  return {
    tenants: {
      create: (input) => tenancy((service) => service.createTenant(input)),
      setTimeZone: (id, timeZone) => tenancy((service) => service.setTimeZone(id, timeZone)),
      setRateLimit: (id, perMinute) => tenancy((service) => service.setRateLimit(id, perMinute)),
      list: () => tenancy((service) => service.listTenants),
      get: (id) => tenancy((service) => service.getTenant(id))
    },
    users: {
      create: ({ password, ...input }) =>
        run(Effect.gen(function* () {
          // Checked first, so a refused password leaves no user behind.
          const problem = password === undefined ? undefined : passwordProblem(password)
          if (problem) return yield* Effect.fail(invalid(`The password ${problem}`, "WEAK_PASSWORD"))
          const user = yield* Effect.flatMap(Tenancy, (service) => service.createUser(input))
          return password === undefined ? user : yield* Effect.flatMap(OAuth, (service) => service.setPassword(user.id, password))
        })),
      get: (reference) => tenancy((service) => service.getUser(reference)),
      setPassword: (reference, password) => oauth((service) => service.setPassword(reference, password))
    },
    members: {
      add: ({ user, permissions, ...input }) =>
        run(Effect.gen(function* () {
          const granted = yield* grants(permissions)
          return yield* Effect.flatMap(Tenancy, (service) => service.addMember({ ...input, userId: user, permissions: granted }))
        }))
    },
    keys: {
      create: ({ permissions, ...input }) =>
        run(Effect.gen(function* () {
          const granted = yield* grants(permissions)
          return yield* Effect.flatMap(Tenancy, (service) => service.createApiKey({ ...input, permissions: granted }))
        })),
      list: (tenantId) => tenancy((service) => service.listApiKeys(tenantId)),
      revoke: (keyId) => tenancy((service) => service.revokeApiKey(keyId))
    },
    oauthClients: {
      create: (input) =>
        oauth((service) =>
          service.createClient({ name: input.name, redirectUris: input.redirectUris, kind: input.public ? "public" : "confidential", registration: "operator" })),
      list: () => oauth((service) => service.listClients),
      revoke: (clientId) => oauth((service) => service.revokeClient(clientId))
    },
    resources: {
      list: (name, scope) => onRecords(name, scope, (engine, resource, principal) => engine.list(resource, principal, queryParams(scope.query))),
      get: (name, id, scope) =>
        onRecords(name, scope, (engine, resource, principal) => engine.get(resource, principal, id, scope.withDeleted ? [["with_deleted", "true"]] : [])),
      create: (name, body, scope) => onRecords(name, scope, (engine, resource, principal) => engine.create(resource, principal, body)),
      update: (name, id, changes, scope) => onRecords(name, scope, (engine, resource, principal) => engine.update(resource, principal, id, changes)),
      delete: (name, id, scope) => onRecords(name, scope, (engine, resource, principal) => engine.remove(resource, principal, id)),
      restore: (name, id, scope) => onRecords(name, scope, (engine, resource, principal) => engine.restore(resource, principal, id)),
      action: (name, id, actionName, body, scope) =>
        onRecords(name, scope, (engine, resource, principal) => {
          const declared = resource.actions?.find((candidate) => candidate.name === actionName)
          return declared
            ? engine.action(resource, declared, principal, id, scope.params ?? {}, body)
            : Effect.fail(invalid(`${name} has no action "${actionName}". Actions: ${(resource.actions ?? []).map((candidate) => candidate.name).join(", ") || "none"}`, "UNKNOWN_ACTION"))
        })
    },
    ensureDemoTenant: () => run(ensureDemoTenant())
  }
}
