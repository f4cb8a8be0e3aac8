import * as SqlClient from "effect/sql/SqlClient"
import { Effect, Schema } from "effect"
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

const decoders = new WeakMap<AnyResource, (record: unknown) => Row>()

/** A resource's stored-record decoder (`resource.stored`), made once. */
const decoderOf = (resource: AnyResource): (record: unknown) => Row => {
  let decode = decoders.get(resource)
  if (decode === undefined) {
    decode = Schema.decodeUnknownSync(resource.stored)
    decoders.set(resource, decode)
  }
  return decode
}

/**
 * Records as the store built them (`recordJson`), decoded by the resource's stored-record schema.
 * A row its declaration does not describe is a defect of the store, never a client's error: the
 * decoder throws, and the request fails as a 500 with the cause logged.
 */
export const decoded = (resource: AnyResource) => {
  const decode = decoderOf(resource)
  return (rows: ReadonlyArray<{ readonly record: string }>): ReadonlyArray<Row> => rows.map((row) => decode(JSON.parse(row.record)))
}
