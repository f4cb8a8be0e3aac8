import { type AnyField, DateString, type Fields, type ResourceRef } from "@erp/core"
import { Schema } from "effect"
import { definitionName, type ObjectJsonSchema } from "./json-schema.js"

type Json = Readonly<Record<string, unknown>>

const isJson = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value)

/** What the declaration says of the properties of one tool input, beyond their JSON Schema. */
export interface Declared {
  /** The fields the input's properties are declared by (a resource's, for its create and update). */
  readonly fields?: Fields
  /** A valid input: each property's example is its value here. */
  readonly example?: unknown
}

/** The pattern a date (`YYYY-MM-DD`) is sent with, as the declarations' date schema says it. */
let datePattern: unknown
const isDatePattern = (pattern: unknown) => {
  if (datePattern === undefined) {
    const { schema, definitions } = Schema.toJsonSchemaDocument(DateString)
    const name = definitionName(schema.$ref)
    const made = name === undefined ? schema : definitions[name]
    datePattern = (isJson(made) ? made.pattern : undefined) ?? null
  }
  return pattern !== undefined && pattern === datePattern
}

/** Examples of the values a format names, for properties the declared example leaves out. */
const FORMAT_EXAMPLES: Readonly<Record<string, string>> = {
  uuid: "6f1c2a9e-3b4d-4e5f-8a7b-9c0d1e2f3a4b",
  "date-time": "2025-01-31T14:30:00Z",
  email: "ana@example.com",
  uri: "https://example.com"
}

/** The record another resource's id names: a reference, or the key of an embed of the same field map. */
const referenced = (name: string, field: AnyField | undefined, fields: Fields | undefined): ResourceRef | undefined => {
  if (field?.reference) return field.reference.resource()
  const embed = Object.values(fields ?? {}).find((other) => other.embed?.kind === "one" && other.embed.key === name)?.embed
  return embed?.resource()
}

const listToolOf = (resource: ResourceRef) => `list_${resource.name.replace(/[^A-Za-z0-9]+/g, "_")}`

const plural = (count: number, word: string) => `${count} ${word}${count === 1 ? "" : "s"}`

/** A bound worth saying: every integer carries the safe-integer ones, which say nothing an agent needs. */
const bound = (value: unknown): number | undefined =>
  typeof value === "number" && Math.abs(value) !== Number.MAX_SAFE_INTEGER ? value : undefined

const range = (node: Json): string => {
  const minimum = bound(node.minimum)
  const maximum = bound(node.maximum)
  if (typeof minimum === "number" && typeof maximum === "number") return ` from ${minimum} to ${maximum}`
  if (typeof minimum === "number") return ` of at least ${minimum}`
  if (typeof maximum === "number") return ` of at most ${maximum}`
  return ""
}

const PROPERTY_NAMES_SHOWN = 6

/** The members of `anyOf` other than `null`, and whether `null` is one. */
const nullableMembers = (node: Json): { readonly members: ReadonlyArray<Json>; readonly nullable: boolean } => {
  const anyOf = Array.isArray(node.anyOf) ? node.anyOf.filter(isJson) : undefined
  if (!anyOf) return { members: [node], nullable: false }
  const members = anyOf.filter((member) => member.type !== "null")
  return { members, nullable: members.length < anyOf.length }
}

interface Walk {
  readonly defs: Record<string, Json>
  readonly described: Set<string>
  /** Describe every property, given descriptions included (they become the first sentence); else only the undescribed. */
  readonly every: boolean
}

const resolve = (node: Json, walk: Walk): Json => {
  const name = definitionName(node.$ref)
  return name === undefined ? node : walk.defs[name] ?? node
}

/** What kind of value a node takes, in words: `text of up to 100 characters`, `UUID`, `list of objects`. */
const kindOf = (node: Json, walk: Walk, column: string | undefined): string => {
  if (Array.isArray(node.enum)) return `one of ${node.enum.map(String).join(", ")}`
  if (node.const !== undefined) return `exactly ${JSON.stringify(node.const)}`
  if (Array.isArray(node.anyOf)) {
    return node.anyOf.filter(isJson).map((member) => kindOf(resolve(member, walk), walk, undefined)).join(" or ")
  }
  switch (node.type) {
    case "string": {
      if (node.format === "uuid") return "UUID"
      if (node.format === "date-time" || column === "timestamptz") return "date and time, ISO 8601 with Z or an offset"
      if (column === "date" || isDatePattern(node.pattern)) return "date, YYYY-MM-DD"
      if (node.format === "email") return "email address"
      if (node.format === "uri") return "URL (http or https)"
      const length = typeof node.maxLength === "number" ? ` of up to ${plural(node.maxLength, "character")}` : ""
      const minimum = typeof node.minLength === "number" && node.minLength > 0 ? `, at least ${node.minLength}` : ""
      return `text${length}${minimum}${node.pattern === "\\S" ? ", not blank" : ""}`
    }
    case "integer":
      return `integer${range(node)}`
    case "number":
      return `number${range(node)}`
    case "boolean":
      return "true or false"
    case "array": {
      const items = isJson(node.items) ? kindOf(resolve(node.items, walk), walk, undefined) : "values"
      const most = typeof node.maxItems === "number" ? `, at most ${node.maxItems}` : ""
      const least = typeof node.minItems === "number" && node.minItems > 0 ? `, at least ${node.minItems}` : ""
      return `list of ${items.startsWith("object") ? "objects" : items}${least}${most}`
    }
    case "object": {
      const names = isJson(node.properties) ? Object.keys(node.properties) : []
      if (names.length === 0) return "object of your own keys and JSON values"
      const shown = names.slice(0, PROPERTY_NAMES_SHOWN).join(", ")
      return `object with ${shown}${names.length > PROPERTY_NAMES_SHOWN ? ", …" : ""}`
    }
    default:
      return "any JSON value"
  }
}

