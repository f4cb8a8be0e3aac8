import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError as SqlErrorClass, type SqlError } from "@effect/sql/SqlError"
import type { Fragment } from "@effect/sql/Statement"
import { Effect, Layer, Option } from "effect"
import { fieldSql, type FilterField, sqlTypeOf } from "../engine/fields.js"
import type { FilterNode } from "../engine/filter.js"
import type { ListQuery } from "../engine/list-query.js"
import { type KeyedRecord, ResourceRepository, Transactions } from "../engine/repository.js"
import { type AnyResource, type ColumnValues, isTenantOwned } from "../engine/resource.js"
import { conflictFrom, isUniqueViolation } from "./sql-errors.js"

type Sql = SqlClient.SqlClient

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/

const escapeLike = (text: string) => text.replace(/[\\%_]/g, (char) => `\\${char}`)

/** Compiles one validated condition; the column expression comes from the declaration only. */
const compileCondition = (sql: Sql, field: FilterField, column: string, op: FilterNode & { kind: "condition" }): Fragment => {
  const s = sql.literal(column)
  const value = op.value
  if (op.op === "is_null" || op.op === "is_not_null") {
    const wantNull = (op.op === "is_null") === (value === true)
    return wantNull ? sql`${s} IS NULL` : sql`${s} IS NOT NULL`
  }
  if (field.array) {
    const pattern = `%${escapeLike(String(value))}%`
    switch (op.op) {
      case "eq":
        return sql`coalesce(${s}, '[]'::jsonb) @> jsonb_build_array(${value}::text)`
      case "neq":
        return sql`NOT (coalesce(${s}, '[]'::jsonb) @> jsonb_build_array(${value}::text))`
      case "contains":
        return sql`EXISTS (SELECT 1 FROM jsonb_array_elements_text(coalesce(${s}, '[]'::jsonb)) AS element(v) WHERE unaccent(element.v) ILIKE unaccent(${pattern}))`
      default:
        return sql`NOT EXISTS (SELECT 1 FROM jsonb_array_elements_text(coalesce(${s}, '[]'::jsonb)) AS element(v) WHERE unaccent(element.v) ILIKE unaccent(${pattern}))`
    }
  }
  if (op.op === "contains" || op.op === "not_contains") {
    const pattern = `%${escapeLike(String(value))}%`
    const match = sql`coalesce(unaccent(${s}::text) ILIKE unaccent(${pattern}), false)`
    return op.op === "contains" ? match : sql`NOT ${match}`
  }
  if (field.type === "datetime" && typeof value === "string" && DATE_ONLY.test(value)) {
    // A date on a datetime field means that whole UTC day.
    const dayStart = sql`(${value}::date::timestamp AT TIME ZONE 'UTC')`
    const dayEnd = sql`((${value}::date + 1)::timestamp AT TIME ZONE 'UTC')`
    switch (op.op) {
      case "eq":
        return sql`(${s} >= ${dayStart} AND ${s} < ${dayEnd})`
      case "neq":
        return sql`NOT coalesce(${s} >= ${dayStart} AND ${s} < ${dayEnd}, false)`
      case "gt":
        return sql`${s} >= ${dayEnd}`
      case "gte":
        return sql`${s} >= ${dayStart}`
      case "lt":
        return sql`${s} < ${dayStart}`
      case "lte":
        return sql`${s} < ${dayEnd}`
    }
  }
  if (field.caseInsensitive && (op.op === "eq" || op.op === "neq")) {
    const same = sql`lower(${s}::text) = lower(${value}::text)`
    return op.op === "eq" ? same : sql`NOT coalesce(${same}, false)`
  }
  const typed = sql`${value}::${sql.literal(sqlTypeOf[field.type])}`
  switch (op.op) {
    case "eq":
      return sql`${s} = ${typed}`
    case "neq":
      return sql`${s} IS DISTINCT FROM ${typed}`
    case "gt":
      return sql`${s} > ${typed}`
    case "gte":
      return sql`${s} >= ${typed}`
    case "lt":
      return sql`${s} < ${typed}`
    default:
      return sql`${s} <= ${typed}`
  }
}

export const compileFilter = (sql: Sql, fields: Readonly<Record<string, FilterField>>, node: FilterNode): Fragment => {
  if (node.kind === "condition") {
    const field = fields[node.field]
    return compileCondition(sql, field, fieldSql(node.field, field), node)
  }
  if (node.conditions.length === 0) return sql`TRUE`
  const parts = node.conditions.map((child) => compileFilter(sql, fields, child))
  return node.logic === "and" ? sql.and(parts) : sql.or(parts)
}

