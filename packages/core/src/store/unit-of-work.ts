import * as SqlClient from "effect/sql/SqlClient"
import { SqlError } from "effect/sql/SqlError"
import { Effect, Layer } from "effect"
import { type DomainEvent, NeedsTransaction, UnitOfWork, UnitsOfWork, type WriteOrigin } from "../engine/unit-of-work.js"
import { IdempotentWrite } from "../idempotency/idempotency.js"
import { deliveriesOfEvents, EVENT_RETURNING } from "./event-rows.js"

const isSqlError = (error: unknown): error is SqlError => error instanceof SqlError

/**
 * Units of work over SQL: one transaction per operation. Events emitted inside it
 * are kept one per record (the first action wins: a create that also changes
 * children is still one `create`) and inserted just before COMMIT with their webhook
 * deliveries, so a write, its event and its deliveries commit or roll back together.
 * A unit asked to try `oneStatement` runs without a transaction: its write records its
 * event in the same statement, which commits alone; a second write runs it again in one. A write
 * under an idempotency key always runs in one, which marks the key committed before COMMIT.
 */
export const layerUnitsOfWork = Layer.effect(
  UnitsOfWork,
  Effect.map(SqlClient.SqlClient, (sql) => {
    const unitOf = (origin: WriteOrigin, oneStatement: boolean) => {
      const events = new Map<string, DomainEvent>()
      /** Events already in the store (their statement recorded them): kept only so later ones for the record are dropped. */
      const written = new Set<string>()
      const note = (event: DomainEvent, alreadyWritten: boolean) =>
        Effect.sync(() => {
          const key = `${event.resource}\u0000${event.resourceId}`
          if (events.has(key)) return
          events.set(key, event)
          if (alreadyWritten) written.add(key)
        })
      const unit = UnitOfWork.of({
        emit: (event) => note(event, oneStatement),
        recorded: (event) => note(event, true),
        statementEvent: (resource, action) => (oneStatement || events.size === 0 ? { origin, resource, action } : undefined),
        ...(oneStatement ? { oneStatement: origin } : {})
      })
      const pending = () => [...events].filter(([key]) => !written.has(key)).map(([, event]) => event)
      /** The write's first record, the one its answer is about. */
      const firstEvent = (): DomainEvent | undefined => events.values().next().value
      return { unit, pending, firstEvent }
    }

    const inTransaction = <A, E, R>(origin: WriteOrigin, effect: Effect.Effect<A, E, R>) =>
      Effect.suspend(() => {
        const { unit, pending, firstEvent } = unitOf(origin, false)
        // Each event, and in the same statement one delivery per enabled endpoint subscribed to it:
        // both commit with the write or not at all, so no event is lost between them.
        const record = Effect.suspend(() => Effect.forEach(pending(), (event) =>
          sql`WITH event AS (
              INSERT INTO events (tenant_id, type, resource, resource_id, action, actor_kind, actor_id)
              VALUES (${origin.tenantId}::uuid, ${`${event.resource}.${event.action}`}, ${event.resource}, ${event.resourceId},
                ${event.action}, ${origin.actor.kind}, ${origin.actor.id})
              RETURNING ${sql.literal(EVENT_RETURNING)})
            ${deliveriesOfEvents(sql)}`, { discard: true }))
        // Under an idempotency key, the key says in this same transaction that its write committed.
        const committed = Effect.flatMap(IdempotentWrite, (write): Effect.Effect<void, SqlError> => {
          if (write === undefined || write.tenantId !== origin.tenantId) return Effect.void
          const first = firstEvent()
          return Effect.asVoid(sql`UPDATE idempotency_keys SET committed_at = coalesce(committed_at, now()),
              committed_resource = coalesce(committed_resource, ${first?.resource ?? null}), committed_id = coalesce(committed_id, ${first?.resourceId ?? null})
            WHERE tenant_id = ${write.tenantId}::uuid AND key = ${write.key} AND fingerprint = ${write.fingerprint} AND status_code IS NULL`)
        })
        return sql.withTransaction(
          Effect.flatMap(Effect.provideService(effect, UnitOfWork, unit), (result) => Effect.as(Effect.andThen(record, committed), result))
        )
      })

    const withoutTransaction = <A, E, R>(origin: WriteOrigin, effect: Effect.Effect<A, E | NeedsTransaction, R>) =>
      Effect.suspend(() => Effect.provideService(effect, UnitOfWork, unitOf(origin, true).unit)).pipe(
        Effect.catchIf((error): error is NeedsTransaction => error instanceof NeedsTransaction, () => inTransaction(origin, effect))
      )

    return UnitsOfWork.of({
      run: <A, E, R>(origin: WriteOrigin, effect: Effect.Effect<A, E | NeedsTransaction, R>, options: { readonly oneStatement?: boolean } = {}) =>
        // A write under an idempotency key runs in a transaction, which marks the key with it.
        Effect.flatMap(IdempotentWrite, (write) => options.oneStatement && write === undefined ? withoutTransaction(origin, effect) : inTransaction(origin, effect)).pipe(
          // In a transaction nothing asks for one: a NeedsTransaction there is a bug of the engine's.
          Effect.catchIf((error): error is NeedsTransaction => error instanceof NeedsTransaction, (error) => Effect.die(error)),
          // Statement failures the repository did not map are infrastructure: defects, not client errors.
          Effect.catchIf(isSqlError, Effect.die)
        ) as Effect.Effect<A, Exclude<E, NeedsTransaction>, Exclude<R, UnitOfWork>>
    })
  })
)
