import * as SqlClient from "effect/sql/SqlClient"
import { Effect } from "effect"
import { type AnyResource, idColumnType, type Row } from "../../engine/resource.js"
import { makeDirect } from "../direct-statements.js"
import { recordJson } from "../record-json.js"

/** What every part of the resource repository builds and runs its statements with. */
export const makeRepositorySql = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const direct = yield* makeDirect
  return {
    sql,
    /** Runs a statement on the driver itself where the store owns it (`makeDirect`). */
    direct,
    table: (name: string) => sql.literal(name),
    /** The select list of a record as the store builds it (`recordJson`), named `record`. */
    record: (resource: AnyResource) => sql.literal(`${recordJson(resource)} AS record`),
    idType: (resource: AnyResource) => sql.literal(idColumnType(resource))
  }
})

export type RepositorySql = Effect.Success<typeof makeRepositorySql>

/** Records as the store built them (`recordJson`): parsed, never decoded field by field. */
export const parsed = (rows: ReadonlyArray<{ readonly record: string }>): ReadonlyArray<Row> => rows.map((row) => JSON.parse(row.record) as Row)
