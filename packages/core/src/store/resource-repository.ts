import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import type { Fragment, Statement } from "@effect/sql/Statement"
import { Effect, Either, Layer, Option, ParseResult, Schema } from "effect"
import type { ChildPlan } from "../engine/draft.js"
import type { AnyField, ColumnType, Fields, Pick } from "../engine/field.js"
import { fieldSql, type FilterField, sqlTypeOf } from "../engine/fields.js"
import type { FilterNode } from "../engine/filter.js"
import type { ListQuery } from "../engine/list-query.js"
import { type KeyedRecord, ResourceRepository } from "../engine/repository.js"
import { type AnyResource, type ChildCollection, idColumnType, isSoftDeleted, isTenantOwned, present, type Row } from "../engine/resource.js"
import type { StatementEvent } from "../engine/unit-of-work.js"
import { deliveriesOfEvents, eventsOfWritten } from "./event-rows.js"
import { constraintError } from "./sql-errors.js"

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

const entries = (fields: Fields) => Object.entries(fields) as Array<[string, AnyField]>

/** `r.<name>` or the field's SQL expression, for every stored or derived field the row decodes. */
const selectList = (fields: Fields): string =>
  entries(fields)
    .filter(([, field]) => field.column && (field.output || field.read))
    .map(([name, field]) => (field.column!.sql ? `(${field.column!.sql}) AS "${name}"` : `r.${name}`))
    .join(", ")

/** A decoder per schema, made once: rows that do not match their declaration are a defect, never a client error. */
const decoders = new WeakMap<object, (row: unknown) => Either.Either<Row, ParseResult.ParseError>>()
const decode = (schema: Schema.Schema<any, any>, row: unknown, what: string): Row => {
  let decoder = decoders.get(schema)
  if (!decoder) {
    decoder = Schema.decodeUnknownEither(schema) as (row: unknown) => Either.Either<Row, ParseResult.ParseError>
    decoders.set(schema, decoder)
  }
  const result = decoder(row)
  if (Either.isLeft(result)) throw new Error(`A stored ${what} does not match its declaration: ${ParseResult.TreeFormatter.formatErrorSync(result.left)}`)
  return result.right
}

const pickOf = (record: Row, pick: Pick | undefined): unknown => {
  if (pick === undefined) return record
  if (typeof pick === "string") return record[pick] ?? null
  if (Array.isArray(pick)) return Object.fromEntries(pick.map((name: string) => [name, record[name] ?? null]))
  return Object.fromEntries(Object.entries(pick).map(([name, source]) => [name, record[source] ?? null]))
}

const asDefinition = (target: unknown): AnyResource => target as AnyResource

/** How long an embedded catalog row is served from memory (catalogs change only on upgrades). */
const CATALOG_CACHE_MS = 10 * 60_000

