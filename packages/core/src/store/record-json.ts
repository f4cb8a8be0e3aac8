import type { SchemaAST } from "effect"
import type { AnyField, Fields, Pick } from "../engine/field.js"
import { fieldSql } from "../engine/fields.js"
import { arrayElementOf, objectKeysOf } from "../engine/schemas.js"
import { type AnyResource, type ChildCollection, isSoftDeleted, isTenantOwned } from "../engine/resource.js"

/**
 * The SQL that answers a record as JSON, derived from its declaration: its columns, the
 * records it embeds and its children, one statement for a whole page. PostgreSQL builds
 * each record in the form the record schema answers (decimals with their six digits,
 * timestamps in ISO 8601 UTC with milliseconds, a country block with every key), so the
 * host parses it and answers it without decoding row by row or assembling relations with
 * further queries.
 *
 * Every level of nesting calls its own row `r` (the declarations' SQL expressions are
 * written against `r`); a level reaches its parent's values through a derived table
 * (`FROM (SELECT r.customer_id AS k) o JOIN customers r …`), which, not being LATERAL,
 * sees the enclosing `r` rather than the joined one.
 */

/** Rows keep the stored fields rules read but clients never see; answers are what clients see. */
export type RecordMode = "row" | "answer"

/** One table's fields as a record is built from them: a resource, or a child collection. */
interface Level {
  readonly name: string
  readonly fields: Fields
  readonly children: ReadonlyArray<ChildCollection>
  /** The table carries `tenant_id` (tenant records and their children; catalogs do not). */
  readonly tenantScoped: boolean
  /** Where a collection's rows are read from instead of its table (by collection name). */
  readonly childSources?: ChildSources
}

/**
 * Relations a record's children are read from instead of their tables: the rows a statement's
 * own `INSERT … RETURNING *` wrote, which the statement cannot see through the table.
 */
export type ChildSources = Readonly<Record<string, string>>

/** Embeds of embeds: the declarations nest two or three deep; a cycle would never end. */
const MAX_DEPTH = 6

const entries = (fields: Fields) => Object.entries(fields) as Array<[string, AnyField]>

const quoted = (name: string) => `"${name.replaceAll('"', '""')}"`

/**
 * `{ name: value, … }` in the given order, compact (`row_to_json` writes no spaces, where
 * `json_build_object` writes `"name" : value`), with no limit on members; with `from`, the values
 * are read from its row (NULL when it has none).
 */
const jsonObject = (members: ReadonlyArray<readonly [string, string]>, from?: string): string =>
  `(SELECT row_to_json(j) FROM (SELECT ${members.map(([name, value]) => `${value} AS ${quoted(name)}`).join(", ")}${from ? ` FROM ${from}` : ""}) j)`

const ISO_UTC = `'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`

/** A stored or derived column as the record answers it (what the driver and the record schema would make of the column). */
const columnValue = (name: string, field: AnyField): string => {
  const column = field.column!
  const expression = column.sql ? `(${column.sql})` : `r.${name}`
  switch (column.type) {
    // Milliseconds truncated, as `Date` truncates them: `MS` drops the microseconds.
    case "timestamptz":
      return `to_char(${expression}::timestamptz AT TIME ZONE 'UTC', ${ISO_UTC})`
    // Stored with six fractional digits: the text is the answer ("10.500000").
    case "numeric":
      return `${expression}::text`
    case "jsonb":
      return column.keys ? blockObject(expression, column.keys) : expression
    default:
      return expression
  }
}

/**
 * A jsonb object answered with exactly `keys`, each `null` when absent (a country block). A plain
 * column is read once per key (cheap); an expression is evaluated once.
 */
const blockObject = (expression: string, keys: ReadonlyArray<string>): string => {
  const members = (value: string) => keys.map((key): readonly [string, string] => [key, `${value}->'${key.replaceAll("'", "''")}'`])
  return /^r\.\w+$/.test(expression) ? jsonObject(members(expression)) : `(SELECT ${jsonObject(members("b.v"))} FROM (SELECT ${expression} AS v) b)`
}

const resourceLevel = (resource: AnyResource, childSources?: ChildSources): Level => ({
  name: resource.name,
  fields: resource.fields,
  children: resource.children,
  tenantScoped: isTenantOwned(resource),
  ...(childSources ? { childSources } : {})
})

const childLevel = (owner: string, collection: ChildCollection): Level => ({
  name: `${owner}.${collection.name}`,
  fields: collection.fields,
  children: [],
  tenantScoped: true
})

const includes = (field: AnyField, mode: RecordMode) => (mode === "row" ? field.output !== undefined || field.read !== undefined : field.output !== undefined)

