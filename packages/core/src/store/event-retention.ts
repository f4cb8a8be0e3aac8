import * as SqlClient from "effect/sql/SqlClient"
import { Duration, Effect, Layer, Schedule } from "effect"
import { EVENT_RETENTION_DAYS } from "../events/events.js"
import { pruneIdempotencyKeys } from "./idempotency-keys.js"
import { pruneCredentialWindows } from "./credential-rate-limiter.js"

/** Deleted in slices, so a store that was off for months never runs one long statement. */
const SLICE = 5_000

/**
 * Removes events older than the retention period, and webhook deliveries that finished
 * (succeeded or failed) as long ago with their attempts; returns how many events went.
 * Deliveries still pending or retrying stay, whatever their age.
 */
export const pruneEvents = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const cutoff = `${EVENT_RETENTION_DAYS} days`
  let total = 0
  for (;;) {
    const rows = yield* sql<{ count: number }>`WITH old AS (
        SELECT tenant_id, id FROM events WHERE created_at < now() - ${cutoff}::interval LIMIT ${SLICE})
      , gone AS (DELETE FROM events e USING old WHERE e.tenant_id = old.tenant_id AND e.id = old.id RETURNING 1)
      SELECT count(*)::int AS count FROM gone`
    total += rows[0].count
    if (rows[0].count < SLICE) break
  }
  for (;;) {
    const rows = yield* sql<{ count: number }>`WITH old AS (
        SELECT tenant_id, id FROM webhook_deliveries
        WHERE status IN ('succeeded', 'failed') AND updated_at < now() - ${cutoff}::interval LIMIT ${SLICE})
      , gone AS (DELETE FROM webhook_deliveries d USING old WHERE d.tenant_id = old.tenant_id AND d.id = old.id RETURNING 1)
      SELECT count(*)::int AS count FROM gone`
    if (rows[0].count < SLICE) return total
  }
}).pipe(Effect.orDie, Effect.withSpan("pruneEvents"))

/** One pass over what expires in the store: old events and deliveries, expired idempotency keys, finished rate windows. */
const pruneExpired = Effect.all([pruneEvents, pruneIdempotencyKeys, pruneCredentialWindows], { discard: true })

/**
 * Prunes the change feed, expired idempotency keys and finished rate windows in the
 * background: a while after start, then hourly. Every host may run it; deleting the
 * same old rows twice is harmless.
 */
export const layerEventRetention = Layer.effectDiscard(
  Effect.forkScoped(
    pruneExpired.pipe(
      Effect.catchCause((cause) => Effect.logWarning("Pruning expired rows failed", cause)),
      Effect.delay(Duration.minutes(1)),
      Effect.repeat(Schedule.spaced(Duration.hours(1)))
    )
  )
)
