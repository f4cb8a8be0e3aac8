import { ALL_PERMISSIONS, type AnyResource, layerCore, type OAuthSettings, PasswordCost, type PermissionGrant, type ScryptCost, type StoreLocation, type TaxEngine, Tenancy, type TenantGateSettings, type WebhookSettingsShape } from "@erp/core"
import { layerNodeServer, SignInHook } from "@erp/http"
import { ConfigProvider, Effect, Layer, ManagedRuntime, Tracer } from "effect"
import { HttpServer } from "effect/http"
import { randomUUID } from "node:crypto"

export interface TestTenant {
  readonly id: string
  readonly name: string
  /** Token of an API key with every permission. */
  readonly token: string
}

export interface TestHostOptions {
  readonly oauth?: Partial<OAuthSettings>
  /** Turns per tenant in the store (the default: the store's). */
  readonly tenantGate?: Partial<TenantGateSettings>
  /** Serve these resources instead of the built-in registry (engine tests with fixtures). */
  readonly resources?: ReadonlyArray<AnyResource>
  /** A tax engine in place of the built-in one (an embedding app's). */
  readonly taxEngine?: Layer.Layer<TaxEngine>
  readonly signIn?: (request: { readonly headers: Readonly<Record<string, string | undefined>>; readonly url: string }) => Promise<string | undefined>
  /** MCP over HTTP: idle session lifetime. */
  readonly mcp?: { readonly sessionIdleSeconds?: number }
  /** Serve the panel (default true). */
  readonly panel?: boolean
  /** Sees every span the host opens (statements are `sql.execute` spans): tests count round trips with it. */
  readonly tracer?: Tracer.Tracer
  /** How long `close` waits for requests in flight before it ends the connections left. */
  readonly shutdownGraceMs?: number
  /** Webhook settings beyond the configured ones (`allowPrivate: true` for a receiver on loopback). */
  readonly webhooks?: Partial<WebhookSettingsShape>
  /** Where the host reads its settings (default: the environment). */
  readonly configProvider?: ConfigProvider.ConfigProvider
  /** The scrypt cost of new password hashes (default `TEST_PASSWORD_COST`; `PASSWORD_COST` for the tests of the production cost). */
  readonly passwordCost?: ScryptCost
}

/**
 * Passwords hashed at about a hundredth of the production cost: the suite makes users and signs
 * them in by the hundred, which at OWASP's cost would add minutes. `password-hashes.test.ts` checks the real one.
 */
export const TEST_PASSWORD_COST: ScryptCost = { N: 2 ** 10, r: 8, p: 1 }

type CoreServices = Layer.Success<ReturnType<typeof layerCore>>

/** A host started on a random port over `store`, with the core at hand to make tenants and keys. */
export const startTestHost = async (store: StoreLocation, options: TestHostOptions = {}) => {
  const core = layerCore(store, { ...(options.oauth ? { oauth: options.oauth } : {}), ...(options.taxEngine ? { taxEngine: options.taxEngine } : {}), ...(options.mcp ? { mcp: options.mcp } : {}), ...(options.tenantGate ? { tenantGate: options.tenantGate } : {}), ...(options.webhooks ? { webhooks: options.webhooks } : {}) }).pipe(
    Layer.provideMerge(options.signIn ? Layer.succeed(SignInHook, options.signIn) : Layer.empty),
    Layer.provideMerge(Layer.succeed(PasswordCost, options.passwordCost ?? TEST_PASSWORD_COST))
  )
  const runtime = ManagedRuntime.make(layerNodeServer({ port: 0, ...(options.resources ? { resources: options.resources } : {}), ...(options.panel === false ? { panel: false } : {}), ...(options.shutdownGraceMs !== undefined ? { shutdownGraceMs: options.shutdownGraceMs } : {}) }).pipe(
    Layer.provideMerge(core),
    Layer.provide(options.tracer ? Layer.succeed(Tracer.Tracer, options.tracer) : Layer.empty),
    Layer.provide(options.configProvider ? ConfigProvider.layer(options.configProvider) : Layer.empty)
  ))
  const address = await runtime.runPromise(Effect.map(HttpServer.HttpServer, (server) => server.address))
  if (address._tag === "UnixPathAddress") throw new Error("expected a TCP address")
  const url = `http://127.0.0.1:${address.port}`

  const TEST_RATE_LIMIT_PER_MINUTE = 1_000_000

  const run = <A, E>(effect: Effect.Effect<A, E, CoreServices>) => runtime.runPromise(effect)

  const createKey = (tenantId: string, permissions: ReadonlyArray<PermissionGrant>, options: { expiresAt?: string; name?: string; rateLimitPerMinute?: number } = {}) =>
    run(Effect.flatMap(Tenancy, (tenancy) =>
      tenancy.createApiKey({ tenantId, name: options.name ?? "test key", permissions, expiresAt: options.expiresAt, rateLimitPerMinute: options.rateLimitPerMinute })))

  const revokeKey = (keyId: string) => run(Effect.flatMap(Tenancy, (tenancy) => tenancy.revokeApiKey(keyId)))

  /**
   * Tests walk hundreds of pages as fast as the machine goes, which a real integration's
   * 100-a-second burst would refuse: their tenants get a high limit unless a test is about
   * the default one (`defaultRateLimit`). `rateLimitPerMinute` sets the first key's own limit.
   */
  const createTenant = async (countryCode = "BR", options: { timeZone?: string; defaultRateLimit?: boolean; rateLimitPerMinute?: number } = {}): Promise<TestTenant> => {
    const name = `Tenant ${randomUUID().slice(0, 8)}`
    const tenant = await run(Effect.flatMap(Tenancy, (tenancy) => tenancy.createTenant({ name, countryCode, timeZone: options.timeZone })))
    if (!options.defaultRateLimit) await run(Effect.flatMap(Tenancy, (tenancy) => tenancy.setRateLimit(tenant.id, TEST_RATE_LIMIT_PER_MINUTE)))
    const { token } = await createKey(tenant.id, ALL_PERMISSIONS, options.rateLimitPerMinute === undefined ? {} : { rateLimitPerMinute: options.rateLimitPerMinute })
    return { id: tenant.id, name, token }
  }

  const request = async (method: string, pathAndQuery: string, options: { token?: string; body?: unknown; headers?: Record<string, string> } = {}) => {
    const headers: Record<string, string> = { ...options.headers }
    if (options.token) headers.authorization = `Bearer ${options.token}`
    if (options.body !== undefined) headers["content-type"] = "application/json"
    const response = await fetch(url + pathAndQuery, {
      method,
      headers,
      ...(options.body !== undefined ? { body: typeof options.body === "string" ? options.body : JSON.stringify(options.body) } : {})
    })
    const text = await response.text()
    const body = text ? (JSON.parse(text) as any) : undefined
    return { status: response.status, headers: response.headers, body }
  }

  return { url, runtime, run, createTenant, createKey, revokeKey, request, close: () => runtime.dispose() }
}

export type TestHost = Awaited<ReturnType<typeof startTestHost>>
