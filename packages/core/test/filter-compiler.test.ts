import * as SqlClient from "effect/sql/SqlClient"
import type { Fragment } from "effect/sql/Statement"
import { Effect, ManagedRuntime } from "effect"
import * as FastCheck from "fast-check"
import { afterAll, describe, expect, it } from "vitest"
import { storeKinds, testStore } from "../../../test/support/stores.js"
import { allowedOperators, type FilterField, type FilterNode, layerStore, type Operator } from "../src/index.js"
import { compileFilter } from "../src/store/sql/filter-compiler.js"
import { type Key, keysetOrder, keysetPredicate, type KeysetSort, keysetUntil } from "../src/store/sql/keyset.js"

/**
 * The filter and keyset compilers against PostgreSQL itself: a generated filter selects exactly
 * the rows a plain reading of the spec's operators selects, and a keyset walk in pages of any
 * size, either way, visits every row once in the list's total order.
 */

const fields = {
  name: { type: "string", nullable: true },
  code: { type: "string", nullable: true, caseInsensitive: true },
  amount: { type: "number", nullable: true },
  double: { type: "number", nullable: true, sql: "(r.amount * 2)" },
  active: { type: "boolean" },
  due: { type: "date", nullable: true },
  at: { type: "datetime", nullable: true },
  ref: { type: "uuid", nullable: true },
  tags: { type: "string", nullable: true, array: true }
} satisfies Record<string, FilterField>

type Name = keyof typeof fields

interface TestRow {
  readonly id: number
  readonly name: string | null
  readonly code: string | null
  readonly amount: string | null
  readonly active: boolean
  readonly due: string | null
  readonly at: string | null
  readonly ref: string | null
  readonly tags: ReadonlyArray<string> | null
}

// Small domains, so that generated filters match some rows and miss others. Accents, LIKE's
// wildcards and its escape character are in the text to show they match only as themselves.
const letters = ["a", "B", "e", "é", "É", "%", "_", "\\", " "]
const text = FastCheck.array(FastCheck.constantFrom(...letters), { maxLength: 3 }).map((chars) => chars.join(""))
const code = FastCheck.constantFrom("us", "US", "Us", "mx", "")
const amounts = ["-1", "0", "0.5", "1.50", "2", "10"]
const days = ["2024-03-04", "2024-03-05", "2024-03-06"]
const instants = ["2024-03-04T23:59:59.999Z", "2024-03-05T00:00:00Z", "2024-03-05T12:00:00+02:00", "2024-03-05T23:30:00-01:00", "2024-03-06T00:00:00Z"]
const uuids = ["0b8e2f0e-0000-4000-8000-000000000001", "0b8e2f0e-0000-4000-8000-000000000002"]

const nullable = <A>(value: FastCheck.Arbitrary<A>) => FastCheck.option(value, { nil: null, freq: 4 })

const rowsArbitrary = FastCheck.array(
  FastCheck.record({
    name: nullable(text),
    code: nullable(code),
    amount: nullable(FastCheck.constantFrom(...amounts)),
    active: FastCheck.boolean(),
    due: nullable(FastCheck.constantFrom(...days)),
    at: nullable(FastCheck.constantFrom(...instants)),
    ref: nullable(FastCheck.constantFrom(...uuids)),
    tags: nullable(FastCheck.array(text, { maxLength: 3 }))
  }),
  { minLength: 1, maxLength: 16 }
).map((rows): ReadonlyArray<TestRow> => rows.map((row, index) => ({ id: index + 1, ...row })))

/** Values as the filter grammar hands them over (validated, normalised) for a field's type. */
const valuesFor = (field: FilterField): ReadonlyArray<string | boolean> => {
  if (field.caseInsensitive) return ["us", "US", "Us", "mx", ""]
  switch (field.type) {
    case "string":
      return ["", "a", "b", "é", "E", "%", "_", "\\", "a b", "B%"]
    case "number":
      return ["-1", "0", "0.50", "1.5", "2", "3", "10", "20"]
    case "boolean":
      return [true, false]
    case "date":
      return days
    case "datetime":
      return [...days, ...instants]
    case "uuid":
      return uuids
  }
}

