import { Context, type Effect } from "effect"
import type { Principal } from "../auth/principal.js"

/**
 * Where the store may answer a read: a store with read replicas runs lists, gets and exports on
 * one, and keeps each reader's own writes visible to it. Without one (the default) every read
 * goes to the one database and the engine adds nothing to a request.
 */
export interface ReadPlacementShape {
  /** Runs `read` for `reader`, on a replica that holds the reader's last write, else on the primary. */
  readonly read: <A, E, R>(reader: string, read: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** Runs `write` for `reader`; once it has committed, the reader's later reads wait for a replica to hold it. */
  readonly write: <A, E, R>(reader: string, write: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}

export const ReadPlacement = Context.Reference<ReadPlacementShape | undefined>("erp/core/ReadPlacement", { defaultValue: () => undefined })

/** Whose writes a read must see: the credential, or for an operator's tool the tool itself. */
export const readerOf = (principal: Principal): string => principal.credential?.id ?? `${principal.actor.kind}:${principal.actor.id}`
