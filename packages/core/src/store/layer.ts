import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Layer } from "effect"
import { Authenticator } from "../auth/authenticator.js"
import { CursorSecret } from "../engine/cursor.js"
import { ResourceEngine } from "../engine/service.js"
import { layerCatalogLookup } from "./catalog-lookup.js"
import { catalogsCurrent, seedCatalogsAndRecord } from "./catalog-seed.js"
import { layerStore, type StoreLocation } from "./database.js"
import { migrate } from "./migrate.js"
import { layerEventRetention } from "./event-retention.js"
import { layerResourceRepository } from "./resource-repository.js"
import { layerUnitsOfWork } from "./unit-of-work.js"
import { layerTenancy } from "./tenancy.js"
import { layerOAuth } from "./oauth.js"
import { layerRateLimiterSql } from "./rate-limiter.js"
import { OAuthConfig, type OAuthSettings } from "../oauth/settings.js"
import { TenantGate, type TenantGateSettings } from "./tenant-gate.js"

/** Migrations applied, and the catalogs loaded the first time the store is opened. */
export const layerMigrated = Layer.effectDiscard(
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* migrate
    // Loading the catalogs may rightly run longer than a request's statement timeout.
    if (!(yield* catalogsCurrent)) {
      yield* sql.withTransaction(Effect.zipRight(sql`SET LOCAL statement_timeout = 0`, seedCatalogsAndRecord))
    }
  }).pipe(Effect.orDie)
)

export const layerCursorSecret = Layer.effect(
  CursorSecret,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ value: string }>`SELECT value FROM erp_settings WHERE key = 'cursor_secret'`.pipe(Effect.orDie)
    return { key: Buffer.from(rows[0].value, "base64") }
  })
)

/** Every core service over an open, migrated store. */
export const layerServices = (oauth: Partial<OAuthSettings> = {}) =>
  Layer.mergeAll(ResourceEngine.layer, Authenticator.layer, layerEventRetention).pipe(
    Layer.provideMerge(layerOAuth),
    Layer.provideMerge(
      Layer.mergeAll(
        layerResourceRepository,
        layerUnitsOfWork,
        layerCursorSecret,
        layerCatalogLookup,
        layerTenancy,
        layerRateLimiterSql,
        OAuthConfig.layer(oauth)
      )
    ),
    Layer.provideMerge(layerMigrated)
  )

export interface CoreOptions {
  /** OAuth settings beyond those taken from the environment (ERP_PUBLIC_URL, ERP_JWT_*, …). */
  readonly oauth?: Partial<OAuthSettings>
  /** Turns per tenant in the store, beyond the environment's (ERP_TENANT_CONCURRENCY, ERP_TENANT_QUEUE_MS). */
  readonly tenantGate?: Partial<TenantGateSettings>
}

/** The core over a store location: opens it, migrates it, and provides the services and the `SqlClient`. */
export const layerCore = (location: StoreLocation, options: CoreOptions = {}) =>
  layerServices(options.oauth).pipe(
    // The embedded store runs one statement at a time: more turns per tenant would only queue there.
    Layer.provideMerge(TenantGate.layer({ defaultConcurrency: location.kind === "postgres" ? 4 : 1, ...options.tenantGate })),
    Layer.provideMerge(layerStore(location))
  )
