import { Context, type Effect } from "effect"
import type { SqlError } from "effect/sql/SqlError"

type Rows = ReadonlyArray<Record<string, unknown>>

/** The reader a statement runs for, set by `ReadPlacement.read`; none: the statement goes to the primary. */
export const ReplicaReader = Context.Reference<string | undefined>("erp/core/ReplicaReader", { defaultValue: () => undefined })

/** Where a read statement runs (`makeDirect` asks it); none: the store has no replica. */
export interface ReplicaRouterShape {
  readonly run: (reader: string, text: string, params: ReadonlyArray<unknown>, prepared: boolean, primary: Effect.Effect<Rows, SqlError>) => Effect.Effect<Rows, SqlError>
}
export const ReplicaRouter = Context.Reference<ReplicaRouterShape | undefined>("erp/core/ReplicaRouter", { defaultValue: () => undefined })