const valueFor = (field: FilterField): FastCheck.Arbitrary<string | boolean> =>
  field.type === "string" && !field.caseInsensitive ? text : FastCheck.constantFrom(...valuesFor(field))

/** Every condition the grammar can hand over on these fields: each operator with each value. */
const everyCondition: ReadonlyArray<FilterNode> = (Object.keys(fields) as Array<Name>).flatMap((name) => {
  const field: FilterField = fields[name]
  return allowedOperators(field).flatMap((op) =>
    (op === "is_null" || op === "is_not_null" ? [true, false] : valuesFor(field)).map((value): FilterNode => ({ kind: "condition", field: name, op, value })))
})

const conditionArbitrary: FastCheck.Arbitrary<FilterNode> = FastCheck.constantFrom(...(Object.keys(fields) as Array<Name>)).chain((name) => {
  const field: FilterField = fields[name]
  return FastCheck.constantFrom(...allowedOperators(field)).chain((op) =>
    (op === "is_null" || op === "is_not_null" ? FastCheck.boolean() : valueFor(field)).map((value): FilterNode => ({ kind: "condition", field: name, op, value }))
  )
})

const filterArbitrary: FastCheck.Arbitrary<FilterNode> = FastCheck.letrec<{ node: FilterNode }>((tie) => ({
  node: FastCheck.oneof(
    { depthSize: "small", withCrossShrink: true },
    conditionArbitrary,
    FastCheck.record({
      kind: FastCheck.constant("group" as const),
      logic: FastCheck.constantFrom("and" as const, "or" as const),
      conditions: FastCheck.array(tie("node"), { maxLength: 3 })
    })
  )
})).node

// ---- The reference: each operator as the spec reads it, in plain TypeScript ----

/** What `unaccent` and ILIKE's case folding leave of a text (the generated letters only). */
const folded = (value: string) => value.normalize("NFD").replace(/[\u0300-\u036f]/g, "").toLowerCase()
const dayStart = (day: string) => Date.parse(`${day}T00:00:00Z`)
const DAY = 86_400_000

const compare = (type: FilterField["type"], stored: string, wanted: string): number => {
  if (type === "number") return Number(stored) - Number(wanted)
  if (type === "datetime") return Date.parse(stored) - Date.parse(wanted)
  return stored < wanted ? -1 : stored > wanted ? 1 : 0
}

const storedValue = (row: TestRow, name: Name): unknown =>
  name === "double" ? (row.amount === null ? null : String(Number(row.amount) * 2)) : row[name]

const matches = (row: TestRow, node: FilterNode): boolean => {
  if (node.kind === "group") {
    if (node.conditions.length === 0) return true
    return node.logic === "and" ? node.conditions.every((child) => matches(row, child)) : node.conditions.some((child) => matches(row, child))
  }
  const name = node.field as Name
  const field: FilterField = fields[name]
  const stored = storedValue(row, name)
  const { op, value } = node
  if (op === "is_null" || op === "is_not_null") return (stored === null) === ((op === "is_null") === (value === true))
  if (field.array) {
    const elements = (stored as ReadonlyArray<string> | null) ?? []
    const has = elements.includes(String(value))
    const contains = elements.some((element) => folded(element).includes(folded(String(value))))
    return op === "eq" ? has : op === "neq" ? !has : op === "contains" ? contains : !contains
  }
  if (op === "contains" || op === "not_contains") {
    const contains = stored !== null && folded(String(stored)).includes(folded(String(value)))
    return op === "contains" ? contains : !contains
  }
  if (field.type === "datetime" && typeof value === "string" && days.includes(value)) {
    const at = stored === null ? null : Date.parse(String(stored))
    const start = dayStart(value)
    const inDay = at !== null && at >= start && at < start + DAY
    if (op === "neq") return !inDay
    if (at === null) return false
    return op === "eq" ? inDay : op === "gt" ? at >= start + DAY : op === "gte" ? at >= start : op === "lt" ? at < start : at < start + DAY
  }
  if (field.caseInsensitive) {
    const same = stored !== null && String(stored).toLowerCase() === String(value).toLowerCase()
    return op === "eq" ? same : !same
  }
  if (field.type === "boolean") return op === "eq" ? stored === value : stored !== value
  if (stored === null) return op === "neq"
  const order = compare(field.type, String(stored), String(value))
  const outcome: Record<Exclude<Operator, "contains" | "not_contains" | "is_null" | "is_not_null">, boolean> = {
    eq: order === 0,
    neq: order !== 0,
    gt: order > 0,
    gte: order >= 0,
    lt: order < 0,
    lte: order <= 0
  }
  return outcome[op as keyof typeof outcome]
}

