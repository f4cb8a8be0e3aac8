import type { Fragment } from "effect/sql/Statement"
import { Effect, Option } from "effect"
import { emptyPlan } from "../../engine/draft.js"
import type { UpdateOptions } from "../../engine/repository.js"
import type { AnyResource, Row } from "../../engine/resource.js"
import { deliveriesOfEvents, eventsOfWritten } from "../event-rows.js"
import { derivedFieldsRead, recordJson } from "../record-json.js"
import { pgError } from "../sql-errors.js"
import { decoded, type RepositorySql } from "./repository-sql.js"
import { userErrors, writeErrors, type WriteSql } from "./write-sql.js"

/** Changes to records: their values, their children in the same statement, their deletion and restoration. */
export const makeUpdates = (
  { sql, direct, table, record, idType }: RepositorySql,
  { setList, insertRows, withEvent }: WriteSql,
  byIds: (resource: AnyResource, tenantId: string, ids: ReadonlyArray<unknown>) => Effect.Effect<ReadonlyArray<Row>>
) => {
  const update = (resource: AnyResource, tenantId: string, id: string, values: Row) =>
    sql`UPDATE ${table(resource.table)} SET ${sql.csv(setList(resource.columns, values))}
      WHERE tenant_id = ${tenantId}::uuid AND id = ${id}::${idType(resource)}`.pipe(
      Effect.asVoid,
      Effect.catchTag("SqlError", userErrors(resource.title, resource.fields))
    )

  /**
   * The update and the record's new state in one statement (RETURNING reads it as `findById`
   * would); none when `unchangedSince` is given and the record's `updated_at` moved since.
   * With `children`, their removals, changes and insertions are in the statement too.
   */
  const updateReturning = (resource: AnyResource, tenantId: string, id: string, values: Row, options: UpdateOptions = {}) => {
    const children = (options.children ?? []).filter((written) => !emptyPlan(written.plan))
    if (children.length > 0) return updateWithChildren(resource, tenantId, id, values, { ...options, children })
    const unchanged = options.unchangedSince === undefined ? sql.literal("") : sql`AND r.updated_at = ${options.unchangedSince}::timestamptz`
    return direct(withEvent(sql<{ record: string }>`UPDATE ${table(resource.table)} AS r SET ${sql.csv(setList(resource.columns, values))}
      WHERE r.tenant_id = ${tenantId}::uuid AND r.id = ${id}::${idType(resource)} ${unchanged} RETURNING r.id, ${record(resource)}`, options.event), true).pipe(
      Effect.catchTag("SqlError", userErrors(resource.title, resource.fields)),
      Effect.map((rows) => Option.fromNullishOr(decoded(resource)(rows)[0]))
    )
  }

  /**
   * The record, its children's changes, its event and its answer in one statement. Each child
   * write runs only if the record's own update did (`written`, empty when another write came
   * since `unchangedSince`); a new child takes its parent's id from `written`, so there it finds
   * none and the statement fails whole on the parent key's NOT NULL: nothing written, none answered.
   * The answer reads each collection as the statement leaves it: the rows it did not touch (the
   * statement's snapshot of the table), then those it changed and inserted (their RETURNING rows).
   */
  const updateWithChildren = (
    resource: AnyResource,
    tenantId: string,
    id: string,
    values: Row,
    options: UpdateOptions & { readonly children: NonNullable<UpdateOptions["children"]> }
  ) => {
    const unchanged = options.unchangedSince === undefined ? sql.literal("") : sql`AND r.updated_at = ${options.unchangedSince}::timestamptz`
    const ctes: Array<Fragment> = [sql`written AS (UPDATE ${table(resource.table)} AS r SET ${sql.csv(setList(resource.columns, values))}
      WHERE r.tenant_id = ${tenantId}::uuid AND r.id = ${id}::${idType(resource)} ${unchanged} RETURNING r.*)`]
    const sources: Record<string, string> = {}
    options.children.forEach(({ collection, plan }, index) => {
      const childTable = table(collection.table)
      const owned = sql`tenant_id = ${tenantId}::uuid AND ${sql.literal(collection.parentKey)} = ${id}::uuid`
      const ifWritten = sql`EXISTS (SELECT 1 FROM written)`
      const parts: Array<string> = []
      if (plan.remove.length > 0) {
        ctes.push(collection.softDelete
          ? sql`${sql.literal(`removed_${index}`)} AS (UPDATE ${childTable} SET deleted_at = now(), updated_at = now() WHERE ${owned} AND id IN ${sql.in(plan.remove)} AND ${ifWritten} RETURNING id)`
          : sql`${sql.literal(`removed_${index}`)} AS (DELETE FROM ${childTable} WHERE ${owned} AND id IN ${sql.in(plan.remove)} AND ${ifWritten} RETURNING id)`)
      }
      plan.update.forEach((change, at) => {
        const name = `changed_${index}_${at}`
        ctes.push(sql`${sql.literal(name)} AS (UPDATE ${childTable} SET ${sql.csv(setList(collection.columns, change.values))} WHERE ${owned} AND id = ${change.id}::uuid AND ${ifWritten} RETURNING *)`)
        parts.push(`SELECT * FROM ${name}`)
      })
      if (plan.insert.length > 0) {
        ctes.push(sql`${sql.literal(`inserted_${index}`)} AS (${insertRows(collection, tenantId, sql`(SELECT id FROM written)`, plan.insert)} RETURNING *)`)
        parts.push(`SELECT * FROM inserted_${index}`)
      }
      const touched = [...plan.remove, ...plan.update.map((change) => change.id)]
      const untouched = touched.length > 0 ? sql`AND id NOT IN ${sql.in(touched)}` : sql.literal("")
      const name = `children_${index}`
      sources[collection.name] = name
      ctes.push(sql`${sql.literal(name)} AS (SELECT * FROM ${childTable} WHERE ${owned} ${untouched}${sql.literal(parts.map((part) => ` UNION ALL ${part}`).join(""))})`)
    })
    if (options.event) {
      ctes.push(sql`event AS (${eventsOfWritten(sql, options.event.origin, options.event.resource, options.event.action)})`)
      ctes.push(sql`deliveries AS (${deliveriesOfEvents(sql)})`)
    }
    const readBack = derivedFieldsRead(resource, options.children.map((written) => written.collection.table))
    const answer = readBack ? "r.id::text AS id" : `${recordJson(resource, "row", sources)} AS record`
    const collections = options.children.map((written) => written.collection)
    return direct(sql<{ id: string; record: string }>`WITH ${sql.csv(ctes)} SELECT ${sql.literal(answer)} FROM written r`).pipe(
      Effect.map((rows) => Option.fromNullishOr(rows[0])),
      Effect.catchTag("SqlError", (error) => {
        const fields = pgError(error)
        // A new child found no parent row written: another write came since `unchangedSince`.
        const raced = options.unchangedSince !== undefined && fields.code === "23502" &&
          collections.some((collection) => collection.table === fields.table && collection.parentKey === fields.column)
        return raced ? Effect.succeed(Option.none<{ id: string; record: string }>()) : writeErrors(resource, collections)(error)
      }),
      Effect.flatMap(Option.match({
        onNone: () => Effect.succeed(Option.none<Row>()),
        onSome: (row: { id: string; record: string }) => readBack ? Effect.map(byIds(resource, tenantId, [row.id]), (records) => Option.fromNullishOr(records[0])) : Effect.succeed(Option.some(decoded(resource)([row])[0]))
      }))
    )
  }

  const setDeleted = (resource: AnyResource, tenantId: string, id: string, deleted: boolean, values: Row = {}) =>
    sql`UPDATE ${table(resource.table)} SET ${sql.csv([...setList(resource.columns, values), sql`deleted_at = ${sql.literal(deleted ? "now()" : "NULL")}`])}
      WHERE tenant_id = ${tenantId}::uuid AND id = ${id}::${idType(resource)} AND deleted_at ${sql.literal(deleted ? "IS NULL" : "IS NOT NULL")}
      RETURNING id`.pipe(
      Effect.map((rows) => rows.length > 0),
      Effect.catchTag("SqlError", userErrors(resource.title, resource.fields))
    )

  return { update, updateReturning, setDeleted }
}
