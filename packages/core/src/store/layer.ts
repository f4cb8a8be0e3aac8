import * as SqlClient from "effect/sql/SqlClient"
import { Effect, Layer } from "effect"
import { Authenticator } from "../auth/authenticator.js"
import { CursorSecret } from "../engine/cursor.js"
import { ResourceEngine } from "../engine/service.js"
import { layerCatalogLookup } from "./catalog-lookup.js"
import { layerReportQueries } from "./report-queries.js"
import { layerMatchCandidates } from "./match-candidates.js"
import { Reports } from "../reports/service.js"
import { catalogsCurrent, seedCatalogsAndRecord } from "./catalog-seed.js"
import { layerStore, type StoreLocation } from "./database.js"
import { migrate } from "./migrate.js"
import { layerEventRetention } from "./event-retention.js"
import { layerResourceRepository } from "./resource-repository.js"
import { layerUnitsOfWork } from "./unit-of-work.js"
import { layerTenancy } from "./tenancy.js"
import { layerOAuth } from "./oauth.js"
import { layerRateLimiterSql } from "./rate-limiter.js"
import { layerIdempotencyKeysSql } from "./idempotency-keys.js"
import { layerCredentialRateLimiterSql } from "./credential-rate-limiter.js"
import { builtInTaxEngine } from "../tax/built-in.js"
import type { TaxEngine } from "../tax/engine.js"
import { OAuthConfig, type OAuthSettings } from "../oauth/settings.js"
import { SecretBox } from "../secrets/secret-box.js"
import { layerSecretBox } from "../secrets/secret-key.js"
import { layerSealedSecrets, SEALED_COLUMNS, sealContext } from "./sealed-secrets.js"
import { layerSigningKeys } from "./signing-keys.js"
import { randomBytes } from "node:crypto"
import { layerMcpSessionsSql } from "./mcp-sessions.js"
import { TenantGate, type TenantGateSettings } from "./tenant-gate.js"
import { allSettings, loadConfig } from "../config/load.js"
import { CORE_SETTINGS } from "../config/variables.js"
import { WebhookSettings, type WebhookSettingsShape } from "../webhooks/settings.js"

/** Migrations applied, and the catalogs loaded the first time the store is opened. */
export const layerMigrated = Layer.effectDiscard(
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* migrate
    // Loading the catalogs may rightly run longer than a request's statement timeout.
    if (!(yield* catalogsCurrent)) {
      yield* sql.withTransaction(Effect.andThen(sql`SET LOCAL statement_timeout = 0`, seedCatalogsAndRecord))
    }
  }).pipe(Effect.orDie)
)

/** The cursor HMAC key: made on the first start, kept sealed in `erp_settings`. */
export const layerCursorSecret = Layer.effect(
  CursorSecret,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const box = yield* SecretBox
    const context = sealContext(SEALED_COLUMNS.cursorSecret, "cursor_secret")
    yield* sql`INSERT INTO erp_settings (key, value) VALUES ('cursor_secret', ${box.seal(randomBytes(32).toString("base64"), context)})
      ON CONFLICT (key) DO NOTHING`.pipe(Effect.orDie)
    const rows = yield* sql<{ value: string }>`SELECT value FROM erp_settings WHERE key = 'cursor_secret'`.pipe(Effect.orDie)
    // Start-up opened every sealed value already (`sealStoredSecrets`), so this one opens.
    const key = yield* box.open(rows[0].value, context).pipe(Effect.orDie)
    return { key: Buffer.from(key, "base64") }
  })
)

/** Every core service over an open, migrated store. */
export const layerServices = (options: Pick<CoreOptions, "oauth" | "taxEngine" | "mcp" | "webhooks"> = {}) =>
  Layer.mergeAll(ResourceEngine.layer, Reports.layer, Authenticator.layer, layerEventRetention).pipe(
    Layer.provideMerge(options.taxEngine ?? builtInTaxEngine),
    Layer.provideMerge(layerOAuth),
    Layer.provideMerge(
      Layer.mergeAll(
        layerResourceRepository,
        layerUnitsOfWork,
        layerCursorSecret,
        layerCatalogLookup,
        layerReportQueries,
        layerMatchCandidates,
        layerTenancy,
        layerRateLimiterSql,
        layerIdempotencyKeysSql,
        layerCredentialRateLimiterSql,
        layerSigningKeys,
        layerMcpSessionsSql(options.mcp?.sessionIdleSeconds),
        OAuthConfig.layer(options.oauth),
        WebhookSettings.layer(options.webhooks)
      )
    ),
    // Secrets are sealed (or sealed again under a new key) before any service reads one.
    Layer.provideMerge(layerSealedSecrets),
    Layer.provideMerge(layerMigrated)
  )

/**
 * Every setting the core reads, read before anything opens: a value it cannot use stops the
 * start in one line, not after the store was opened and migrated.
 */
const layerSettingsChecked = Layer.effectDiscard(loadConfig(allSettings(CORE_SETTINGS.map((entry) => entry.config))))

/**
 * What an embedding app (or the CLI's flags) sets, winning over the configuration. The rest is
 * read through the `ConfigProvider` in context: the environment, unless the app provides its own
 * (`Layer.setConfigProvider`, or `configProvider` of `createFetchHandler`).
 */
export interface CoreOptions {
  /** OAuth settings beyond the configured ones (ERP_PUBLIC_URL, ERP_JWT_*, …). */
  readonly oauth?: Partial<OAuthSettings>
  /** The key sealing stored secrets (32 bytes, base64 or hex); default `ERP_SECRET_KEY`. */
  readonly secretKey?: string
  /** The key being rotated away from; default `ERP_SECRET_KEY_PREVIOUS`. */
  readonly previousSecretKey?: string
  /** The tax engine invoices use; the built-in one (fiscal rules, US state rates) unless an embedding app plugs in its own. */
  readonly taxEngine?: Layer.Layer<TaxEngine>
  /** MCP over HTTP: how long an unused session lives (default `ERP_MCP_SESSION_IDLE_SECONDS` or one hour). */
  readonly mcp?: { readonly sessionIdleSeconds?: number }
  /** Turns per tenant in the store, beyond the configured ones (ERP_TENANT_CONCURRENCY, ERP_TENANT_QUEUE_MS). */
  readonly tenantGate?: Partial<TenantGateSettings>
  /** Webhook settings beyond the configured ones (ERP_WEBHOOKS_ALLOW_PRIVATE, ERP_WEBHOOKS_LEASE_SECONDS). */
  readonly webhooks?: Partial<WebhookSettingsShape>
}

/**
 * The core over a store location: resolves the key that seals stored secrets (before the
 * store is opened, so a missing `ERP_SECRET_KEY` costs no connection), opens the store,
 * migrates it, and provides the services, the `SqlClient` and the `SecretBox`.
 */
export const layerCore = (location: StoreLocation, options: CoreOptions = {}) =>
  layerServices(options).pipe(
    // The embedded store runs one statement at a time: more turns per tenant would only queue there.
    Layer.provideMerge(TenantGate.layer({ defaultConcurrency: location.kind === "postgres" ? 4 : 1, oneSession: location.kind !== "postgres", ...options.tenantGate })),
    Layer.provideMerge(layerStore(location)),
    Layer.provideMerge(layerSecretBox(location, options)),
    Layer.provideMerge(layerSettingsChecked)
  )
