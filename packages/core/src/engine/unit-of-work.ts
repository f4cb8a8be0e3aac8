import { Context, Data, Effect } from "effect"
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
export class UnitOfWork extends Context.Service<UnitOfWork, {
  readonly emit: (event: DomainEvent) => Effect.Effect<void>
  /** Set when the unit runs without a transaction (`run`'s `oneStatement`): its one write is its only statement that writes. */
  readonly oneStatement?: WriteOrigin
  /**
   * The event a write may record in its own statement (one round trip fewer): always in a unit
   * of one statement; in a transaction while no other event waits (the feed keeps their order).
   * The write then reports it with `recorded`, not `emit`.
   */
  readonly statementEvent?: (resource: string, action: EventAction) => StatementEvent | undefined
  /** An event a statement recorded: later ones for the same record are dropped, as `emit` drops them. */
  readonly recorded?: (event: DomainEvent) => Effect.Effect<void>
}>()("erp/core/UnitOfWork") {}

/** The event a write records in its own statement, with its webhook deliveries (a unit of one statement). */
export interface StatementEvent {
  readonly origin: WriteOrigin
  readonly resource: string
  readonly action: EventAction
}

/**
 * The failure of a write that needs more than one statement inside a unit run without a
 * transaction. Nothing was written yet: the unit of work catches it and runs the unit again in a
 * transaction, so no caller of the unit ever sees it.
 */
export class NeedsTransaction extends Data.TaggedError("NeedsTransaction") {}

/** Fails the unit over to a transaction when it has none: for every write but the unit's last statement. */
export const inTransactionOnly = <A, E, R>(unit: UnitOfWork["Service"], write: Effect.Effect<A, E, R>): Effect.Effect<A, E | NeedsTransaction, R> =>
  unit.oneStatement ? Effect.fail(new NeedsTransaction()) : write

/** The event a write should record in its own statement, if the unit allows it (else `emit` records it before COMMIT). */
export const statementEvent = (unit: UnitOfWork["Service"], resource: { readonly name: string; readonly events?: boolean }, action: EventAction): StatementEvent | undefined =>
  resource.events && unit.statementEvent ? unit.statementEvent(resource.name, action) : undefined

/** Reports the event of a write: recorded by its statement (`event` given), or emitted to be recorded before COMMIT. */
export const eventWritten = (unit: UnitOfWork["Service"], event: StatementEvent | undefined, resourceId: string): Effect.Effect<void> =>
  event && unit.recorded
    ? unit.recorded({ resource: event.resource, action: event.action, resourceId })
    : Effect.void

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
export class UnitsOfWork extends Context.Service<UnitsOfWork, {
  readonly run: <A, E, R>(
    origin: WriteOrigin,
    effect: Effect.Effect<A, E | NeedsTransaction, R>,
    options?: {
      /**
       * Try it first without a transaction (no BEGIN, no COMMIT): for a write whose reads come
       * first and whose one write is a statement recording its own event. A second write
       * (`NeedsTransaction`) runs the whole unit again in a transaction.
       */
      readonly oneStatement?: boolean
    }
  ) => Effect.Effect<A, Exclude<E, NeedsTransaction> | Conflict | Unprocessable, Exclude<R, UnitOfWork>>
}>()("erp/core/UnitsOfWork") {}
