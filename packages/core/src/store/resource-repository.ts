import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import type { Fragment, Statement } from "@effect/sql/Statement"
import { Effect, Layer, Option } from "effect"
import { type ChildPlan, emptyPlan } from "../engine/draft.js"
import type { ColumnType, Fields } from "../engine/field.js"
import { fieldSql } from "../engine/fields.js"
import type { FilterNode } from "../engine/filter.js"
import type { ListQuery } from "../engine/list-query.js"
import { CHUNK_TEXT, type InsertOptions, type UpdateOptions, type KeyedAnswer, type KeyedRecord, type PageLines, type PageRequest, type ReferenceLookup, ResourceRepository } from "../engine/repository.js"
import { type AnyResource, type ChildCollection, idColumnType, isSoftDeleted, isTenantOwned, type Row } from "../engine/resource.js"
import { compileFilter } from "./sql/filter-compiler.js"
import { keysetOrder, keysetPredicate, keysetSort, keysetUntil } from "./sql/keyset.js"
import { makeDirect } from "./direct-statements.js"
import { statementShape } from "./statement-shapes.js"
import { answerColumns, derivedFieldsRead, readsDependentRows, recordJson } from "./record-json.js"
import type { StatementEvent } from "../engine/unit-of-work.js"
import { deliveriesOfEvents, eventsOfWritten } from "./event-rows.js"
import { constraintError, pgError } from "./sql-errors.js"

/** Records as the store built them (`recordJson`): parsed, never decoded field by field. */
const parsed = (rows: ReadonlyArray<{ readonly record: string }>): ReadonlyArray<Row> => rows.map((row) => JSON.parse(row.record) as Row)

