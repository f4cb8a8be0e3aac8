import { Result } from "effect"
import { InvalidRequest, invalid } from "../errors.js"
import { isValidDate, parseDatetime } from "./datetime.js"
import { textProblem } from "./untrusted-input.js"
import { allowedOperators, type FilterField, type Operator, OPERATORS } from "./fields.js"

/** A filter after validation: values are typed and normalised. */
export type FilterNode =
  | { readonly kind: "condition"; readonly field: string; readonly op: Operator; readonly value: FilterValue }
  | { readonly kind: "group"; readonly logic: "and" | "or"; readonly conditions: ReadonlyArray<FilterNode> }

export type FilterValue = string | boolean | null

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const NUMBER = /^[+-]?\d+(\.\d+)?$/

export const isUuid = (text: string): boolean => UUID.test(text)

/** Digits a number filter may carry: any stored numeric fits, and nothing longer costs the store a parse. */
const MAX_NUMBER_LENGTH = 40

/** Turns one raw value into the typed value for the field and operator, or says why not. */
const parseValue = (name: string, field: FilterField, op: Operator, raw: unknown): Result.Result<FilterValue, string> => {
  if (op === "is_null" || op === "is_not_null") {
    if (raw === undefined || raw === null || raw === true || raw === "true" || raw === "") return Result.succeed(true)
    if (raw === false || raw === "false") return Result.succeed(false)
    return Result.fail(`${name}[${op}] takes true or false`)
  }
  if (raw === null || raw === undefined) return Result.fail(`${name}[${op}] needs a value`)
  const text = typeof raw === "string" ? raw : typeof raw === "number" || typeof raw === "boolean" ? String(raw) : undefined
  if (text === undefined) return Result.fail(`${name}[${op}] takes a single ${field.type} value`)
  const problem = textProblem(text)
  if (problem) return Result.fail(`${name} ${problem}`)
  switch (field.type) {
    case "string":
      return Result.succeed(text)
    case "number":
      return NUMBER.test(text.trim()) && text.trim().length <= MAX_NUMBER_LENGTH ? Result.succeed(text.trim()) : Result.fail(`${name} must be a number, got "${text}"`)
    case "boolean":
      return text === "true" || text === "false"
        ? Result.succeed(text === "true")
        : Result.fail(`${name} must be true or false, got "${text}"`)
    case "date":
      return isValidDate(text) ? Result.succeed(text) : Result.fail(`${name} must be a date (YYYY-MM-DD, years 0001 to 9999), got "${text}"`)
    case "datetime": {
      if (isValidDate(text)) return Result.succeed(text)
      const instant = parseDatetime(text)
      return instant.ok ? Result.succeed(text) : Result.fail(`${name} ${instant.reason} (or a date, YYYY-MM-DD), got "${text}"`)
    }
    case "uuid":
      return isUuid(text) ? Result.succeed(text.toLowerCase()) : Result.fail(`${name} must be a UUID, got "${text}"`)
  }
}

/** Validates one condition against the resource's declared fields (400 on anything off). */
export const makeCondition = (
  fields: Readonly<Record<string, FilterField>>,
  name: string,
  opText: string,
  raw: unknown,
  parameter: string
): Result.Result<FilterNode, InvalidRequest> => {
  const field = Object.prototype.hasOwnProperty.call(fields, name) ? fields[name] : undefined
  if (!field) {
    const known = Object.keys(fields).sort().join(", ")
    return Result.fail(invalid(`Unknown filter field "${name}" in ${parameter}. Filterable fields: ${known}`, "INVALID_FILTER"))
  }
  if (!(OPERATORS as ReadonlyArray<string>).includes(opText)) {
    return Result.fail(invalid(`Unknown filter operator "${opText}" in ${parameter}. Operators: ${OPERATORS.join(", ")}`, "INVALID_FILTER"))
  }
  const op = opText as Operator
  const allowed = allowedOperators(field)
  if (!allowed.includes(op)) {
    const why = (op === "is_null" || op === "is_not_null") && !field.nullable
      ? `"${name}" is not nullable, so ${op} does not apply`
      : `operator "${op}" is not allowed for ${field.type} field "${name}"`
    return Result.fail(invalid(`Invalid filter ${parameter}: ${why}. Allowed operators: ${allowed.join(", ")}`, "INVALID_FILTER"))
  }
  return Result.mapBoth(parseValue(name, field, op, raw), {
    onFailure: (reason) => invalid(`Invalid filter ${parameter}: ${reason}`, "INVALID_FILTER"),
    onSuccess: (value): FilterNode => ({ kind: "condition", field: name, op, value })
  })
}

/**
 * Work one list request may ask of the store: conditions in all (bracket and JSON forms
 * together), and of those the substring ones (`contains`, `not_contains`), which scan
 * every row's text and no index serves.
 */
export const FILTER_LIMITS = { maxConditions: 50, maxSubstringConditions: 10 } as const

const isSubstring = (node: FilterNode): boolean => node.kind === "condition" && (node.op === "contains" || node.op === "not_contains")

