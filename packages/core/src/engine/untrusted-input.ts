import { type FieldErrors, InvalidRequest } from "../errors.js"

/**
 * The rules every value from outside (a JSON body, MCP arguments, query parameters,
 * path segments, form fields) passes before any schema, SQL or recursion sees it.
 * Each refusal is a 400 naming the field: PostgreSQL cannot store NUL in text,
 * a lone UTF-16 surrogate is not text at all, a key named like an `Object.prototype`
 * member reaches inherited functions in code that indexes plain objects, and
 * nesting without a bound overflows the stack of every recursive reader.
 */
export const INPUT_LIMITS = {
  /** Objects and arrays inside one body, counting the body itself. */
  maxDepth: 32,
  /** Items of any one array in a body (purchase invoice items are 500, installments 120). */
  maxArrayItems: 1_000,
  /** Keys of any one object in a body. */
  maxObjectKeys: 1_000,
  /** Field errors listed in one answer; the message says how many more there were. */
  maxFieldErrors: 50
} as const

/**
 * Keys that would name an inherited member of a plain object. `__proto__` from
 * JSON.parse is an own key, but any code doing `target[key] = …` would set the prototype.
 */
const PROTOTYPE_KEYS: ReadonlySet<string> = new Set([...Object.getOwnPropertyNames(Object.prototype), "prototype"])

export const isPrototypeKey = (key: string): boolean => PROTOTYPE_KEYS.has(key)

/** A high surrogate not followed by a low one, or a low one not preceded by a high one (code units, no `u` flag). */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/

/** Why a string from outside cannot be taken, or undefined when it can. */
export const textProblem = (text: string): string | undefined => {
  if (text.includes("\u0000")) return "must not contain the NUL character (U+0000)"
  if (LONE_SURROGATE.test(text)) return "must be valid Unicode (it contains a lone surrogate)"
  return undefined
}

const bodyError = (field: string, reason: string, what: string) =>
  new InvalidRequest({ message: `Invalid ${what}: ${field} ${reason}`, code: what === "arguments" ? "INVALID_ARGUMENTS" : "INVALID_BODY", fields: { [field]: [reason] } })

const pathName = (path: string): string => (path === "" ? "body" : path)

const join = (path: string, key: string | number): string => (path === "" ? String(key) : `${path}.${key}`)

/**
 * Walks a parsed JSON value without recursion (an explicit stack), refusing the
 * first value that breaks a rule. Linear in the size of the value.
 */
export const checkUntrustedJson = (value: unknown, what: "request body" | "arguments" = "request body"): InvalidRequest | undefined => {
  const stack: Array<{ value: unknown; path: string; depth: number }> = [{ value, path: "", depth: 0 }]
  while (stack.length > 0) {
    const { value: current, path, depth } = stack.pop()!
    if (typeof current === "string") {
      const problem = textProblem(current)
      if (problem) return bodyError(pathName(path), problem, what)
      continue
    }
    if (typeof current !== "object" || current === null) continue
    if (depth + 1 > INPUT_LIMITS.maxDepth) {
      return bodyError(pathName(path), `nests deeper than ${INPUT_LIMITS.maxDepth} levels of objects and arrays`, what)
    }
    if (Array.isArray(current)) {
      if (current.length > INPUT_LIMITS.maxArrayItems) {
        return bodyError(pathName(path), `must have at most ${INPUT_LIMITS.maxArrayItems} items`, what)
      }
      for (let index = current.length - 1; index >= 0; index--) stack.push({ value: current[index], path: join(path, index), depth: depth + 1 })
      continue
    }
    const keys = Object.keys(current)
    if (keys.length > INPUT_LIMITS.maxObjectKeys) {
      return bodyError(pathName(path), `must have at most ${INPUT_LIMITS.maxObjectKeys} keys`, what)
    }
    for (let index = keys.length - 1; index >= 0; index--) {
      const key = keys[index]
      const keyProblem = textProblem(key)
      if (keyProblem) return bodyError(pathName(path), `has a key that ${keyProblem}`, what)
      if (isPrototypeKey(key)) {
        // `__proto__` cannot be a key of the answer's field map either: the parent is named instead.
        return key === "__proto__"
          ? bodyError(pathName(path), `has the key "__proto__", a reserved name (a member of every JavaScript object) that cannot be used as a key`, what)
          : bodyError(join(path, key), "is a reserved name (a member of every JavaScript object) and cannot be used as a key", what)
      }
      stack.push({ value: (current as Record<string, unknown>)[key], path: join(path, key), depth: depth + 1 })
    }
  }
  return undefined
}

/** Query parameters, path segments and form fields: each name and value must be text PostgreSQL can take. */
export const checkUntrustedParams = (
  params: ReadonlyArray<readonly [string, string]>,
  what = "query parameter"
): InvalidRequest | undefined => {
  for (const [name, value] of params) {
    const problem = textProblem(name) ?? textProblem(value)
    if (problem) {
      const shown = textProblem(name) ? JSON.stringify(name) : name
      return new InvalidRequest({ message: `Invalid ${what} ${shown}: it ${problem}`, code: "INVALID_PARAMETER", fields: { [shown]: [problem] } })
    }
  }
  return undefined
}

/** A field errors map with at most `INPUT_LIMITS.maxFieldErrors` fields, and how many were left out. */
export const capFieldErrors = (fields: FieldErrors): { readonly fields: FieldErrors; readonly omitted: number } => {
  const names = Object.keys(fields)
  if (names.length <= INPUT_LIMITS.maxFieldErrors) return { fields, omitted: 0 }
  const kept: Record<string, ReadonlyArray<string>> = {}
  for (const name of names.slice(0, INPUT_LIMITS.maxFieldErrors)) kept[name] = fields[name]
  return { fields: kept, omitted: names.length - INPUT_LIMITS.maxFieldErrors }
}