export const makeResourceRepository = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const direct = yield* makeDirect

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

  const table = (name: string) => sql.literal(name)

  const record = (resource: AnyResource) => sql.literal(`${recordJson(resource)} AS record`)

  /** Live-or-deleted records of `resource` by id (what `expand[]` answers in full). */
  const byIds = (resource: AnyResource, tenantId: string, ids: ReadonlyArray<unknown>): Effect.Effect<ReadonlyArray<Row>> => {
    if (ids.length === 0) return Effect.succeed([])
    const where = [...scopeConditions(resource, tenantId, { withDeleted: true }), sql`r.id IN ${sql.in(ids)}`]
    // One id (a record read back after its write) is a fixed shape; a list of ids is a new text per length.
    return direct(sql<{ record: string }>`SELECT ${record(resource)} FROM ${table(resource.table)} r WHERE ${sql.and(where)}`, ids.length === 1).pipe(Effect.orDie, Effect.map(parsed))
  }

  const distinct = (values: ReadonlyArray<unknown>) => [...new Set(values.filter((value) => value !== null && value !== undefined))]

  // ---- Reads ----

  /** What selects a page's rows in walking order: its conditions, order and limit. */
  const pageBounds = (resource: AnyResource, tenantId: string, query: ListQuery, request: PageRequest) => {
    const sort = keysetSort(resource, query.sort.field)
    const ascending = (query.sort.order === "asc") === (request.direction === "next")
    const where = baseConditions(resource, tenantId, query)
    if (request.key) where.push(keysetPredicate(sql, sort, ascending, request.key))
    // `rangeEnd` refuses nullable sorts, so a range's end is always a row comparison.
    if (request.until) where.push(keysetUntil(sql, sort, ascending, request.until))
    const limit = request.until ? sql`` : sql`LIMIT ${request.take}`
    return { sortSql: sort.sortSql, where: sql.and(where), order: sql.literal(keysetOrder(sort, ascending)), limit }
  }

  /** The rows of a page in walking order, with `columns` selected beside their sort key and id. */
  const pageRows = <A extends object>(resource: AnyResource, tenantId: string, query: ListQuery, request: PageRequest, columns: Fragment) => {
    const { sortSql, where, order, limit } = pageBounds(resource, tenantId, query, request)
    return direct(sql<A & { __sort_key: unknown; __id: unknown }>`SELECT ${columns}, ${sql.literal(sortSql)} AS "__sort_key", r.id AS "__id"
      FROM ${table(resource.table)} r WHERE ${where} ORDER BY ${order} ${limit}`).pipe(Effect.orDie)
  }

  const rangeEnd = (resource: AnyResource, tenantId: string, query: ListQuery, after: PageRequest["key"], size: number) => {
    if (keysetSort(resource, query.sort.field).nullable) return Effect.die(new Error(`${resource.name}: a range cannot end on a nullable sort field`))
    // Keys only, and only the `size`-th comes back: the index walks `size` entries, no record is
    // built and the host decodes one row, not a range's worth.
    const { sortSql, where, order } = pageBounds(resource, tenantId, query, { direction: "next", key: after, take: size })
    return direct(sql<{ __sort_key: unknown; __id: unknown }>`SELECT ${sql.literal(sortSql)} AS "__sort_key", r.id AS "__id"
      FROM ${table(resource.table)} r WHERE ${where} ORDER BY ${order} OFFSET ${size - 1} LIMIT 1`).pipe(
      Effect.orDie,
      Effect.map((rows) => (rows.length === 0 ? null : keyOf(rows[0])))
    )
  }

  const keyOf = (row: { __sort_key: unknown; __id: unknown }) => [row.__sort_key ?? null, String(row.__id)] as const

  const page = (resource: AnyResource, tenantId: string, query: ListQuery, request: PageRequest) =>
    Effect.map(pageRows<{ record: string }>(resource, tenantId, query, request, record(resource)), (rows) =>
      rows.map((row): KeyedRecord => ({ record: JSON.parse(row.record) as Row, key: keyOf(row) })))

  const pageAnswers = (resource: AnyResource, tenantId: string, query: ListQuery, request: PageRequest) =>
    Effect.map(pageRows<{ answer: string }>(resource, tenantId, query, request, sql.literal(`${recordJson(resource, "answer")} AS answer`)), (rows) =>
      rows.map((row): KeyedAnswer => ({ answer: row.answer, key: keyOf(row) })))

  /**
   * A page's answers as NDJSON lines in chunks (`PageLines`), aggregated by the store: an export
   * receives a few texts per range, not one string per record to allocate, join and collect. Each
   * line is `row_to_json` of the page's own select list (`answerColumns`), the text `recordJson`
   * builds with a subquery per record, a third cheaper. A chunk is the lines whose running total of
   * bytes falls in one `CHUNK_TEXT` (a window over the page's rows in their order; an ordered
   * derived table is never merged into the query around it, and a window without an order reads its
   * rows as they come); a range as one text (256 KB) was a large object in the host, each decoded
   * and collected twenty times slower than chunks are.
   *
   * A range up to `until` is read with a limit all the same: an index stops at a row comparison's
   * upper bound only where its first value changes, so without one a range of records sharing a
   * creation time (a bulk insert) scanned on to the last of them, every range (a million products
   * scanned half a million index entries a range). The limit is the range's size when its end was
   * found; a read that reaches it without the end row (records written into the range since) is
   * read again with a larger one, so the range is always whole, as one statement reads it.
   */
  const pageLines = (resource: AnyResource, tenantId: string, query: ListQuery, request: PageRequest): Effect.Effect<PageLines> => {
    const { where, order } = pageBounds(resource, tenantId, query, request)
    const columns = answerColumns(resource)
    const until = request.until && columns.includes(`r.id AS "id"`) ? request.until : undefined
    type Chunk = { n: number; lines: string; ends: boolean | null }
    const read = (limit: Fragment, endId: string | undefined) =>
      direct(sql<Chunk>`SELECT count(*)::int AS n, string_agg(c.line, E'\\n' ORDER BY c.rn) AS lines, bool_or(c.hit) AS ends
        FROM (SELECT b.line, b.hit, row_number() OVER w AS rn, sum(octet_length(b.line)) OVER w AS upto
          FROM (SELECT row_to_json(a)::text AS line, ${endId === undefined ? sql`NULL::boolean` : sql`a."id" = ${endId}::${idType(resource)}`} AS hit
            FROM (SELECT ${sql.literal(columns)} FROM ${table(resource.table)} r WHERE ${where} ORDER BY ${order} ${limit}) a) b
          WINDOW w AS (ROWS UNBOUNDED PRECEDING)) c
        GROUP BY (c.upto - octet_length(c.line)) / ${sql.literal(String(CHUNK_TEXT))} ORDER BY min(c.rn)`).pipe(Effect.orDie)
    const answer = (chunks: ReadonlyArray<Chunk>): PageLines => ({ count: chunks.reduce((sum, chunk) => sum + Number(chunk.n), 0), chunks: chunks.map((chunk) => chunk.lines) })
    const reachesEnd = (chunks: ReadonlyArray<Chunk>) => chunks.some((chunk) => chunk.ends === true)
    if (!request.until) return Effect.map(read(sql`LIMIT ${request.take}`, undefined), answer)
    if (!until) return Effect.map(read(sql``, undefined), answer)
    const whole = (limit: number): Effect.Effect<PageLines> =>
      Effect.flatMap(read(sql`LIMIT ${limit}`, until[1]), (chunks) => {
        const range = answer(chunks)
        return range.count < limit || reachesEnd(chunks) ? Effect.succeed(range) : whole(limit * 4)
      })
    return whole(request.take)
  }

  const count = (resource: AnyResource, tenantId: string, query: ListQuery) =>
    direct(sql<{ n: number }>`SELECT count(*) AS n FROM ${table(resource.table)} r WHERE ${sql.and(baseConditions(resource, tenantId, query))}`).pipe(
      Effect.map((rows) => Number(rows[0].n)),
      Effect.orDie
    )

  type FindOptions = { readonly withDeleted?: boolean | undefined; readonly forUpdate?: boolean | undefined; readonly limit: number }

  /** Several rows may match a lookup (suppliers sharing a tax id): the first in the default order answers. */
  const firstOrder = (resource: AnyResource) => {
    const { field, order } = resource.defaultSort
    return sql.literal(`${fieldSql(field, resource.filters[field])} ${order === "asc" ? "ASC" : "DESC"}, r.id`)
  }

  /** The records matching `filter`, built by the store in one statement (a lock taken on the rows themselves). */
  const recordsStatement = (resource: AnyResource, tenantId: string, filter: FilterNode, options: FindOptions) => {
    const where = scopeConditions(resource, tenantId, { withDeleted: options.withDeleted, filter })
    const lock = sql.literal(options.forUpdate ? "FOR UPDATE OF r" : "")
    return sql<{ record: string }>`SELECT ${record(resource)} FROM ${table(resource.table)} r WHERE ${sql.and(where)}
      ORDER BY ${firstOrder(resource)} LIMIT ${options.limit} ${lock}`
  }

  /** Whether the records can be read and locked in one statement (else they are locked first, read after). */
  const readsInOne = (resource: AnyResource, options: FindOptions) => !options.forUpdate || !readsDependentRows(resource)

  const findMany = (resource: AnyResource, tenantId: string, filter: FilterNode, options: FindOptions) => {
    if (readsInOne(resource, options)) return direct(recordsStatement(resource, tenantId, filter, options), true).pipe(Effect.orDie, Effect.map(parsed))
    const first = firstOrder(resource)
    const where = scopeConditions(resource, tenantId, { withDeleted: options.withDeleted, filter })
    // Locked first, read after: a statement that waited for the lock still reads with the snapshot it
    // started with, so children and totals written by the transaction it waited for would be missed.
    return sql<{ id: unknown }>`SELECT r.id FROM ${table(resource.table)} r WHERE ${sql.and(where)} ORDER BY ${first} LIMIT ${options.limit} FOR UPDATE`.pipe(
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
  }

  const findOne = (resource: AnyResource, tenantId: string, filter: FilterNode, options: { withDeleted?: boolean; forUpdate?: boolean } = {}) =>
    Effect.map(findMany(resource, tenantId, filter, { ...options, limit: 1 }), (records) => Option.fromNullable(records[0]))

  const byIdFilter = (id: string): FilterNode => ({ kind: "condition", field: "id", op: "eq", value: id })

  /** A read by id's statement, one shape per resource and options (`statementShape`). */
  const byIdShapes = new WeakMap<AnyResource, Map<string, (tenantId: string, id: string) => Statement<{ record: string }>>>()
  const byIdStatement = (resource: AnyResource, options: FindOptions) => {
    let shapes = byIdShapes.get(resource)
    if (shapes === undefined) {
      shapes = new Map()
      byIdShapes.set(resource, shapes)
    }
    const variant = `${options.withDeleted === true}:${options.forUpdate === true}`
    let shape = shapes.get(variant)
    if (shape === undefined) {
      shape = statementShape(sql, (tenantId, id) => recordsStatement(resource, tenantId, byIdFilter(id), options))
      shapes.set(variant, shape)
    }
    return shape
  }

  const findById = (resource: AnyResource, tenantId: string, id: string, options: { withDeleted?: boolean; forUpdate?: boolean; scope?: FilterNode } = {}) => {
    const find = { withDeleted: options.withDeleted, forUpdate: options.forUpdate, limit: 1 }
    if (options.scope || !readsInOne(resource, find)) {
      return findOne(resource, tenantId, options.scope ? { kind: "group", logic: "and", conditions: [byIdFilter(id), options.scope] } : byIdFilter(id), options)
    }
    // A failed statement is a defect, as `Effect.orDie` makes it: one step of the runtime for both.
    return Effect.matchEffect(direct(byIdStatement(resource, find)(tenantId, id), true), {
      onFailure: Effect.die,
      onSuccess: (rows) => Effect.succeed(Option.fromNullable(parsed(rows)[0]))
    })
  }

  /** Every lookup in one query: the ids found, each tagged with its lookup's index. */
  const missing = (tenantId: string, lookups: ReadonlyArray<ReferenceLookup>) => {
    const wanted = lookups.map((lookup) => distinct(lookup.ids).map(String))
    const selects = lookups.flatMap((lookup, index) => {
      if (wanted[index].length === 0) return []
      const where = [...scopeConditions(lookup.resource, tenantId, { filter: lookup.scope }), sql`r.id IN ${sql.in(wanted[index])}`]
      return [sql`SELECT ${sql.literal(String(index))} AS lookup, r.id::text AS id FROM ${table(lookup.resource.table)} r WHERE ${sql.and(where)}`]
    })
    if (selects.length === 0) return Effect.succeed(wanted)
    return direct(sql<{ lookup: number; id: string }>`${sql.join(" UNION ALL ", false)(selects)}`).pipe(
      Effect.orDie,
      Effect.map((rows) => {
        const present = new Set(rows.map((row) => `${Number(row.lookup)}\u0000${row.id}`))
        return wanted.map((ids, index) => ids.filter((id) => !present.has(`${index}\u0000${id}`)))
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
  const withEvent = <A extends object>(write: Statement<A>, event: StatementEvent | undefined): Statement<A> =>
    event === undefined
      ? write
      : sql<A>`WITH written AS (${write}),
          event AS (${eventsOfWritten(sql, event.origin, event.resource, event.action)}),
          deliveries AS (${deliveriesOfEvents(sql)})
        SELECT * FROM written`

  /** One statement for a new record and its answer: RETURNING reads it as `findById` would. */
  const insertReturning = (resource: AnyResource, tenantId: string, values: Row, options: InsertOptions = {}) => {
    const children = (options.children ?? []).filter((written) => written.rows.length > 0)
    if (options.number === undefined && children.length === 0) {
      const names = Object.keys(values)
      const params = [sql`${tenantId}::uuid`, ...names.map((name) => cast(resource.columns[name], name, values[name]))]
      const list = sql.literal(["tenant_id", ...names].join(", "))
      return direct(withEvent(sql<{ record: string }>`INSERT INTO ${table(resource.table)} AS r (${list}) VALUES (${sql.csv(params)}) RETURNING r.id, ${record(resource)}`, options.event), true).pipe(
        Effect.catchTag("SqlError", userErrors(resource.title, resource.fields)),
        Effect.map((rows) => parsed(rows)[0])
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
      Effect.flatMap((rows) => readBack ? Effect.map(byIds(resource, tenantId, [rows[0].id]), (records) => records[0]) : Effect.succeed(parsed(rows)[0]))
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
   * With `children`, their removals, changes and insertions are in the statement too.
   */
  const updateReturning = (resource: AnyResource, tenantId: string, id: string, values: Row, options: UpdateOptions = {}) => {
    const children = (options.children ?? []).filter((written) => !emptyPlan(written.plan))
    if (children.length > 0) return updateWithChildren(resource, tenantId, id, values, { ...options, children })
    const unchanged = options.unchangedSince === undefined ? sql.literal("") : sql`AND r.updated_at = ${options.unchangedSince}::timestamptz`
    return direct(withEvent(sql<{ record: string }>`UPDATE ${table(resource.table)} AS r SET ${sql.csv(setList(resource.columns, values))}
      WHERE r.tenant_id = ${tenantId}::uuid AND r.id = ${id}::${idType(resource)} ${unchanged} RETURNING r.id, ${record(resource)}`, options.event), true).pipe(
      Effect.catchTag("SqlError", userErrors(resource.title, resource.fields)),
      Effect.map((rows) => Option.fromNullable(parsed(rows)[0]))
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
      Effect.map((rows) => Option.fromNullable(rows[0])),
      Effect.catchTag("SqlError", (error) => {
        const fields = pgError(error)
        // A new child found no parent row written: another write came since `unchangedSince`.
        const raced = options.unchangedSince !== undefined && fields.code === "23502" &&
          collections.some((collection) => collection.table === fields.table && collection.parentKey === fields.column)
        return raced ? Effect.succeed(Option.none<{ id: string; record: string }>()) : writeErrors(resource, collections)(error)
      }),
      Effect.flatMap(Option.match({
        onNone: () => Effect.succeed(Option.none<Row>()),
        onSome: (row: { id: string; record: string }) => readBack ? Effect.map(byIds(resource, tenantId, [row.id]), (records) => Option.fromNullable(records[0])) : Effect.succeed(Option.some(parsed([row])[0]))
      }))
    )
  }

  /** The collection whose table refused a row names the field (`items.quantity`), as its own statement did; else the record. */
  const writeErrors = (resource: AnyResource, collections: ReadonlyArray<ChildCollection>) => (error: SqlError) => {
    const refused = collections.find((collection) => collection.table === pgError(error).table)
    return refused ? userErrors(refused.name, refused.fields)(error) : userErrors(resource.title, resource.fields)(error)
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
      if (plan.insert.length > 0) yield* insertRows(collection, tenantId, sql`${parentId}::uuid`, plan.insert)
    }).pipe(Effect.catchTag("SqlError", userErrors(collection.name, collection.fields)))

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

  const numberTaken = (tenantId: string, sequence: string) =>
    sql`INSERT INTO record_sequences (tenant_id, name, last_value) VALUES (${tenantId}::uuid, ${sequence}, 1)
      ON CONFLICT (tenant_id, name) DO UPDATE SET last_value = record_sequences.last_value + 1
      RETURNING last_value AS value`

  const nextNumber = (tenantId: string, sequence: string) =>
    numberTaken(tenantId, sequence).pipe(Effect.map((rows) => Number((rows[0] as { value: unknown }).value)), Effect.orDie)

  return ResourceRepository.of({ page, pageAnswers, pageLines, rangeEnd, count, findOne, findMany, findById, findByIds: byIds, missing, insert, insertReturning, update, updateReturning, setDeleted, writeChildren, nextNumber })
})

export const layerResourceRepository = Layer.effect(ResourceRepository, makeResourceRepository)