describe.each(storeKinds)("filter and keyset compilers on %s", (kind) => {
  const runtime = ManagedRuntime.make(layerStore(testStore(kind)))
  afterAll(() => runtime.dispose())
  const run = <A>(use: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) => runtime.runPromise(Effect.flatMap(SqlClient.SqlClient, use))

  /** The rows as a relation `r`, typed as the columns of a resource's table are. */
  const relation = (sql: SqlClient.SqlClient, rows: ReadonlyArray<TestRow>): Fragment =>
    sql`(VALUES ${sql.csv(rows.map((row) => sql`(${sql.csv([
      sql`${row.id}::int`,
      sql`${row.name}::text`,
      sql`${row.code}::text`,
      sql`${row.amount}::numeric`,
      sql`${row.active}::boolean`,
      sql`${row.due}::date`,
      sql`${row.at}::timestamptz`,
      sql`${row.ref}::uuid`,
      sql`${row.tags === null ? null : JSON.stringify(row.tags)}::jsonb`
    ])})`))}) AS r (id, name, code, amount, active, due, at, ref, tags)`

  it("holds each operator, with each value, on exactly the rows the spec says", async () => {
    await run((sql) => Effect.promise(() =>
      FastCheck.assert(
        FastCheck.asyncProperty(rowsArbitrary, async (rows) => {
          // One statement answers every condition for every row (NULL, as WHERE reads it, is false).
          const answers = await runtime.runPromise(sql<Record<string, unknown>>`SELECT r.id, ${sql.csv(everyCondition.map((condition, index) =>
            sql`coalesce(${compileFilter(sql, fields, condition)}, false) AS ${sql.literal(`c${index}`)}`))} FROM ${relation(sql, rows)} ORDER BY r.id`)
          for (const [index, condition] of everyCondition.entries()) {
            const selected = answers.filter((answer) => answer[`c${index}`] === true).map((answer) => Number(answer.id))
            expect({ condition, selected }).toEqual({ condition, selected: rows.filter((row) => matches(row, condition)).map((row) => row.id) })
          }
        }),
        { numRuns: 60 }
      )
    ))
  })

  it("selects exactly the rows each group and nesting of conditions selects", async () => {
    await run((sql) => Effect.promise(() =>
      FastCheck.assert(
        FastCheck.asyncProperty(rowsArbitrary, filterArbitrary, async (rows, filter) => {
          const selected = await runtime.runPromise(sql<{ id: number }>`SELECT r.id FROM ${relation(sql, rows)} WHERE ${compileFilter(sql, fields, filter)} ORDER BY r.id`)
          expect(selected.map((row) => Number(row.id))).toEqual(rows.filter((row) => matches(row, filter)).map((row) => row.id))
        }),
        { numRuns: 200 }
      )
    ))
  })

  it("never writes a caller's value into the statement's text", async () => {
    await run((sql) => Effect.sync(() =>
      FastCheck.assert(
        FastCheck.property(
          FastCheck.constantFrom("name", "code", "tags"),
          FastCheck.constantFrom<Operator>("eq", "neq", "contains", "not_contains"),
          FastCheck.string(),
          (name, op, value) => {
            const sent = `\u27c2'${value}`
            const [textOf, params] = sql`SELECT 1 FROM t r WHERE ${compileFilter(sql, fields, { kind: "condition", field: name, op, value: sent })}`.compile()
            expect(textOf).not.toContain("\u27c2")
            expect(params.some((param) => typeof param === "string" && param.includes("\u27c2"))).toBe(true)
          }
        ),
        { numRuns: 200 }
      )
    ))
  })

  // ---- Keyset pagination ----

  const keyRows = FastCheck.array(nullable(FastCheck.constantFrom("-2", "0", "0.5", "3")), { minLength: 0, maxLength: 14 }).map((values) =>
    values.map((value, index) => ({ id: index + 1, v: value })))

  const keyRelation = (sql: SqlClient.SqlClient, rows: ReadonlyArray<{ id: number; v: string | null }>): Fragment =>
    rows.length === 0
      ? sql`(SELECT NULL::int AS id, NULL::numeric AS v WHERE false) AS r`
      : sql`(VALUES ${sql.csv(rows.map((row) => sql`(${row.id}::int, ${row.v}::numeric)`))}) AS r (id, v)`

  /** The list's total order: the sort value (nulls last ascending, first descending), then the id. */
  const totalOrder = (rows: ReadonlyArray<{ id: number; v: string | null }>, ascending: boolean) =>
    [...rows].sort((a, b) => {
      const byValue = a.v === null && b.v === null ? 0 : a.v === null ? 1 : b.v === null ? -1 : Number(a.v) - Number(b.v)
      const ordered = byValue !== 0 ? byValue : a.id - b.id
      return ascending ? ordered : -ordered
    }).map((row) => row.id)

  it("walks every row exactly once, in order, in pages of any size and either direction", async () => {
    await run((sql) => Effect.promise(() =>
      FastCheck.assert(
        FastCheck.asyncProperty(keyRows, FastCheck.boolean(), FastCheck.boolean(), FastCheck.integer({ min: 1, max: 5 }), async (rows, nullableSort, ascending, size) => {
          const values = nullableSort ? rows : rows.map((row) => ({ ...row, v: row.v ?? "1" }))
          const sort: KeysetSort = { sortSql: "r.v", sqlType: "numeric", nullable: nullableSort, idType: "integer" }
          const walked: Array<number> = []
          let key: Key | null = null
          for (let pages = 0; pages <= values.length + 1; pages++) {
            const where = key === null ? sql`TRUE` : keysetPredicate(sql, sort, ascending, key)
            const page: ReadonlyArray<{ id: number; v: unknown }> = await runtime.runPromise(
              sql<{ id: number; v: unknown }>`SELECT r.id, r.v FROM ${keyRelation(sql, values)} WHERE ${where} ORDER BY ${sql.literal(keysetOrder(sort, ascending))} LIMIT ${size}`
            )
            walked.push(...page.map((row) => Number(row.id)))
            if (page.length < size) break
            const last = page[page.length - 1]
            key = [last.v ?? null, String(last.id)]
          }
          expect(walked).toEqual(totalOrder(values, ascending))
        }),
        { numRuns: 150 }
      )
    ))
  })

  it("reads a range after one key up to another, both ends as the walk orders them", async () => {
    await run((sql) => Effect.promise(() =>
      FastCheck.assert(
        FastCheck.asyncProperty(keyRows.filter((rows) => rows.length > 0), FastCheck.boolean(), FastCheck.nat(), FastCheck.nat(), async (rows, ascending, from, to) => {
          const values = rows.map((row) => ({ ...row, v: row.v ?? "1" }))
          const sort: KeysetSort = { sortSql: "r.v", sqlType: "numeric", nullable: false, idType: "integer" }
          const order = totalOrder(values, ascending)
          const [start, end] = [from % order.length, to % order.length].sort((a, b) => a - b)
          const keyAt = (position: number): Key => {
            const row = values.find((candidate) => candidate.id === order[position])!
            return [row.v, String(row.id)]
          }
          const range = await runtime.runPromise(
            sql<{ id: number }>`SELECT r.id FROM ${keyRelation(sql, values)}
              WHERE ${keysetPredicate(sql, sort, ascending, keyAt(start))} AND ${keysetUntil(sql, sort, ascending, keyAt(end))}
              ORDER BY ${sql.literal(keysetOrder(sort, ascending))}`
          )
          expect(range.map((row) => Number(row.id))).toEqual(order.slice(start + 1, end + 1))
        }),
        { numRuns: 150 }
      )
    ))
  })
})