export const makeResourceRepository = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  const idType = (resource: AnyResource) => sql.literal(idColumnType(resource))

  /** Rows of the caller's tenant (tenant resources), live unless asked otherwise, matching `filter`. */
  const scopeConditions = (resource: AnyResource, tenantId: string, options: { withDeleted?: boolean | undefined; filter?: FilterNode | undefined }) => {
    const where: Array<Fragment> = []
    if (isTenantOwned(resource)) {
      where.push(sql`r.tenant_id = ${tenantId}::uuid`)
      if (!options.withDeleted && isSoftDeleted(resource)) where.push(sql`r.deleted_at IS NULL`)
    }
    if (options.filter) where.push(compileFilter(sql, resource.filters, options.filter))
    return where
  }

  const baseConditions = (resource: AnyResource, tenantId: string, query: ListQuery): Array<Fragment> => {
    const where = scopeConditions(resource, tenantId, { withDeleted: query.withDeleted, filter: query.filter })
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
    const id = idColumnType(resource)
    return {
      sortSql: fieldSql(query.sort.field, field),
      sqlType: query.sort.field === "id" ? id : sqlTypeOf[field.type],
      nullable: field.nullable ?? false,
      idType: id
    }
  }

  const table = (name: string) => sql.literal(name)

  // ---- Assembly: embeds and children for a whole set of rows, one query each ----

  /** Live-or-deleted records of `resource` by id (an embed still shows a record removed since). */
  const byIds = (resource: AnyResource, tenantId: string, ids: ReadonlyArray<unknown>): Effect.Effect<ReadonlyArray<Row>> => {
    if (ids.length === 0) return Effect.succeed([])
    const where = [...scopeConditions(resource, tenantId, { withDeleted: true }), sql`r.id IN ${sql.in(ids)}`]
    return sql<Row>`SELECT ${sql.literal(selectList(resource.fields))} FROM ${table(resource.table)} r WHERE ${sql.and(where)}`.pipe(
      Effect.orDie,
      Effect.flatMap((rows) => assemble(resource.fields, resource.children, rows, tenantId)),
      Effect.map((rows) => rows.map((row) => decode(resource.row, row, resource.title)))
    )
  }

  /**
   * Catalog rows change only when new snapshots are loaded (an upgrade), so embeds of
   * them (a customer's city, a product's unit) are served from memory for a while:
   * a page of customers costs one query, not four.
   */
  const catalogRows = new Map<string, { readonly record: Row; readonly until: number }>()
  const embedded = (resource: AnyResource, tenantId: string, ids: ReadonlyArray<unknown>): Effect.Effect<ReadonlyArray<Row>> => {
    if (isTenantOwned(resource)) return byIds(resource, tenantId, ids)
    const now = Date.now()
    const hits: Array<Row> = []
    const misses: Array<unknown> = []
    for (const id of ids) {
      const cached = catalogRows.get(`${resource.table}:${String(id)}`)
      if (cached && cached.until > now) hits.push(cached.record)
      else misses.push(id)
    }
    if (misses.length === 0) return Effect.succeed(hits)
    return Effect.map(byIds(resource, tenantId, misses), (found) => {
      for (const record of found) catalogRows.set(`${resource.table}:${String(record.id)}`, { record, until: now + CATALOG_CACHE_MS })
      return [...hits, ...found]
    })
  }

  const distinct = (values: ReadonlyArray<unknown>) => [...new Set(values.filter((value) => value !== null && value !== undefined))]

  /** Puts each field's embed and each collection's children onto raw rows (not yet decoded). */
  const assemble = (fields: Fields, collections: ReadonlyArray<ChildCollection>, rows: ReadonlyArray<Row>, tenantId: string): Effect.Effect<ReadonlyArray<Row>> =>
    Effect.gen(function* () {
      if (rows.length === 0) return rows
      const out = rows.map((row) => ({ ...row }) as Record<string, unknown>)
      for (const [name, field] of entries(fields)) {
        const embed = field.embed
        if (!embed) continue
        const target = asDefinition(embed.resource())
        if (embed.kind === "one") {
          const found = yield* embedded(target, tenantId, distinct(out.map((row) => row[embed.key])))
          const byId = new Map(found.map((record) => [String(record.id), present(target, record)]))
          for (const row of out) {
            const record = row[embed.key] == null ? undefined : byId.get(String(row[embed.key]))
            row[name] = record === undefined ? null : pickOf(record, embed.pick)
          }
        } else {
          const ids = distinct(out.map((row) => row.id))
          const where = [...scopeConditions(target, tenantId, {}), sql`r.${sql.literal(embed.foreignKey)} IN ${sql.in(ids)}`]
          const { field: sortField, order } = target.defaultSort
          const sortSql = fieldSql(sortField, target.filters[sortField])
          const raw = yield* sql<Row>`SELECT ${sql.literal(selectList(target.fields))} FROM ${table(target.table)} r WHERE ${sql.and(where)}
            ORDER BY ${sql.literal(`${sortSql} ${order === "asc" ? "ASC" : "DESC"}, r.id`)}`.pipe(Effect.orDie)
          const records = (yield* assemble(target.fields, target.children, raw, tenantId)).map((row) => present(target, decode(target.row, row, target.title)))
          const groups = new Map<string, Array<unknown>>()
          for (const record of records) {
            const key = String(record[embed.foreignKey])
            groups.set(key, [...(groups.get(key) ?? []), embed.pick ? pickOf(record, embed.pick) : record])
          }
          for (const row of out) row[name] = groups.get(String(row.id)) ?? []
        }
      }
      for (const collection of collections) {
        const ids = distinct(out.map((row) => row.id))
        const where = [sql`r.tenant_id = ${tenantId}::uuid`, sql`r.${sql.literal(collection.parentKey)} IN ${sql.in(ids)}`]
        if (collection.softDelete) where.push(sql`r.deleted_at IS NULL`)
        const order = "position" in collection.fields ? "r.position, r.id" : "r.created_at, r.id"
        const raw = yield* sql<Row>`SELECT ${sql.literal(selectList(collection.fields))} FROM ${table(collection.table)} r WHERE ${sql.and(where)}
          ORDER BY ${sql.literal(order)}`.pipe(Effect.orDie)
        const children = (yield* assemble(collection.fields, [], raw, tenantId)).map((row) => decode(collection.row, row, collection.name))
        const groups = new Map<string, Array<Row>>()
        for (const child of children) {
          const key = String(child[collection.parentKey])
          groups.set(key, [...(groups.get(key) ?? []), child])
        }
        for (const row of out) row[collection.name] = groups.get(String(row.id)) ?? []
      }
      return out
    })

  const decodeAll = (resource: AnyResource, rows: ReadonlyArray<Row>, tenantId: string) =>
    Effect.map(assemble(resource.fields, resource.children, rows, tenantId), (assembled) => assembled.map((row) => decode(resource.row, row, resource.title)))

  // ---- Reads ----

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
    return sql<Row>`SELECT ${sql.literal(selectList(resource.fields))}, ${sql.literal(sortSql)} AS "__sort_key" FROM ${table(resource.table)} r
      WHERE ${sql.and(where)} ORDER BY ${sql.literal(order)} LIMIT ${request.take}`.pipe(
      Effect.orDie,
      Effect.flatMap((rows) =>
        Effect.map(decodeAll(resource, rows, tenantId), (records) =>
          records.map((record, index): KeyedRecord => ({ record, key: [rows[index].__sort_key ?? null, String(rows[index].id)] }))
        )
      )
    )
  }

  const count = (resource: AnyResource, tenantId: string, query: ListQuery) =>
    sql<{ n: number }>`SELECT count(*) AS n FROM ${table(resource.table)} r WHERE ${sql.and(baseConditions(resource, tenantId, query))}`.pipe(
      Effect.map((rows) => Number(rows[0].n)),
      Effect.orDie
    )

  const findMany = (resource: AnyResource, tenantId: string, filter: FilterNode, options: { withDeleted?: boolean; forUpdate?: boolean; limit: number }) => {
    const where = scopeConditions(resource, tenantId, { withDeleted: options.withDeleted, filter })
    const lock = sql.literal(options.forUpdate ? "FOR UPDATE" : "")
    // Several rows may match a lookup (suppliers sharing a tax id): the first in the default order answers.
    const { field, order } = resource.defaultSort
    const first = sql.literal(`${fieldSql(field, resource.filters[field])} ${order === "asc" ? "ASC" : "DESC"}, r.id`)
    return sql<Row>`SELECT ${sql.literal(selectList(resource.fields))} FROM ${table(resource.table)} r WHERE ${sql.and(where)}
      ORDER BY ${first} LIMIT ${options.limit} ${lock}`.pipe(
      Effect.orDie,
      Effect.flatMap((rows) => decodeAll(resource, rows, tenantId))
    )
  }

  const findOne = (resource: AnyResource, tenantId: string, filter: FilterNode, options: { withDeleted?: boolean; forUpdate?: boolean } = {}) =>
    Effect.map(findMany(resource, tenantId, filter, { ...options, limit: 1 }), (records) => Option.fromNullable(records[0]))

  const findById = (resource: AnyResource, tenantId: string, id: string, options: { withDeleted?: boolean; forUpdate?: boolean; scope?: FilterNode } = {}) => {
    const byId: FilterNode = { kind: "condition", field: "id", op: "eq", value: id }
    const filter: FilterNode = options.scope ? { kind: "group", logic: "and", conditions: [byId, options.scope] } : byId
    return findOne(resource, tenantId, filter, options)
  }

  const missing = (resource: AnyResource, tenantId: string, ids: ReadonlyArray<string | number>, scope?: FilterNode) => {
    const wanted = distinct(ids).map(String)
    if (wanted.length === 0) return Effect.succeed([])
    const where = [...scopeConditions(resource, tenantId, { filter: scope }), sql`r.id IN ${sql.in(wanted)}`]
    return sql<{ id: string }>`SELECT r.id::text AS id FROM ${table(resource.table)} r WHERE ${sql.and(where)}`.pipe(
      Effect.orDie,
      Effect.map((rows) => {
        const present = new Set(rows.map((row) => row.id))
        return wanted.filter((id) => !present.has(id))
      })
    )
  }

  // ---- Writes ----

  const cast = (type: ColumnType | undefined, name: string, value: unknown): Fragment => {
    if (!type) throw new Error(`Column ${name} is not declared`)
    if (value === null || value === undefined) return sql`NULL::${sql.literal(type)}`
    const encoded = type === "jsonb" ? JSON.stringify(value) : value
    return sql`${encoded as string}::${sql.literal(type)}`
  }

  const userErrors = (title: string, fields: Fields) => (error: SqlError) => {
    const mapped = constraintError(error, title, Object.keys(fields))
    return mapped ? Effect.fail(mapped) : Effect.die(error)
  }

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

  /** The write with its event and the event's deliveries in the same statement, when a unit of one statement asks for it. */
  const withEvent = (write: Statement<Row>, event: StatementEvent | undefined): Statement<Row> =>
    event === undefined
      ? write
      : sql<Row>`WITH written AS (${write}),
          event AS (${eventsOfWritten(sql, event.origin, event.resource, event.action)}),
          deliveries AS (${deliveriesOfEvents(sql)})
        SELECT * FROM written`

  /** One statement for a new record and its answer: RETURNING reads it as `findById` would. */
  const insertReturning = (resource: AnyResource, tenantId: string, values: Row, options: { readonly event?: StatementEvent } = {}) => {
    const names = Object.keys(values)
    const params = [sql`${tenantId}::uuid`, ...names.map((name) => cast(resource.columns[name], name, values[name]))]
    const list = sql.literal(["tenant_id", ...names].join(", "))
    return withEvent(sql<Row>`INSERT INTO ${table(resource.table)} AS r (${list}) VALUES (${sql.csv(params)}) RETURNING ${sql.literal(selectList(resource.fields))}`, options.event).pipe(
      Effect.catchTag("SqlError", userErrors(resource.title, resource.fields)),
      Effect.flatMap((rows) => decodeAll(resource, rows, tenantId)),
      Effect.map((records) => records[0])
    )
  }

  // Each write moves `updated_at` forward, by a millisecond at least (its precision): a write
  // without a lock checks that no other came between its read and its update by it.
  const setList = (columns: Readonly<Record<string, ColumnType>>, values: Row) => [
    ...Object.keys(values).map((name) => sql`${sql.literal(name)} = ${cast(columns[name], name, values[name])}`),
    sql`updated_at = greatest(now(), updated_at + interval '1 millisecond')`
  ]

  const update = (resource: AnyResource, tenantId: string, id: string, values: Row) =>
    sql`UPDATE ${table(resource.table)} SET ${sql.csv(setList(resource.columns, values))}
      WHERE tenant_id = ${tenantId}::uuid AND id = ${id}::${idType(resource)}`.pipe(
      Effect.asVoid,
      Effect.catchTag("SqlError", userErrors(resource.title, resource.fields))
    )

  /**
   * The update and the record's new state in one statement (RETURNING reads it as `findById`
   * would); none when `unchangedSince` is given and the record's `updated_at` moved since.
   */
  const updateReturning = (resource: AnyResource, tenantId: string, id: string, values: Row, options: { readonly event?: StatementEvent; readonly unchangedSince?: string } = {}) => {
    const unchanged = options.unchangedSince === undefined ? sql.literal("") : sql`AND r.updated_at = ${options.unchangedSince}::timestamptz`
    return withEvent(sql<Row>`UPDATE ${table(resource.table)} AS r SET ${sql.csv(setList(resource.columns, values))}
      WHERE r.tenant_id = ${tenantId}::uuid AND r.id = ${id}::${idType(resource)} ${unchanged} RETURNING ${sql.literal(selectList(resource.fields))}`, options.event).pipe(
      Effect.catchTag("SqlError", userErrors(resource.title, resource.fields)),
      Effect.flatMap((rows) => decodeAll(resource, rows, tenantId)),
      Effect.map((records) => Option.fromNullable(records[0]))
    )
  }

  const setDeleted = (resource: AnyResource, tenantId: string, id: string, deleted: boolean, values: Row = {}) =>
    sql`UPDATE ${table(resource.table)} SET ${sql.csv([...setList(resource.columns, values), sql`deleted_at = ${sql.literal(deleted ? "now()" : "NULL")}`])}
      WHERE tenant_id = ${tenantId}::uuid AND id = ${id}::${idType(resource)} AND deleted_at ${sql.literal(deleted ? "IS NULL" : "IS NOT NULL")}
      RETURNING id`.pipe(
      Effect.map((rows) => rows.length > 0),
      Effect.catchTag("SqlError", userErrors(resource.title, resource.fields))
    )

  const writeChildren = (collection: ChildCollection, tenantId: string, parentId: string, plan: ChildPlan) =>
    Effect.gen(function* () {
      const owned = sql`tenant_id = ${tenantId}::uuid AND ${sql.literal(collection.parentKey)} = ${parentId}::uuid`
      if (plan.remove.length > 0) {
        yield* collection.softDelete
          ? sql`UPDATE ${table(collection.table)} SET deleted_at = now(), updated_at = now() WHERE ${owned} AND id IN ${sql.in(plan.remove)}`
          : sql`DELETE FROM ${table(collection.table)} WHERE ${owned} AND id IN ${sql.in(plan.remove)}`
      }
      for (const change of plan.update) {
        yield* sql`UPDATE ${table(collection.table)} SET ${sql.csv(setList(collection.columns, change.values))} WHERE ${owned} AND id = ${change.id}::uuid`
      }
      for (const values of plan.insert) {
        yield* insertRow(collection.table, collection.columns, values, { tenant_id: tenantId, [collection.parentKey]: parentId })
      }
    }).pipe(Effect.catchTag("SqlError", userErrors(collection.name, collection.fields)))

  const nextNumber = (tenantId: string, sequence: string) =>
    sql<{ value: number }>`INSERT INTO record_sequences (tenant_id, name, last_value) VALUES (${tenantId}::uuid, ${sequence}, 1)
      ON CONFLICT (tenant_id, name) DO UPDATE SET last_value = record_sequences.last_value + 1
      RETURNING last_value AS value`.pipe(Effect.map((rows) => Number(rows[0].value)), Effect.orDie)

  return ResourceRepository.of({ page, count, findOne, findMany, findById, findByIds: byIds, missing, insert, insertReturning, update, updateReturning, setDeleted, writeChildren, nextNumber })
})

export const layerResourceRepository = Layer.effect(ResourceRepository, makeResourceRepository)
