import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import { Effect, Layer } from "effect"
import { type DomainEvent, UnitOfWork, UnitsOfWork, type WriteOrigin } from "../engine/unit-of-work.js"

const isSqlError = (error: unknown): error is SqlError => error instanceof SqlError

/**
 * Units of work over SQL: one transaction per operation. Events emitted inside it
 * are kept one per record (the first action wins: a create that also changes
 * children is still one `create`) and inserted just before COMMIT with their webhook
 * deliveries, so a write, its event and its deliveries commit or roll back together.
 */
export const layerUnitsOfWork = Layer.effect(
  UnitsOfWork,
  Effect.map(SqlClient.SqlClient, (sql) =>
    UnitsOfWork.of({
      run: <A, E, R>(origin: WriteOrigin, effect: Effect.Effect<A, E, R>) =>
        Effect.suspend(() => {
          const events = new Map<string, DomainEvent>()
          const unit = UnitOfWork.of({
            emit: (event) =>
              Effect.sync(() => {
                const key = `${event.resource}\u0000${event.resourceId}`
                if (!events.has(key)) events.set(key, event)
              })
          })
          // Each event, and in the same statement one delivery per enabled endpoint subscribed to it:
          // both commit with the write or not at all, so no event is lost between them.
          const record = Effect.suspend(() => Effect.forEach([...events.values()], (event) =>
            sql`WITH event AS (
                INSERT INTO events (tenant_id, type, resource, resource_id, action, actor_kind, actor_id)
                VALUES (${origin.tenantId}::uuid, ${`${event.resource}.${event.action}`}, ${event.resource}, ${event.resourceId},
                  ${event.action}, ${origin.actor.kind}, ${origin.actor.id})
                RETURNING tenant_id, id, type, resource, resource_id, action, created_at)
              INSERT INTO webhook_deliveries (tenant_id, endpoint_id, event_id, event_type, resource, resource_id, action, event_created_at)
              SELECT e.tenant_id, w.id, e.id, e.type, e.resource, e.resource_id, e.action, e.created_at
              FROM event e JOIN webhook_endpoints w
                ON w.tenant_id = e.tenant_id AND w.enabled AND w.deleted_at IS NULL
                AND jsonb_exists_any(w.events, ARRAY['*', e.type, e.resource || '.*'])`, { discard: true }))
          return sql.withTransaction(
            Effect.flatMap(Effect.provideService(effect, UnitOfWork, unit), (result) => Effect.as(record, result))
          ).pipe(
            // Statement failures the repository did not map are infrastructure: defects, not client errors.
            Effect.catchIf(isSqlError, Effect.die)
          ) as Effect.Effect<A, E, Exclude<R, UnitOfWork>>
        })
    }))
)
