import { Effect } from "effect"
import { type FieldErrors, invalid, type InvalidRequest } from "../errors.js"
import type { Fields } from "./field.js"
import type { AnyResource, Row } from "./resource.js"

const isObject = (value: unknown): value is Row => typeof value === "object" && value !== null && !Array.isArray(value)

const known = new WeakMap<Fields, ReadonlyMap<string, string>>()

/** Deprecated input name to the field it names, for one field map (made once per map). */
const aliasesOf = (fields: Fields): ReadonlyMap<string, string> => {
  let aliases = known.get(fields)
  if (!aliases) {
    aliases = new Map(Object.entries(fields).flatMap(([name, field]) => (field.aliases ?? []).map((alias): [string, string] => [alias, name])))
    known.set(fields, aliases)
  }
  return aliases
}

const renameIn = (object: Row, aliases: ReadonlyMap<string, string>, at: string, clashes: Record<string, Array<string>>): Row => {
  if (!Object.keys(object).some((key) => aliases.has(key))) return object
  const renamed: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(object)) {
    const name = aliases.get(key)
    if (name === undefined) renamed[key] = value
    else if (Object.prototype.hasOwnProperty.call(object, name)) clashes[`${at}${key}`] = [`is the deprecated name of ${name}: send ${name} only`]
    else renamed[name] = value
  }
  return renamed
}

/**
 * A body with each field's deprecated names (`description` on a purchase invoice's item)
 * sent under the field's own name, header and child collections alike, so decoding, rules
 * and storage know one name. Both names in one object is a 400 naming the deprecated one.
 */
export const renameAliases = (resource: AnyResource, body: unknown): Effect.Effect<unknown, InvalidRequest> => {
  if (!isObject(body)) return Effect.succeed(body)
  const clashes: Record<string, Array<string>> = {}
  let renamed = renameIn(body, aliasesOf(resource.fields), "", clashes)
  for (const collection of resource.children) {
    const aliases = aliasesOf(collection.fields)
    const items = renamed[collection.name]
    if (aliases.size === 0 || !Array.isArray(items)) continue
    const next = items.map((item, index) => (isObject(item) ? renameIn(item, aliases, `${collection.name}.${index}.`, clashes) : item))
    if (next.some((item, index) => item !== items[index])) renamed = { ...renamed, [collection.name]: next }
  }
  const names = Object.keys(clashes)
  return names.length === 0
    ? Effect.succeed(renamed)
    : Effect.fail(invalid(`Invalid request body: ${names.map((name) => `${name} ${clashes[name][0]}`).join("; ")}`, "INVALID_BODY", clashes as FieldErrors))
}
