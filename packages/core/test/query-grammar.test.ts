import { describe, expect, it } from "@effect/vitest"
import { Arbitrary, Result, Schema } from "effect"
import { randomBytes } from "node:crypto"
import {
  decodeCursor,
  encodeCursor,
  type FilterField,
  hashQuery,
  type ListShape,
  parseBracketFilters,
  parseJsonFilter,
  parseListQuery
} from "../src/index.js"

const fields: Record<string, FilterField> = {
  name: { type: "string", sortable: true },
  code: { type: "string", nullable: true },
  amount: { type: "number", nullable: true, sortable: true },
  active: { type: "boolean" },
  due: { type: "date" },
  at: { type: "datetime", sortable: true },
  ref: { type: "uuid" },
  tags: { type: "string", array: true }
}

const shape: ListShape = { filters: fields, defaultSort: { field: "at", order: "asc" }, searchable: true, payloadSearchable: false }
const secret = randomBytes(32)

/** A sort value as a cursor carries it: JSON text has no -0, so the integers leave it out. */
const jsonKey = Arbitrary.map(Arbitrary.schema(Schema.Union([Schema.String, Schema.Int, Schema.Null])), (value) => (value === 0 ? 0 : value))

const message = <A>(result: Result.Result<A, { message: string }>) => (Result.isFailure(result) ? result.failure.message : "ok")

describe("bracket filters", () => {
  it("reads field=v as eq and field[op]=v as op", () => {
    const parsed = Result.getOrThrow(parseBracketFilters(fields, [["name", "Ana"], ["amount[gte]", "10.5"], ["active", "true"]]))
    expect(parsed).toEqual([
      { kind: "condition", field: "name", op: "eq", value: "Ana" },
      { kind: "condition", field: "amount", op: "gte", value: "10.5" },
      { kind: "condition", field: "active", op: "eq", value: true }
    ])
  })

  it.each([
    [["nope", "1"], "Unknown filter field \"nope\""],
    [["name[gt]", "a"], "not allowed for string"],
    [["amount[contains]", "1"], "not allowed for number"],
    [["ref[contains]", "a"], "not allowed for uuid"],
    [["amount", "ten"], "must be a number"],
    [["active", "yes"], "must be true or false"],
    [["due", "2024-02-30"], "must be a date"],
    [["at", "yesterday"], "ISO 8601"],
    [["ref", "123"], "must be a UUID"],
    [["name[is_null]", "true"], "not nullable"],
    [["name[between]", "a"], "Unknown filter operator"],
    [["name[eq", "a"], "Unknown query parameter"]
  ] as const)("refuses %j", (pair, expected) => {
    expect(message(parseBracketFilters(fields, [pair]))).toContain(expected)
  })

  it("takes is_null on nullable fields with true or false", () => {
    expect(Result.getOrThrow(parseBracketFilters(fields, [["code[is_null]", "true"]]))[0]).toMatchObject({ op: "is_null", value: true })
    expect(Result.getOrThrow(parseBracketFilters(fields, [["amount[is_not_null]", "false"]]))[0]).toMatchObject({ op: "is_not_null", value: false })
    expect(message(parseBracketFilters(fields, [["code[is_null]", "maybe"]]))).toContain("true or false")
  })

  it("accepts dates and ISO datetimes on datetime fields", () => {
    expect(Result.isSuccess(parseBracketFilters(fields, [["at[gte]", "2026-01-31"]]))).toBe(true)
    expect(Result.isSuccess(parseBracketFilters(fields, [["at[lt]", "2026-01-31T10:00:00.123Z"]]))).toBe(true)
    expect(Result.isSuccess(parseBracketFilters(fields, [["at[lt]", "2026-01-31T10:00:00-03:00"]]))).toBe(true)
  })
})

