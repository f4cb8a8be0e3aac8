import type { Constructor, Fragment } from "effect/sql/Statement"
import { fieldSql, type FilterField, sqlTypeOf } from "../../engine/fields.js"
import type { FilterNode } from "../../engine/filter.js"

/**
 * A validated filter (`FilterNode`) as a SQL condition over the row alias `r`. Column
 * expressions come from the declaration only; every value the caller sent is a parameter.
 */
export const compileFilter = (sql: Constructor, fields: Readonly<Record<string, FilterField>>, node: FilterNode): Fragment => {
  if (node.kind === "condition") {
    const field = fields[node.field]
    return compileCondition(sql, field, fieldSql(node.field, field), node)
  }
  if (node.conditions.length === 0) return sql`TRUE`
  const parts = node.conditions.map((child) => compileFilter(sql, fields, child))
  return node.logic === "and" ? sql.and(parts) : sql.or(parts)
}

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/

const escapeLike = (text: string) => text.replace(/[\\%_]/g, (char) => `\\${char}`)

/** Compiles one validated condition; the column expression comes from the declaration only. */
const compileCondition = (sql: Constructor, field: FilterField, column: string, op: FilterNode & { kind: "condition" }): Fragment => {
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