/** What the record schema decoded a field with: `read` where declared (an expandable embed keeps its embed form there). */
const decodedBy = (field: AnyField, mode: RecordMode) =>
  (mode === "row" || field.embed ? field.read ?? field.output : field.output)!

/** The members of one level's record: its fields in declaration order. */
const levelMembers = (level: Level, mode: RecordMode, depth: number): ReadonlyArray<readonly [string, string]> =>
  entries(level.fields).filter(([, field]) => includes(field, mode)).map(([name, field]) => [name, fieldValue(level, name, field, mode, depth)] as const)

/** The record of one level. */
const levelRecord = (level: Level, mode: RecordMode, depth: number): string => jsonObject(levelMembers(level, mode, depth))

const fieldValue = (level: Level, name: string, field: AnyField, mode: RecordMode, depth: number): string => {
  if (depth > MAX_DEPTH) throw new Error(`${level.name}.${name}: records embed each other more than ${MAX_DEPTH} deep`)
  if (field.children) {
    const collection = level.children.find((candidate) => candidate.name === name)
    if (!collection) throw new Error(`${level.name}.${name}: a child collection that was not compiled`)
    return childrenValue(level, collection, mode, depth)
  }
  if (field.embed) return embedValue(level, name, field, mode, depth)
  if (field.column) return columnValue(name, field)
  throw new Error(`${level.name}.${name}: answered but neither stored, derived, embedded nor a collection`)
}

/** The parent's tenant and `key`, as a derived table the nested level joins on. */
const parentValues = (level: Level, key: string) => `(SELECT ${key} AS k${level.tenantScoped ? ", r.tenant_id AS t" : ""}) o`

const tenantJoin = (level: Level, target: { readonly tenantScoped: boolean; readonly name: string }) => {
  if (!target.tenantScoped) return ""
  if (!level.tenantScoped) throw new Error(`${level.name}: a record without a tenant cannot embed ${target.name}`)
  return " AND r.tenant_id = o.t"
}

const childrenValue = (level: Level, collection: ChildCollection, mode: RecordMode, depth: number): string => {
  const child = childLevel(level.name, collection)
  const order = "position" in collection.fields ? "r.position, r.id" : "r.created_at, r.id"
  const live = collection.softDelete ? " WHERE r.deleted_at IS NULL" : ""
  return `(SELECT coalesce(json_agg(${levelRecord(child, mode, depth + 1)} ORDER BY ${order}), '[]'::json) FROM ${parentValues(level, "r.id")}` +
    ` JOIN ${level.childSources?.[collection.name] ?? collection.table} r ON r.${collection.parentKey} = o.k${tenantJoin(level, child)}${live})`
}

/** The source field of the other record for an answered key (`pick` renames or narrows). */
const sourceOf = (key: string, pick: Pick | undefined): string =>
  pick === undefined || typeof pick === "string" || Array.isArray(pick) ? key : (pick as Readonly<Record<string, string>>)[key] ?? key

/** Another record as an embed answers it: one value (`pick` a name), or the members of an object (the keys its schema answers, or the whole record). */
const embeddedValue = (target: AnyResource, shape: SchemaAST.AST | undefined, pick: Pick | undefined, depth: number): string | ReadonlyArray<readonly [string, string]> => {
  const level = resourceLevel(target)
  const value = (name: string) => {
    const field = target.fields[name]
    return field && includes(field, "answer") ? fieldValue(level, name, field, "answer", depth) : "NULL"
  }
  if (typeof pick === "string") return value(pick)
  const keys = (shape && objectKeysOf(shape, "decoded")) ?? (pick === undefined ? undefined : Array.isArray(pick) ? pick : Object.keys(pick))
  if (!keys) return levelMembers(level, "answer", depth)
  return keys.map((key) => [key, value(sourceOf(key, pick))] as const)
}