/** An example of a node's value when the declared example has none: its schema's own, or one its enum or format names. */
const exampleOf = (node: Json, column: string | undefined): unknown => {
  if (Array.isArray(node.examples) && node.examples.length > 0) return node.examples[0]
  if (Array.isArray(node.enum) && node.enum.length > 0) return node.enum[0]
  if (node.type !== "string") return undefined
  if (column === "date" || isDatePattern(node.pattern)) return "2025-01-31"
  return typeof node.format === "string" ? FORMAT_EXAMPLES[node.format] : undefined
}

const sentence = (text: string) => (/[.!?]$/.test(text.trim()) ? text.trim() : `${text.trim()}.`)

const capitalised = (text: string) => text.charAt(0).toUpperCase() + text.slice(1)

const words = (text: string) => text.toLowerCase().replace(/[^a-z0-9]+/g, " ").trim()

/** Kinds a declared text already says enough of: what plain text is for, an enum's values, a flag. */
const PLAIN_KIND = /^(text|one of |list of text|true or false)/

/**
 * A property's description, from its declaration and its schema: what it is (as declared), its
 * type and format in words, whether null is taken, how an update treats it, and an example.
 */
const describe = (name: string, property: Json, field: AnyField | undefined, fields: Fields | undefined, example: unknown, walk: Walk): string => {
  const { members, nullable } = nullableMembers(property)
  const resolved = members.map((member) => resolve(member, walk))
  const column = field?.column?.type
  const target = referenced(name, field, fields)
  const kinds = resolved.map((member) => kindOf(member, walk, column))
  const kind = target && kinds[0] === "UUID" ? `UUID of a ${target.title.toLowerCase()} (${listToolOf(target)} finds them)` : kinds.join(" or ")
  const texts: Array<string> = []
  for (const text of [property.description, field?.description, ...resolved.map((member) => member.description)]) {
    // A text that only names the type ("UUID") says less than the kind.
    if (typeof text === "string" && !words(kind).startsWith(words(text)) && !texts.some((known) => words(known).includes(words(text)))) texts.push(text)
  }
  const type = texts.length > 0 && PLAIN_KIND.test(kind) ? (nullable ? "May be null." : "") : sentence(capitalised(`${kind}${nullable ? ", or null" : ""}`))
  const shown = example !== undefined ? example : resolved.length === 1 ? exampleOf(resolved[0], column) : undefined
  return [
    ...texts.map(sentence),
    ...(type ? [type] : []),
    ...(field?.input?.patch === "merge" ? ["An update merges it key by key (null removes a key)."] : []),
    ...(shown !== undefined ? [`Example: ${JSON.stringify(shown)}.`] : [])
  ].join(" ")
}

/** The node with every property below it described (definitions it references too, once each). */
const describeBelow = (node: Json, fields: Fields | undefined, example: unknown, walk: Walk): Json => {
  const defined = definitionName(node.$ref)
  if (defined !== undefined) {
    const definition = walk.defs[defined]
    if (definition && !walk.described.has(defined)) {
      walk.described.add(defined)
      walk.defs[defined] = describeBelow(definition, fields, example, walk)
    }
    return node
  }
  return {
    ...node,
    ...(isJson(node.properties)
      ? {
        properties: Object.fromEntries(Object.entries(node.properties).map(([name, property]) => [
          name,
          isJson(property) ? describeProperty(name, property, fields, isJson(example) ? example[name] : undefined, walk) : property
        ]))
      }
      : {}),
    ...(isJson(node.items) ? { items: describeBelow(node.items, fields, Array.isArray(example) ? example[0] : undefined, walk) } : {}),
    ...(Array.isArray(node.anyOf) ? { anyOf: node.anyOf.map((member) => (isJson(member) ? describeBelow(member, fields, example, walk) : member)) } : {}),
    ...(isJson(node.additionalProperties) ? { additionalProperties: describeBelow(node.additionalProperties, undefined, undefined, walk) } : {})
  }
}

const describeProperty = (name: string, property: Json, fields: Fields | undefined, example: unknown, walk: Walk): Json => {
  const field = fields?.[name]
  // A child collection's items are declared by the collection's own fields.
  const below = describeBelow(property, field?.children?.fields, example, walk)
  if (typeof below.description === "string" && !walk.every) return below
  return { ...below, description: describe(name, below, field, fields, example, walk) }
}

/**
 * Every property of a tool's input described, nested ones too: agents choose arguments from
 * these texts. With a declaration (the fields, an example) every description is derived from
 * it and the schema, a given one as its first sentence; without, only undescribed properties get one.
 */
export const describeProperties = (schema: ObjectJsonSchema, declared?: Declared): ObjectJsonSchema => {
  const walk: Walk = { defs: { ...(isJson(schema.$defs) ? (schema.$defs as Record<string, Json>) : {}) }, described: new Set(), every: declared !== undefined }
  const described = describeBelow(schema, declared?.fields, declared?.example, walk)
  return {
    ...schema,
    ...described,
    type: "object",
    properties: Object.fromEntries(Object.entries(isJson(described.properties) ? described.properties : {}).filter((entry): entry is [string, Json] => isJson(entry[1]))),
    required: schema.required,
    ...(Object.keys(walk.defs).length > 0 ? { $defs: walk.defs } : {})
  }
}