/** Conditions in a tree, and how many of them are substring matches (iterative: the tree is bounded, but cheaply so). */
export const countConditions = (nodes: ReadonlyArray<FilterNode>): { readonly all: number; readonly substring: number } => {
  let all = 0
  let substring = 0
  const stack = [...nodes]
  while (stack.length > 0) {
    const node = stack.pop()!
    if (node.kind === "group") stack.push(...node.conditions)
    else {
      all++
      if (isSubstring(node)) substring++
    }
  }
  return { all, substring }
}

/** 400 when a request's filters ask more than `FILTER_LIMITS` allow. */
export const checkFilterLimits = (nodes: ReadonlyArray<FilterNode>): Result.Result<void, InvalidRequest> => {
  const { all, substring } = countConditions(nodes)
  if (all > FILTER_LIMITS.maxConditions) {
    return Result.fail(invalid(`Too many filter conditions: ${all}; at most ${FILTER_LIMITS.maxConditions} per request (bracket and JSON forms together)`, "TOO_MANY_CONDITIONS"))
  }
  if (substring > FILTER_LIMITS.maxSubstringConditions) {
    return Result.fail(invalid(`Too many contains/not_contains conditions: ${substring}; at most ${FILTER_LIMITS.maxSubstringConditions} per request`, "TOO_MANY_CONDITIONS"))
  }
  return Result.succeed(undefined)
}

const BRACKET = /^([A-Za-z0-9_.]+)(?:\[([A-Za-z_]+)\])?$/

/** `status=draft`, `amount[gte]=10`: each repeated key adds a condition, all combined with AND. */
export const parseBracketFilters = (
  fields: Readonly<Record<string, FilterField>>,
  params: ReadonlyArray<readonly [string, string]>
): Result.Result<ReadonlyArray<FilterNode>, InvalidRequest> => {
  if (params.length > FILTER_LIMITS.maxConditions) {
    return Result.fail(invalid(`Too many filter conditions: ${params.length}; at most ${FILTER_LIMITS.maxConditions} per request (bracket and JSON forms together)`, "TOO_MANY_CONDITIONS"))
  }
  const conditions: Array<FilterNode> = []
  for (const [key, value] of params) {
    const match = BRACKET.exec(key)
    if (!match) return Result.fail(invalid(`Unknown query parameter "${key}"`, "INVALID_FILTER"))
    const parsed = makeCondition(fields, match[1], match[2] ?? "eq", value, `"${key}"`)
    if (Result.isFailure(parsed)) return Result.fail(parsed.failure)
    conditions.push(parsed.success)
  }
  return Result.succeed(conditions)
}

const MAX_JSON_DEPTH = 4
const MAX_JSON_CONDITIONS = FILTER_LIMITS.maxConditions

/**
 * The JSON form, sent URL-encoded in the `filter` query parameter:
 * `{"logic":"and","conditions":[{"f":"amount","op":"gte","v":"10"}]}`. Groups nest, with `and` or `or`.
 */
export const parseJsonFilter = (
  fields: Readonly<Record<string, FilterField>>,
  text: string
): Result.Result<FilterNode, InvalidRequest> => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    return Result.fail(invalid(`The filter parameter is not valid JSON`, "INVALID_FILTER"))
  }
  let count = 0
  const walk = (node: unknown, depth: number, at: string): Result.Result<FilterNode, InvalidRequest> => {
    if (typeof node !== "object" || node === null || Array.isArray(node)) {
      return Result.fail(invalid(`filter${at} must be an object`, "INVALID_FILTER"))
    }
    const record = node as Record<string, unknown>
    if ("conditions" in record || "logic" in record) {
      if (depth >= MAX_JSON_DEPTH) return Result.fail(invalid(`filter nests deeper than ${MAX_JSON_DEPTH} levels`, "INVALID_FILTER"))
      const logic = record.logic ?? "and"
      if (logic !== "and" && logic !== "or") {
        return Result.fail(invalid(`filter${at}.logic must be "and" or "or"`, "INVALID_FILTER"))
      }
      if (!Array.isArray(record.conditions)) {
        return Result.fail(invalid(`filter${at}.conditions must be an array`, "INVALID_FILTER"))
      }
      const children: Array<FilterNode> = []
      for (const [index, child] of record.conditions.entries()) {
        const parsed = walk(child, depth + 1, `${at}.conditions[${index}]`)
        if (Result.isFailure(parsed)) return parsed
        children.push(parsed.success)
      }
      return Result.succeed({ kind: "group", logic, conditions: children })
    }
    if (++count > MAX_JSON_CONDITIONS) {
      return Result.fail(invalid(`Too many filter conditions: filter has more than ${MAX_JSON_CONDITIONS}; at most ${MAX_JSON_CONDITIONS} per request (bracket and JSON forms together)`, "TOO_MANY_CONDITIONS"))
    }
    const { f, op = "eq", v } = record
    if (typeof f !== "string") return Result.fail(invalid(`filter${at}.f must name a field`, "INVALID_FILTER"))
    if (typeof op !== "string") return Result.fail(invalid(`filter${at}.op must be an operator`, "INVALID_FILTER"))
    return makeCondition(fields, f, op, v, `filter${at}`)
  }
  return walk(json, 0, "")
}
