import { Effect } from "effect"
import type { Conflict, Forbidden, InvalidRequest, NotFound, PreconditionFailed, Unprocessable } from "../../errors.js"
import { CursorSecret } from "../cursor.js"
import type { Precondition } from "../etag.js"
import { ResourceRepository } from "../repository.js"
import type { Principal } from "../../auth/principal.js"
import type { ActionStore, WriteServices } from "../resource.js"
import { type NeedsTransaction, type UnitOfWork, UnitsOfWork } from "../unit-of-work.js"

/** What every use case of the engine works with, taken once when the engine is built. */
export const makeEngineContext = Effect.gen(function* () {
  return {
    repo: yield* ResourceRepository,
    units: yield* UnitsOfWork,
    /** The key that signs and checks list cursors. */
    secret: (yield* CursorSecret).key,
    /** What rules, hooks and actions are given to run with. */
    services: yield* Effect.context<WriteServices>()
  }
})

export type EngineContext = Effect.Success<typeof makeEngineContext>

/** The repository as the use cases call it. */
export type Repository = ResourceRepository["Service"]

export type ReadFailure = InvalidRequest | Forbidden | NotFound
export type WriteFailure = ReadFailure | Unprocessable | Conflict | PreconditionFailed
/** A write inside a unit of work: `NeedsTransaction` too, which the unit catches. */
export type UnitFailure = WriteFailure | NeedsTransaction

/** What a write may require beyond its input: the record's current version (`If-Match`). */
export interface WriteOptions {
  readonly precondition?: Precondition
}

/** The store an action or write hook is handed in the unit of work it runs in. */
export type CurrentStore = (principal: Principal) => Effect.Effect<ActionStore, never, UnitOfWork>
