import type { Fragment } from "effect/sql/Statement"
import { Effect } from "effect"
import type { ListQuery } from "../../engine/list-query.js"
import { CHUNK_TEXT, type KeyedAnswer, type KeyedRecord, type PageLines, type PageRequest } from "../../engine/repository.js"
import type { AnyResource } from "../../engine/resource.js"
import { answerColumns, recordJson } from "../record-json.js"
import { listConditions } from "../sql/conditions.js"
import { keysetOrder, keysetPredicate, keysetSort, keysetUntil } from "../sql/keyset.js"
import { decoded, type RepositorySql } from "./repository-sql.js"

/**
 * A list's pages, in the three shapes its readers take: records (`page`), each record's answer
 * as JSON text (`pageAnswers`, a REST list), and NDJSON lines in chunks (`pageLines`, an export),
 * with the keys that bound an export's ranges (`rangeEnd`) and the count of a walk (`count`).
 */
export const makePages = ({ sql, direct, table, record, idType }: RepositorySql) => {
  /** What selects a page's rows in walking order: its conditions, order and limit. */
  const pageBounds = (resource: AnyResource, tenantId: string, query: ListQuery, request: PageRequest) => {
    const sort = keysetSort(resource, query.sort.field)
    const ascending = (query.sort.order === "asc") === (request.direction === "next")
    const where = listConditions(sql, resource, tenantId, query)
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
    Effect.map(pageRows<{ record: string }>(resource, tenantId, query, request, record(resource)), (rows) => {
      const records = decoded(resource)(rows)
      return rows.map((row, index): KeyedRecord => ({ record: records[index], key: keyOf(row) }))
    })

  const pageAnswers = (resource: AnyResource, tenantId: string, query: ListQuery, request: PageRequest) =>
    Effect.map(pageRows<{ answer: string }>(resource, tenantId, query, request, sql.literal(`${recordJson(resource, "answer")} AS answer`)), (rows) =>
      rows.map((row): KeyedAnswer => ({ answer: row.answer, key: keyOf(row) })))

  /**
   * A page's answers as NDJSON lines in chunks (`PageLines`), aggregated by the store: an export
   * receives a few texts per range, not one string per record to allocate, join and collect. Each
   * line is `row_to_json` of the page's own select list (`answerColumns`), cheaper than the text
   * `recordJson` builds with a subquery per record. A chunk is the lines whose running total of
   * bytes falls in one `CHUNK_TEXT` (a window over the page's rows in their order; an ordered
   * derived table is never merged into the query around it, and a window without an order reads its
   * rows as they come); a range as one text would be a large object in the host, decoded and
   * collected far slower than chunks are.
   *
   * A range up to `until` is read with a limit all the same: an index stops at a row comparison's
   * upper bound only where its first value changes, so without one a range of records sharing a
   * creation time (a bulk insert) would scan on to the last of them, every range. The limit is the
   * range's size when its end was found; a read that reaches it without the end row (records
   * written into the range since) is read again with a larger one, so the range is always whole,
   * as one statement reads it.
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
    direct(sql<{ n: number }>`SELECT count(*) AS n FROM ${table(resource.table)} r WHERE ${sql.and(listConditions(sql, resource, tenantId, query))}`).pipe(
      Effect.map((rows) => Number(rows[0].n)),
      Effect.orDie
    )

  return { page, pageAnswers, pageLines, rangeEnd, count }
}
