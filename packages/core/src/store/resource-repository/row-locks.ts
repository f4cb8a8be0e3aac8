import type { Constructor, Fragment } from "effect/sql/Statement"
import { Effect } from "effect"
import type { AnyResource, Row } from "../../engine/resource.js"
import { readsDependentRows } from "../record-json.js"
import type { RepositorySql } from "./repository-sql.js"

/**
 * The two ways a read locks its records (`forUpdate`). A record built from its own row alone is
 * read and locked by one statement, the lock on the rows themselves (`lockInRead`). A record that
 * reads other rows (children, totals) is locked first and read after (`lockThenRead`).
 */
export const locksInRead = (resource: AnyResource, options: { readonly forUpdate?: boolean | undefined }): boolean =>
  !options.forUpdate || !readsDependentRows(resource)

/** The lock clause of a statement that reads and locks its records at once. */
export const lockInRead = (sql: Constructor, forUpdate: boolean | undefined): Fragment => sql.literal(forUpdate ? "FOR UPDATE OF r" : "")

/**
 * Locked first, read after: a statement that waited for the lock still reads with the snapshot it
 * started with, so children and totals written by the transaction it waited for would be missed.
 * The records come in the order of the rows locked.
 */
export const lockThenRead = (
  { sql, table }: RepositorySql,
  byIds: (resource: AnyResource, tenantId: string, ids: ReadonlyArray<unknown>) => Effect.Effect<ReadonlyArray<Row>>
) =>
(resource: AnyResource, tenantId: string, where: Fragment, order: Fragment, limit: number): Effect.Effect<ReadonlyArray<Row>> =>
  sql<{ id: unknown }>`SELECT r.id FROM ${table(resource.table)} r WHERE ${where} ORDER BY ${order} LIMIT ${limit} FOR UPDATE`.pipe(
    Effect.orDie,
    Effect.flatMap((locked) =>
      locked.length === 0
        ? Effect.succeed([])
        : Effect.map(byIds(resource, tenantId, locked.map((row) => row.id)), (records) => {
          const byId = new Map(records.map((record) => [String(record.id), record]))
          return locked.map((row) => byId.get(String(row.id))!)
        })
    )
  )