describe("JSON filter form", () => {
  it("parses nested and/or groups into the same conditions as brackets", () => {
    const parsed = Result.getOrThrow(parseJsonFilter(fields, JSON.stringify({
      logic: "or",
      conditions: [{ f: "amount", op: "gte", v: "10" }, { logic: "and", conditions: [{ f: "code", op: "is_null" }, { f: "active", v: true }] }]
    })))
    expect(parsed).toEqual({
      kind: "group",
      logic: "or",
      conditions: [
        { kind: "condition", field: "amount", op: "gte", value: "10" },
        {
          kind: "group",
          logic: "and",
          conditions: [{ kind: "condition", field: "code", op: "is_null", value: true }, { kind: "condition", field: "active", op: "eq", value: true }]
        }
      ]
    })
  })

  it.each([
    ["{", "not valid JSON"],
    [JSON.stringify([1]), "must be an object"],
    [JSON.stringify({ logic: "xor", conditions: [] }), "\"and\" or \"or\""],
    [JSON.stringify({ logic: "and", conditions: {} }), "must be an array"],
    [JSON.stringify({ logic: "and", conditions: [{ op: "eq", v: 1 }] }), "must name a field"],
    [JSON.stringify({ logic: "and", conditions: [{ f: "amount", op: "gte", v: { x: 1 } }] }), "single number value"]
  ])("refuses %s", (text, expected) => {
    expect(message(parseJsonFilter(fields, text))).toContain(expected)
  })

  it("bounds nesting depth and condition count", () => {
    let nested: object = { f: "name", v: "a" }
    for (let depth = 0; depth < 6; depth++) nested = { logic: "and", conditions: [nested] }
    expect(message(parseJsonFilter(fields, JSON.stringify(nested)))).toContain("deeper")
    const many = { logic: "or", conditions: Array.from({ length: 51 }, () => ({ f: "name", v: "a" })) }
    expect(message(parseJsonFilter(fields, JSON.stringify(many)))).toContain("more than 50")
  })
})

describe("list query", () => {
  it("applies defaults and validates sort", () => {
    const query = Result.getOrThrow(parseListQuery(shape, [], secret))
    expect(query).toMatchObject({ limit: 20, sort: { field: "at", order: "asc" }, withDeleted: false, search: undefined })
    expect(Result.getOrThrow(parseListQuery(shape, [["sort", "amount:desc"]], secret)).sort).toEqual({ field: "amount", order: "desc" })
    expect(message(parseListQuery(shape, [["sort", "name:up"]], secret))).toContain("field:asc")
    expect(message(parseListQuery(shape, [["sort", "code:asc"]], secret))).toContain("Cannot sort by \"code\"")
  })

  it("refuses repeated single-valued parameters", () => {
    expect(message(parseListQuery(shape, [["limit", "5"], ["limit", "6"]], secret))).toContain("only once")
  })

  it.prop("binds every cursor to the query that made it", { value: jsonKey, other: Schema.String.check(Schema.isMinLength(1)) }, ({ value, other }) => {
    const query = hashQuery({ filter: null, sort: "x" })
    const cursor = encodeCursor(secret, { direction: "next", key: [value, "00000000-0000-4000-8000-000000000001"], query })
    expect(Result.getOrThrow(decodeCursor(secret, cursor, query)).key).toEqual([value, "00000000-0000-4000-8000-000000000001"])
    const otherQuery = hashQuery({ filter: other, sort: "x" })
    expect(Result.isFailure(decodeCursor(secret, cursor, otherQuery))).toBe(true)
  })

  it.prop("refuses any altered cursor", { position: Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 2 ** 31 - 1 })), char: Schema.Literals(["A", "b", "_", "-", "0"]) }, ({ position, char }) => {
    const query = hashQuery("q")
    const cursor = encodeCursor(secret, { direction: "previous", key: ["2026-01-01T00:00:00.000Z", "00000000-0000-4000-8000-000000000002"], query })
    const index = position % cursor.length
    if (cursor[index] === char || cursor[index] === ".") return
    const altered = cursor.slice(0, index) + char + cursor.slice(index + 1)
    expect(Result.isFailure(decodeCursor(secret, altered, query))).toBe(true)
  })

  it("refuses a cursor signed with another secret", () => {
    const query = hashQuery("q")
    const cursor = encodeCursor(randomBytes(32), { direction: "next", key: null, query })
    expect(message(decodeCursor(secret, cursor, query))).toContain("malformed")
  })
})
