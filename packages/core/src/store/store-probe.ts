import { Context, Effect, Option } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"

/**
 * Whether the store answers (`GET /health`), where a store knows better than a statement would:
 * the embedded store's one session may be running a tenant's costly statement, and a `SELECT 1`
 * would wait its turn behind it.
 */
export class StoreProbe extends Context.Service<StoreProbe, {
  readonly check: Effect.Effect<void, SqlError>
}>()("erp/core/StoreProbe") {}

/** The store's own check, else a `SELECT 1`. */
export const storeAnswers: Effect.Effect<void, SqlError, SqlClient.SqlClient> = Effect.flatMap(Effect.serviceOption(StoreProbe), (probe) =>
  Option.isSome(probe) ? probe.value.check : Effect.asVoid(Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT 1`)))
