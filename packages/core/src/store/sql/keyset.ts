import type { Constructor, Fragment } from "effect/sql/Statement"
import { fieldSql, sqlTypeOf } from "../../engine/fields.js"
import { type AnyResource, idColumnType } from "../../engine/resource.js"

/** A key of the walk: the sort value and the id of a row. */
export type Key = readonly [unknown, string]

/** What orders a list's walk: the sort expression, the types key values are cast to, whether the sort may be null. */
export interface KeysetSort {
  readonly sortSql: string
  readonly sqlType: string
  readonly nullable: boolean
  readonly idType: string
}

/** The walk's sort for a list sorted by `field` (a declared filter field, or `id`). */
export const keysetSort = (resource: Pick<AnyResource, "filters" | "columns" | "fields">, field: string): KeysetSort => {
  const filter = resource.filters[field]
  const id = idColumnType(resource)
  return {
    sortSql: fieldSql(field, filter),
    // A cursor's value cast to the column's own type: `record_number > 5::numeric` would cast the
    // column and leave its index unused.
    sqlType: field === "id" ? id : (!filter.sql && resource.columns[field]) || sqlTypeOf[filter.type],
    nullable: filter.nullable ?? false,
    idType: id
  }
}

/**
 * Rows strictly beyond (value, id) in walking direction. Nulls sort last
 * ascending and first descending, so the walk stays total on nullable fields.
 */
export const keysetPredicate = (sql: Constructor, sort: KeysetSort, ascending: boolean, key: Key): Fragment => {
  const s = sql.literal(sort.sortSql)
  const [value, rawId] = key
  const id = sql`${rawId}::${sql.literal(sort.idType)}`
  const cmp = sql.literal(ascending ? ">" : "<")
  const tuple = sql`(${s}, r.id) ${cmp} (${value}::${sql.literal(sort.sqlType)}, ${id})`
  if (!sort.nullable) return tuple
  if (value === null) {
    return ascending ? sql`(${s} IS NULL AND r.id > ${id})` : sql`((${s} IS NULL AND r.id < ${id}) OR ${s} IS NOT NULL)`
  }
  return ascending ? sql`(${s} IS NULL OR ${tuple})` : sql`(${s} IS NOT NULL AND ${tuple})`
}

/** Rows up to `until`, inclusive: a row comparison the index bounds the scan with (not for a nullable sort). */
export const keysetUntil = (sql: Constructor, sort: KeysetSort, ascending: boolean, until: Key): Fragment => {
  const [value, id] = until
  return sql`(${sql.literal(sort.sortSql)}, r.id) ${sql.literal(ascending ? "<=" : ">=")} (${value}::${sql.literal(sort.sqlType)}, ${id}::${sql.literal(sort.idType)})`
}

/**
 * The walk's order. PostgreSQL's own null order (last ascending, first descending) is the walk's,
 * so a `(tenant_id, field, id)` index serves a nullable sort as it does any other.
 */
export const keysetOrder = (sort: KeysetSort, ascending: boolean): string => {
  const dir = ascending ? "ASC" : "DESC"
  return `${sort.sortSql} ${dir}, r.id ${dir}`
}
