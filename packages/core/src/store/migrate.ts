import * as Migrator from "@effect/sql/Migrator"
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"
import { randomBytes } from "node:crypto"
import foundation from "./migrations/0001_foundation.js"
import catalogs from "./migrations/0002_catalogs.js"
import productsCustomers from "./migrations/0003_products_customers.js"
import oauth from "./migrations/0004_oauth.js"
import documents from "./migrations/0005_documents.js"
import finance from "./migrations/0006_finance.js"
import mcpSessions from "./migrations/0010_mcp_sessions.js"

/** Every migration, in order; the migrator records applied ones in `erp_migrations`. */
export const migrations = {
  "0001_foundation": foundation,
  "0002_catalogs": catalogs,
  "0003_products_customers": productsCustomers,
  "0004_oauth": oauth,
  "0005_documents": documents,
  "0006_finance": finance,
  "0010_mcp_sessions": mcpSessions
}

const run = Migrator.make({})

/** Applies pending migrations and makes sure the store-wide secrets exist. Safe to run on every start. */
export const migrate = Effect.gen(function* () {
  const applied = yield* run({ loader: Migrator.fromRecord(migrations), table: "erp_migrations" })
  const sql = yield* SqlClient.SqlClient
  yield* sql`INSERT INTO erp_settings (key, value) VALUES ('cursor_secret', ${randomBytes(32).toString("base64")}) ON CONFLICT (key) DO NOTHING`
  return applied
}).pipe(Effect.withSpan("migrate"))