/**
 * Rows strictly beyond (value, id) in walking direction. Nulls sort last
 * ascending and first descending, so the walk stays total on nullable fields.
 */
const keysetPredicate = (
  sql: Sql,
  sort: { readonly sortSql: string; readonly sqlType: string; readonly nullable: boolean; readonly idType: string },
  ascending: boolean,
  key: readonly [unknown, string]
): Fragment => {
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

export const makeResourceRepository = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  /** Rows of the caller's tenant (tenant resources), live unless asked otherwise, matching `filter`. */
  const scopeConditions = (resource: AnyResource, tenantId: string, options: { withDeleted?: boolean; filter?: FilterNode }) => {
    const where: Array<Fragment> = []
    if (isTenantOwned(resource)) {
      where.push(sql`r.tenant_id = ${tenantId}::uuid`)
      if (!options.withDeleted) where.push(sql`r.deleted_at IS NULL`)
    }
    if (options.filter) where.push(compileFilter(sql, resource.filters, options.filter))
    return where
  }

  const baseConditions = (resource: AnyResource, tenantId: string, query: ListQuery): Array<Fragment> => {
    const where = scopeConditions(resource, tenantId, { withDeleted: query.withDeleted, ...(query.filter ? { filter: query.filter } : {}) })
    if (query.search) {
      // The search text goes through the same parser and dictionaries as the indexed
      // text, so "SKU-12345" or an email splits alike on both sides; each lexeme
      // then matches as a prefix. No lexeme at all yields NULL: nothing matches.
      const tsquery = sql`(SELECT to_tsquery('simple', string_agg(quote_literal(t.lexeme) || ':*', ' & ')) FROM unnest(to_tsvector('erp_search', ${query.search})) AS t)`
      where.push(
        query.includePayloadSearch && resource.search?.payload
          ? sql`coalesce(r.search_vector @@ ${tsquery} OR r.payload_vector @@ ${tsquery}, false)`
          : sql`coalesce(r.search_vector @@ ${tsquery}, false)`
      )
    }
    return where
  }

  const sortOf = (resource: AnyResource, query: ListQuery) => {
    const field = resource.filters[query.sort.field]
    return {
      sortSql: fieldSql(query.sort.field, field),
      sqlType: field.type === "number" && query.sort.field === "id" ? idType(resource) : sqlTypeOf[field.type],
      nullable: field.nullable ?? false,
      idType: idType(resource)
    }
  }

  const from = (resource: AnyResource) => sql.literal(`${resource.table} r ${resource.joins?.sql ?? ""}`)
  const selectList = (resource: AnyResource) =>
    sql.literal(
      ["r.id", "r.created_at", "r.updated_at", ...(isTenantOwned(resource) ? ["r.deleted_at"] : [])]
        .concat(Object.keys(resource.columns).map((column) => `r.${column}`))
        .concat(resource.joins ? [resource.joins.select] : [])
        .join(", ")
    )
  const idType = (resource: AnyResource) => (resource.idType === "integer" ? "integer" : "uuid")

  const page = (resource: AnyResource, tenantId: string, query: ListQuery, request: { direction: "next" | "previous"; key: readonly [unknown, string] | null; take: number }) => {
    const sort = sortOf(resource, query)
    const { sortSql, nullable } = sort
    const ascending = (query.sort.order === "asc") === (request.direction === "next")
    const where = baseConditions(resource, tenantId, query)
    if (request.key) where.push(keysetPredicate(sql, sort, ascending, request.key))
    const dir = ascending ? "ASC" : "DESC"
    const order = nullable
      ? `(${sortSql} IS NULL) ${dir}, ${sortSql} ${dir}, r.id ${dir}`
      : `${sortSql} ${dir}, r.id ${dir}`
    return sql<Record<string, unknown>>`SELECT ${selectList(resource)}, ${sql.literal(sortSql)} AS "__sort_key" FROM ${from(resource)} WHERE ${sql.and(where)} ORDER BY ${sql.literal(order)} LIMIT ${request.take}`.pipe(
      Effect.map((rows) =>
        rows.map((row): KeyedRecord => ({
          record: resource.toRecord(row),
          key: [row.__sort_key ?? null, String(row.id)]
        }))
      ),
      Effect.orDie
    )
  }

  const exists = (resource: AnyResource, tenantId: string, query: ListQuery, direction: "next" | "previous", key: readonly [unknown, string]) => {
    const ascending = (query.sort.order === "asc") === (direction === "next")
    const where = [...baseConditions(resource, tenantId, query), keysetPredicate(sql, sortOf(resource, query), ascending, key)]
    return sql`SELECT 1 FROM ${from(resource)} WHERE ${sql.and(where)} LIMIT 1`.pipe(
      Effect.map((rows) => rows.length > 0),
      Effect.orDie
    )
  }

  const findOne = (resource: AnyResource, tenantId: string, filter: FilterNode, options: { withDeleted?: boolean; forUpdate?: boolean } = {}) => {
    const where = scopeConditions(resource, tenantId, { ...options, filter })
    const lock = sql.literal(options.forUpdate ? "FOR UPDATE OF r" : "")
    return sql<Record<string, unknown>>`SELECT ${selectList(resource)} FROM ${from(resource)} WHERE ${sql.and(where)} LIMIT 1 ${lock}`.pipe(
      Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), (row) => resource.toRecord(row))),
      Effect.orDie
    )
  }

  const findById = (resource: AnyResource, tenantId: string, id: string, options: { withDeleted?: boolean; forUpdate?: boolean; scope?: FilterNode } = {}) => {
    const byId: FilterNode = { kind: "condition", field: "id", op: "eq", value: id }
    const filter: FilterNode = options.scope ? { kind: "group", logic: "and", conditions: [byId, options.scope] } : byId
    return findOne(resource, tenantId, filter, options)
  }

  const cast = (resource: AnyResource, column: string, value: unknown): Fragment => {
    const type = resource.columns[column]
    if (!type) throw new Error(`Column ${column} is not declared on ${resource.table}`)
    if (value === null || value === undefined) return sql`NULL::${sql.literal(type)}`
    const encoded = type === "jsonb" ? JSON.stringify(value) : value
    return sql`${encoded as string}::${sql.literal(type)}`
  }

  const userErrors = (resource: AnyResource) => (error: SqlError) =>
    isUniqueViolation(error) ? Effect.fail(conflictFrom(error, resource.title)) : Effect.die(error)

  const insert = (resource: AnyResource, tenantId: string, values: ColumnValues) => {
    const columns = Object.keys(values)
    const names = sql.literal(["tenant_id", ...columns].join(", "))
    const params = [sql`${tenantId}::uuid`, ...columns.map((column) => cast(resource, column, values[column]))]
    return sql<{ id: string }>`INSERT INTO ${sql.literal(resource.table)} (${names}) VALUES (${sql.csv(params)}) RETURNING id`.pipe(
      Effect.map((rows) => rows[0].id),
      Effect.catchTag("SqlError", userErrors(resource))
    )
  }

  const update = (resource: AnyResource, tenantId: string, id: string, values: ColumnValues) => {
    const sets = Object.keys(values).map((column) => sql`${sql.literal(column)} = ${cast(resource, column, values[column])}`)
    sets.push(sql`updated_at = now()`)
    return sql`UPDATE ${sql.literal(resource.table)} SET ${sql.csv(sets)} WHERE tenant_id = ${tenantId}::uuid AND id = ${id}::uuid AND deleted_at IS NULL RETURNING id`.pipe(
      Effect.map((rows) => rows.length > 0),
      Effect.catchTag("SqlError", userErrors(resource))
    )
  }

  const softDelete = (resource: AnyResource, tenantId: string, id: string) =>
    sql`UPDATE ${sql.literal(resource.table)} SET deleted_at = now(), updated_at = now() WHERE tenant_id = ${tenantId}::uuid AND id = ${id}::uuid AND deleted_at IS NULL RETURNING id`.pipe(
      Effect.map((rows) => rows.length > 0),
      Effect.orDie
    )

  return ResourceRepository.of({ page, exists, findOne, findById, insert, update, softDelete })
})

export const layerResourceRepository = Layer.effect(ResourceRepository, makeResourceRepository)

const isSqlError = (error: unknown): error is SqlError => error instanceof SqlErrorClass

export const layerTransactions = Layer.effect(
  Transactions,
  Effect.map(SqlClient.SqlClient, (sql) =>
    Transactions.of({
      // Infrastructure failures become defects; the business errors of `effect` pass through unchanged.
      run: <A, E, R>(effect: Effect.Effect<A, E, R>) =>
        sql.withTransaction(effect).pipe(Effect.catchIf(isSqlError, Effect.die)) as Effect.Effect<A, E, R>
    }))
)