const embedValue = (level: Level, name: string, field: AnyField, mode: RecordMode, depth: number): string => {
  const embed = field.embed!
  const target = embed.resource() as AnyResource
  const targetLevel = resourceLevel(target)
  const shape = decodedBy(field, mode).ast
  if (embed.kind === "one") {
    const key = level.fields[embed.key]
    if (!key?.column) throw new Error(`${level.name}.${name}: embeds through ${embed.key}, which is not stored`)
    const keyValue = key.column.sql ? `(${key.column.sql})` : `r.${embed.key}`
    // Deleted records still show where they are embedded (an order keeps its customer).
    const source = `${parentValues(level, keyValue)} JOIN ${target.table} r ON r.id = o.k${tenantJoin(level, targetLevel)}`
    const value = embeddedValue(target, shape, embed.pick, depth + 1)
    // The object is built in the subquery that finds the record (one subquery a record, not two), and
    // none runs for an empty stored key (a derived key is not evaluated twice to find out).
    const found = typeof value === "string" ? `(SELECT ${value} FROM ${source})` : jsonObject(value, source)
    return key.column.sql ? found : `CASE WHEN ${keyValue} IS NULL THEN NULL ELSE ${found} END`
  }
  const { field: sortField, order } = target.defaultSort
  const sort = `${fieldSql(sortField, target.filters[sortField])} ${order === "asc" ? "ASC" : "DESC"}, r.id`
  const live = isSoftDeleted(target) ? " WHERE r.deleted_at IS NULL" : ""
  const element = arrayElementOf(shape, "decoded")
  const value = embeddedValue(target, element, embed.pick, depth + 1)
  return `(SELECT coalesce(json_agg(${typeof value === "string" ? value : jsonObject(value)} ORDER BY ${sort}), '[]'::json) FROM ${parentValues(level, "r.id")}` +
    ` JOIN ${target.table} r ON r.${embed.foreignKey} = o.k${tenantJoin(level, targetLevel)}${live})`
}

const dependent = new WeakMap<AnyResource, boolean>()

/**
 * Whether a record reads rows of other tables that a write's decisions depend on: children, or
 * a derived value computed by a subquery (an allocated total). A statement that waited for a row
 * lock still reads those with the snapshot it started with, so such a record is locked first and
 * read after. Embeds only show another record (a customer's name) and do not count.
 */
export const readsDependentRows = (resource: AnyResource): boolean => {
  let reads = dependent.get(resource)
  if (reads === undefined) {
    reads = resource.children.length > 0 || entries(resource.fields).some(([, field]) => field.column?.sql !== undefined && /\bselect\b/i.test(field.column.sql))
    dependent.set(resource, reads)
  }
  return reads
}

/**
 * Whether a derived field of the record or of its children reads one of `tables` by itself (an
 * invoice's taxes gathered from its items' table), rather than through a collection: a statement
 * that writes those tables cannot answer such a record, which is read back after it.
 */
export const derivedFieldsRead = (resource: AnyResource, tables: ReadonlyArray<string>): boolean => {
  let expressions = derivedExpressions.get(resource)
  if (expressions === undefined) {
    expressions = [resource.fields, ...resource.children.map((collection) => collection.fields)]
      .flatMap((fields) => entries(fields).flatMap(([, field]) => (field.column?.sql ? [field.column.sql] : [])))
    derivedExpressions.set(resource, expressions)
  }
  const all = expressions
  return all.length > 0 && tables.some((name) => all.some((sql) => new RegExp(`\\b${name}\\b`).test(sql)))
}

const derivedExpressions = new WeakMap<AnyResource, ReadonlyArray<string>>()

const built = new WeakMap<AnyResource, Map<string, string>>()

/**
 * A resource's record as JSON text, an SQL expression over the row `r`, built once per resource:
 * `row` with the hidden stored fields rules and updates need (`present` drops them), `answer` as
 * clients read it. With `childSources`, the named collections are read from those relations
 * (a write's own CTEs) rather than their tables.
 */
export const recordJson = (resource: AnyResource, mode: RecordMode = "row", childSources?: ChildSources): string => {
  let forResource = built.get(resource)
  if (forResource === undefined) built.set(resource, (forResource = new Map()))
  const key = childSources === undefined ? mode : `${mode} ${JSON.stringify(childSources)}`
  let sql = forResource.get(key)
  if (sql === undefined) {
    sql = `${levelRecord(resourceLevel(resource, childSources), mode, 0)}::text`
    forResource.set(key, sql)
  }
  return sql
}

const builtMembers = new WeakMap<AnyResource, string>()

/**
 * A resource's answer as a select list over the row `r` (`value AS "name", …`, the members
 * `recordJson` puts in its object). `row_to_json` of a derived table selecting them builds the same
 * text as `recordJson`, without a subquery run for every record: what an export's ranges do.
 */
export const answerColumns = (resource: AnyResource): string => {
  let sql = builtMembers.get(resource)
  if (sql === undefined) {
    const level = resourceLevel(resource)
    sql = entries(level.fields)
      .filter(([, field]) => includes(field, "answer"))
      .map(([name, field]) => `${fieldValue(level, name, field, "answer", 0)} AS ${quoted(name)}`)
      .join(", ")
    builtMembers.set(resource, sql)
  }
  return sql
}
