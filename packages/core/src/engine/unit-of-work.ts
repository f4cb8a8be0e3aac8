import { Context, type Effect } from "effect"
import type { Actor } from "../auth/principal.js"
import type { Conflict, Unprocessable } from "../errors.js"

/** What happened to a record, as events name it (spec "Events"). */
export type EventAction = "create" | "update" | "delete" | "restore"

export interface DomainEvent {
  readonly resource: string
  readonly action: EventAction
  /** The main record: a child change or an action is its parent's `update`. */
  readonly resourceId: string
}

/**
 * The transaction a write runs in. Its effect emits the domain event of the
 * operation; the unit of work keeps one per operation and records it before
 * COMMIT, so no write commits without its event and no event without its write.
 */
export class UnitOfWork extends Context.Tag("erp/core/UnitOfWork")<UnitOfWork, {
  readonly emit: (event: DomainEvent) => Effect.Effect<void>
}>() {}

/** Who writes, for the event log. */
export interface WriteOrigin {
  readonly tenantId: string
  readonly actor: Actor
}

/**
 * Runs writes as units of work: one transaction with the events it emits. A
 * constraint the database enforces becomes a typed error (unique: 409; foreign
 * key, check, not null: 422 naming the field), never a 500.
 */
export class UnitsOfWork extends Context.Tag("erp/core/UnitsOfWork")<UnitsOfWork, {
  readonly run: <A, E, R>(
    origin: WriteOrigin,
    effect: Effect.Effect<A, E, R>
  ) => Effect.Effect<A, E | Conflict | Unprocessable, Exclude<R, UnitOfWork>>
}>() {}
