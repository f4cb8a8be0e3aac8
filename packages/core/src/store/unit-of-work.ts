import * as SqlClient from "effect/sql/SqlClient"
import { SqlError } from "effect/sql/SqlError"
import { Effect, Layer } from "effect"
import { type DomainEvent, NeedsTransaction, UnitOfWork, UnitsOfWork, type WriteOrigin } from "../engine/unit-of-work.js"
import { deliveriesOfEvents, EVENT_RETURNING } from "./event-rows.js"

const isSqlError = (error: unknown): error is SqlError => error instanceof SqlError

/**
 * Units of work over SQL: one transaction per operation. Events emitted inside it
 * are kept one per record (the first action wins: a create that also changes
 * children is still one `create`) and inserted just before COMMIT with their webhook
 * deliveries, so a write, its event and its deliveries commit or roll back together.
 * A unit asked to try `oneStatement` runs without a transaction: its write records its
 * event in the same statement, which commits alone; a second write runs it again in one.
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
      return { unit, pending }
    }

    const inTransaction = <A, E, R>(origin: WriteOrigin, effect: Effect.Effect<A, E, R>) =>
      Effect.suspend(() => {
        const { unit, pending } = unitOf(origin, false)
        // Each event, and in the same statement one delivery per enabled endpoint subscribed to it:
        // both commit with the write or not at all, so no event is lost between them.
        const record = Effect.suspend(() => Effect.forEach(pending(), (event) =>
          sql`WITH event AS (
              INSERT INTO events (tenant_id, type, resource, resource_id, action, actor_kind, actor_id)
              VALUES (${origin.tenantId}::uuid, ${`${event.resource}.${event.action}`}, ${event.resource}, ${event.resourceId},
                ${event.action}, ${origin.actor.kind}, ${origin.actor.id})
              RETURNING ${sql.literal(EVENT_RETURNING)})
            ${deliveriesOfEvents(sql)}`, { discard: true }))
        return sql.withTransaction(
          Effect.flatMap(Effect.provideService(effect, UnitOfWork, unit), (result) => Effect.as(record, result))
        )
      })

    const withoutTransaction = <A, E, R>(origin: WriteOrigin, effect: Effect.Effect<A, E | NeedsTransaction, R>) =>
      Effect.suspend(() => Effect.provideService(effect, UnitOfWork, unitOf(origin, true).unit)).pipe(
        Effect.catchIf((error): error is NeedsTransaction => error instanceof NeedsTransaction, () => inTransaction(origin, effect))
      )

    return UnitsOfWork.of({
      run: <A, E, R>(origin: WriteOrigin, effect: Effect.Effect<A, E | NeedsTransaction, R>, options: { readonly oneStatement?: boolean } = {}) =>
        (options.oneStatement ? withoutTransaction(origin, effect) : inTransaction(origin, effect)).pipe(
          // In a transaction nothing asks for one: a NeedsTransaction there is a bug of the engine's.
          Effect.catchIf((error): error is NeedsTransaction => error instanceof NeedsTransaction, (error) => Effect.die(error)),
          // Statement failures the repository did not map are infrastructure: defects, not client errors.
          Effect.catchIf(isSqlError, Effect.die)
        ) as Effect.Effect<A, Exclude<E, NeedsTransaction>, Exclude<R, UnitOfWork>>
    })
  })
)
