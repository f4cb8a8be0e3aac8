import type { SqlError } from "effect/sql/SqlError"
import type { Fragment, Statement } from "effect/sql/Statement"
import { Effect } from "effect"
import type { ColumnType, Fields } from "../../engine/field.js"
import type { AnyResource, ChildCollection, Row } from "../../engine/resource.js"
import type { StatementEvent } from "../../engine/unit-of-work.js"
import { deliveriesOfEvents, eventsOfWritten } from "../event-rows.js"
import { constraintError, pgError } from "../sql-errors.js"
import type { RepositorySql } from "./repository-sql.js"

/** A constraint the caller's values broke, as a typed error naming the field (`title`'s fields); any other failure is a defect. */
export const userErrors = (title: string, fields: Fields) => (error: SqlError) => {
  const mapped = constraintError(error, title, Object.keys(fields))
  return mapped ? Effect.fail(mapped) : Effect.die(error)
}

/** The collection whose table refused a row names the field (`items.quantity`), as its own statement did; else the record. */
export const writeErrors = (resource: AnyResource, collections: ReadonlyArray<ChildCollection>) => (error: SqlError) => {
  const refused = collections.find((collection) => collection.table === pgError(error).table)
  return refused ? userErrors(refused.name, refused.fields)(error) : userErrors(resource.title, resource.fields)(error)
}

/** The fragments the repository's writes share: values cast to their columns, SET lists, child rows, numbers, events. */
export const makeWriteSql = ({ sql, table }: RepositorySql) => {
  const cast = (type: ColumnType | undefined, name: string, value: unknown): Fragment => {
    if (!type) throw new Error(`Column ${name} is not declared`)
    if (value === null || value === undefined) return sql`NULL::${sql.literal(type)}`
    const encoded = type === "jsonb" ? JSON.stringify(value) : value
    return sql`${encoded as string}::${sql.literal(type)}`
  }

  // Each write moves `updated_at` forward, by a millisecond at least (its precision): a write
  // without a lock checks that no other came between its read and its update by it.
  const setList = (columns: Readonly<Record<string, ColumnType>>, values: Row) => [
    ...Object.keys(values).map((name) => sql`${sql.literal(name)} = ${cast(columns[name], name, values[name])}`),
    sql`updated_at = greatest(now(), updated_at + interval '1 millisecond')`
  ]

  /** New children in one statement: a column a child does not set takes its default, as it would alone. */
  const insertRows = (collection: ChildCollection, tenantId: string, parentId: Fragment, rows: ReadonlyArray<Row>) => {
    const names = [...new Set(rows.flatMap((values) => Object.keys(values)))]
    const tuples = rows.map((values) =>
      sql`(${sql.csv([
        sql`${tenantId}::uuid`,
        parentId,
        ...names.map((name) => (name in values ? cast(collection.columns[name], name, values[name]) : sql.literal("DEFAULT")))
      ])})`
    )
    const list = sql.literal(["tenant_id", collection.parentKey, ...names].join(", "))
    return sql`INSERT INTO ${table(collection.table)} (${list}) VALUES ${sql.csv(tuples)}`
  }

  /** Takes the next number of a tenant's sequence (`record_number`): gapless, since it commits or rolls back with the write. */
  const numberTaken = (tenantId: string, sequence: string) =>
    sql`INSERT INTO record_sequences (tenant_id, name, last_value) VALUES (${tenantId}::uuid, ${sequence}, 1)
      ON CONFLICT (tenant_id, name) DO UPDATE SET last_value = record_sequences.last_value + 1
      RETURNING last_value AS value`

  /** The write with its event and the event's deliveries in the same statement, when a unit of one statement asks for it. */
  const withEvent = <A extends object>(write: Statement<A>, event: StatementEvent | undefined): Statement<A> =>
    event === undefined
      ? write
      : sql<A>`WITH written AS (${write}),
          event AS (${eventsOfWritten(sql, event.origin, event.resource, event.action)}),
          deliveries AS (${deliveriesOfEvents(sql)})
        SELECT * FROM written`

  return { cast, setList, insertRows, numberTaken, withEvent }
}

export type WriteSql = ReturnType<typeof makeWriteSql>
