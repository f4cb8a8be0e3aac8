import type { Fragment } from "effect/sql/Statement"
import { Effect } from "effect"
import type { InsertOptions } from "../../engine/repository.js"
import type { AnyResource, Row } from "../../engine/resource.js"
import type { ColumnType } from "../../engine/field.js"
import { deliveriesOfEvents, eventsOfWritten } from "../event-rows.js"
import { derivedFieldsRead, recordJson } from "../record-json.js"
import { decoded, type RepositorySql } from "./repository-sql.js"
import { userErrors, writeErrors, type WriteSql } from "./write-sql.js"

/** New records: alone, or with their number, children and event in the statement that answers them. */
export const makeInserts = (
  { sql, direct, table, record }: RepositorySql,
  { cast, insertRows, numberTaken, withEvent }: WriteSql,
  byIds: (resource: AnyResource, tenantId: string, ids: ReadonlyArray<unknown>) => Effect.Effect<ReadonlyArray<Row>>
) => {
  const insertRow = (tableName: string, columns: Readonly<Record<string, ColumnType>>, values: Row, extra: Row) => {
    const names = Object.keys(values)
    const params = [
      ...Object.values(extra).map((value) => sql`${value as string}::uuid`),
      ...names.map((name) => cast(columns[name], name, values[name]))
    ]
    const list = sql.literal([...Object.keys(extra), ...names].join(", "))
    return sql<{ id: string }>`INSERT INTO ${table(tableName)} (${list}) VALUES (${sql.csv(params)}) RETURNING id::text AS id`
  }

  const insert = (resource: AnyResource, tenantId: string, values: Row) =>
    insertRow(resource.table, resource.columns, values, { tenant_id: tenantId }).pipe(
      Effect.map((rows) => rows[0].id),
      Effect.catchTag("SqlError", userErrors(resource.title, resource.fields))
    )

  /** One statement for a new record and its answer: RETURNING reads it as `findById` would. */
  const insertReturning = (resource: AnyResource, tenantId: string, values: Row, options: InsertOptions = {}) => {
    const children = (options.children ?? []).filter((written) => written.rows.length > 0)
    if (options.number === undefined && children.length === 0) {
      const names = Object.keys(values)
      const params = [sql`${tenantId}::uuid`, ...names.map((name) => cast(resource.columns[name], name, values[name]))]
      const list = sql.literal(["tenant_id", ...names].join(", "))
      return direct(withEvent(sql<{ record: string }>`INSERT INTO ${table(resource.table)} AS r (${list}) VALUES (${sql.csv(params)}) RETURNING r.id, ${record(resource)}`, options.event), true).pipe(
        Effect.catchTag("SqlError", userErrors(resource.title, resource.fields)),
        Effect.map((rows) => decoded(resource)(rows)[0])
      )
    }
    return insertWithChildren(resource, tenantId, values, { ...options, children })
  }

  /**
   * The record, its number, its children, its event and deliveries, and its answer in one statement
   * (atomic without a transaction). The answer reads the children from the statement's own
   * `RETURNING *` rows: a statement does not see through the table what its CTEs inserted.
   */
  const insertWithChildren = (resource: AnyResource, tenantId: string, values: Row, options: InsertOptions & { readonly children: NonNullable<InsertOptions["children"]> }) => {
    const names = Object.keys(values)
    const params = [sql`${tenantId}::uuid`, ...names.map((name) => cast(resource.columns[name], name, values[name]))]
    const number = options.number
    const columns = ["tenant_id", ...names]
    if (number) {
      columns.push(number.field)
      params.push(sql`(SELECT value FROM number)::${sql.literal(resource.columns[number.field] ?? "integer")}`)
    }
    const ctes: Array<Fragment> = []
    if (number) ctes.push(sql`number AS (${numberTaken(tenantId, number.sequence)})`)
    ctes.push(sql`written AS (INSERT INTO ${table(resource.table)} (${sql.literal(columns.join(", "))}) VALUES (${sql.csv(params)}) RETURNING *)`)
    const sources: Record<string, string> = {}
    options.children.forEach((written, index) => {
      const name = `children_${index}`
      sources[written.collection.name] = name
      ctes.push(sql`${sql.literal(name)} AS (${insertRows(written.collection, tenantId, sql`(SELECT id FROM written)`, written.rows)} RETURNING *)`)
    })
    if (options.event) {
      ctes.push(sql`event AS (${eventsOfWritten(sql, options.event.origin, options.event.resource, options.event.action)})`)
      ctes.push(sql`deliveries AS (${deliveriesOfEvents(sql)})`)
    }
    // A record whose derived fields read the children's table itself is read back once written.
    const readBack = derivedFieldsRead(resource, options.children.map((written) => written.collection.table))
    const answer = readBack ? "r.id::text AS id" : `${recordJson(resource, "row", sources)} AS record`
    return direct(sql<{ id: string; record: string }>`WITH ${sql.csv(ctes)} SELECT ${sql.literal(answer)} FROM written r`).pipe(
      Effect.catchTag("SqlError", writeErrors(resource, options.children.map((written) => written.collection))),
      Effect.flatMap((rows) => readBack ? Effect.map(byIds(resource, tenantId, [rows[0].id]), (records) => records[0]) : Effect.succeed(decoded(resource)(rows)[0]))
    )
  }

  const nextNumber = (tenantId: string, sequence: string) =>
    numberTaken(tenantId, sequence).pipe(Effect.map((rows) => Number((rows[0] as { value: unknown }).value)), Effect.orDie)

  return { insert, insertReturning, nextNumber }
}
