import * as Migrator from "effect/sql/Migrator"
import { Effect } from "effect"
import foundation from "./migrations/0001_foundation.js"
import catalogs from "./migrations/0002_catalogs.js"
import productsCustomers from "./migrations/0003_products_customers.js"
import oauth from "./migrations/0004_oauth.js"
import documents from "./migrations/0005_documents.js"
import finance from "./migrations/0006_finance.js"
import rateLimitWindows from "./migrations/0007_rate_limit_windows.js"
import sealedSecrets from "./migrations/0008_sealed_secrets.js"
import sales from "./migrations/0009_sales.js"
import mcpSessions from "./migrations/0010_mcp_sessions.js"
import webhooks from "./migrations/0011_webhooks.js"
import integratorSafety from "./migrations/0012_integrator_safety.js"
import panelOAuth from "./migrations/0013_panel_oauth.js"
import purchaseItemDescription from "./migrations/0014_purchase_item_description.js"
import fairWebhookClaims from "./migrations/0015_fair_webhook_claims.js"
import shardingReady from "./migrations/0016_sharding_ready.js"
import idempotentCommits from "./migrations/0017_idempotent_commits.js"
import salesReportFacts from "./migrations/0018_sales_report_facts.js"
import bankCollection from "./migrations/0019_bank_collection.js"

/** Every migration, in order; the migrator records applied ones in `erp_migrations`. */
export const migrations = {
  "0001_foundation": foundation,
  "0002_catalogs": catalogs,
  "0003_products_customers": productsCustomers,
  "0004_oauth": oauth,
  "0005_documents": documents,
  "0006_finance": finance,
  "0007_rate_limit_windows": rateLimitWindows,
  "0008_sealed_secrets": sealedSecrets,
  "0009_sales": sales,
  "0010_mcp_sessions": mcpSessions,
  "0011_webhooks": webhooks,
  "0012_integrator_safety": integratorSafety,
  "0013_panel_oauth": panelOAuth,
  "0014_purchase_item_description": purchaseItemDescription,
  "0015_fair_webhook_claims": fairWebhookClaims,
  "0016_sharding_ready": shardingReady,
  "0017_idempotent_commits": idempotentCommits,
  "0018_sales_report_facts": salesReportFacts,
  "0019_bank_collection": bankCollection
}

const run = Migrator.make({})

/**
 * Applies pending migrations. Safe to run on every start. The store-wide secrets (cursor
 * key, signing keys) are made sealed by the services that use them, not here.
 */
export const migrate = run({ loader: Migrator.fromRecord(migrations), table: "erp_migrations" }).pipe(Effect.withSpan("migrate"))
