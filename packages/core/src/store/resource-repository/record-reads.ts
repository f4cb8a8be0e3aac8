import { Effect, Option } from "effect"
import { fieldSql } from "../../engine/fields.js"
import type { FilterNode } from "../../engine/filter.js"
import type { ReferenceLookup } from "../../engine/repository.js"
import type { AnyResource, Row } from "../../engine/resource.js"
import { scopeConditions } from "../sql/conditions.js"
import { byIdStatements } from "./by-id-statements.js"
import { decoded, type RepositorySql } from "./repository-sql.js"
import { lockInRead, locksInRead, lockThenRead } from "./row-locks.js"

type RecordsOptions = { readonly withDeleted?: boolean | undefined; readonly forUpdate?: boolean | undefined; readonly limit: number }

const byIdFilter = (id: string): FilterNode => ({ kind: "condition", field: "id", op: "eq", value: id })

const distinct = (values: ReadonlyArray<unknown>) => [...new Set(values.filter((value) => value !== null && value !== undefined))]

/** Records by id, by filter and by the ids a write refers to. */
export const makeRecordReads = (db: RepositorySql) => {
  const { sql, direct, table, record } = db

  /** Live-or-deleted records of `resource` by id (what `expand[]` answers in full). */
  const byIds = (resource: AnyResource, tenantId: string, ids: ReadonlyArray<unknown>): Effect.Effect<ReadonlyArray<Row>> => {
    if (ids.length === 0) return Effect.succeed([])
    const where = [...scopeConditions(sql, resource, tenantId, { withDeleted: true }), sql`r.id IN ${sql.in(ids)}`]
    // One id (a record read back after its write) is a fixed shape; a list of ids is a new text per length.
    return direct(sql<{ record: string }>`SELECT ${record(resource)} FROM ${table(resource.table)} r WHERE ${sql.and(where)}`, ids.length === 1).pipe(Effect.orDie, Effect.map(decoded(resource)))
  }

  /** Several rows may match a lookup (suppliers sharing a tax id): the first in the default order answers. */
  const firstOrder = (resource: AnyResource) => {
    const { field, order } = resource.defaultSort
    return sql.literal(`${fieldSql(field, resource.filters[field])} ${order === "asc" ? "ASC" : "DESC"}, r.id`)
  }

  /** The records matching `filter`, built by the store in one statement (a lock taken on the rows themselves). */
  const recordsStatement = (resource: AnyResource, tenantId: string, filter: FilterNode, options: RecordsOptions) => {
    const where = scopeConditions(sql, resource, tenantId, { withDeleted: options.withDeleted, filter })
    return sql<{ record: string }>`SELECT ${record(resource)} FROM ${table(resource.table)} r WHERE ${sql.and(where)}
      ORDER BY ${firstOrder(resource)} LIMIT ${options.limit} ${lockInRead(sql, options.forUpdate)}`
  }

  const lockedFirst = lockThenRead(db, byIds)

  const findMany = (resource: AnyResource, tenantId: string, filter: FilterNode, options: RecordsOptions) => {
    if (locksInRead(resource, options)) return direct(recordsStatement(resource, tenantId, filter, options), true).pipe(Effect.orDie, Effect.map(decoded(resource)))
    const where = scopeConditions(sql, resource, tenantId, { withDeleted: options.withDeleted, filter })
    return lockedFirst(resource, tenantId, sql.and(where), firstOrder(resource), options.limit)
  }

  const findOne = (resource: AnyResource, tenantId: string, filter: FilterNode, options: { withDeleted?: boolean; forUpdate?: boolean } = {}) =>
    Effect.map(findMany(resource, tenantId, filter, { ...options, limit: 1 }), (records) => Option.fromNullishOr(records[0]))

  const byIdStatement = byIdStatements(sql, (resource, tenantId, id, options: RecordsOptions) => recordsStatement(resource, tenantId, byIdFilter(id), options))

  const findById = (resource: AnyResource, tenantId: string, id: string, options: { withDeleted?: boolean; forUpdate?: boolean; scope?: FilterNode } = {}) => {
    const find = { withDeleted: options.withDeleted, forUpdate: options.forUpdate, limit: 1 }
    if (options.scope || !locksInRead(resource, find)) {
      return findOne(resource, tenantId, options.scope ? { kind: "group", logic: "and", conditions: [byIdFilter(id), options.scope] } : byIdFilter(id), options)
    }
    // `matchEffect` makes a failed statement a defect and answers its rows in one step, where `orDie` and `map` take two.
    return Effect.matchEffect(direct(byIdStatement(resource, find)(tenantId, id), true), {
      onFailure: Effect.die,
      onSuccess: (rows) => Effect.succeed(Option.fromNullishOr(decoded(resource)(rows)[0]))
    })
  }

  /** Every lookup in one query: the ids found, each tagged with its lookup's index. */
  const missing = (tenantId: string, lookups: ReadonlyArray<ReferenceLookup>) => {
    const wanted = lookups.map((lookup) => distinct(lookup.ids).map(String))
    const selects = lookups.flatMap((lookup, index) => {
      if (wanted[index].length === 0) return []
      const where = [...scopeConditions(sql, lookup.resource, tenantId, { filter: lookup.scope }), sql`r.id IN ${sql.in(wanted[index])}`]
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

  return { byIds, findMany, findOne, findById, missing }
}
