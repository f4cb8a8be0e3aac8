import { JsonSchema, Schema } from "effect"

/** What MCP requires of a tool's `inputSchema`: an object schema at the root. */
export interface ObjectJsonSchema {
  readonly type: "object"
  readonly properties: Readonly<Record<string, object>>
  readonly required: ReadonlyArray<string>
  readonly [keyword: string]: unknown
}

const DEFINITIONS = "#/$defs/"

/**
 * The name of the definition a `$ref` points to: a URI fragment holding a JSON Pointer
 * (`#/$defs/Financial%20accountPage`), decoded; undefined for a reference elsewhere.
 */
export const definitionName = (ref: unknown): string | undefined =>
  typeof ref === "string" && ref.startsWith(DEFINITIONS)
    ? decodeURIComponent(ref.slice(DEFINITIONS.length)).replace(/~1/g, "/").replace(/~0/g, "~")
    : undefined

/**
 * JSON Schema (2020-12, the MCP default dialect) of what a caller sends. A
 * schema with an identifier comes out as a bare `$ref`; MCP wants the object
 * itself at the root, so that reference is inlined and `$defs` kept for the nested ones.
 * Objects refuse properties they do not declare (`additionalProperties: false`), as the
 * arguments are decoded.
 */
export const inputJsonSchema = (schema: Schema.Constraint): ObjectJsonSchema => objectJsonSchema(schema, "input")

/**
 * JSON Schema of what a tool answers in `structuredContent` (MCP `outputSchema`): clients
 * validate results against it, so it is derived from the very schema the answer is encoded with.
 */
export const outputJsonSchema = (schema: Schema.Constraint): ObjectJsonSchema => objectJsonSchema(schema, "output")

/** Any object: for answers whose shape varies (an action without a declared output). */
export const ANY_OBJECT: ObjectJsonSchema = { type: "object", properties: {}, required: [] }

/**
 * No `$id` may come out twice, which validators (Ajv in the MCP client) refuse: a schema's own
 * annotations could add one, so none is kept.
 */
const withoutIds = (value: unknown): unknown =>
  Array.isArray(value)
    ? value.map(withoutIds)
    : typeof value === "object" && value !== null
    ? Object.fromEntries(Object.entries(value).filter(([key]) => key !== "$id").map(([key, inner]) => [key, withoutIds(inner)]))
    : value

const objectJsonSchema = (schema: Schema.Constraint, role: "input" | "output"): ObjectJsonSchema => {
  const document = Schema.toJsonSchemaDocument(schema, { onExcessProperty: "error" })
  const { $ref, ...rest } = withoutIds(document.schema) as Readonly<Record<string, unknown>>
  const definitions = { ...(withoutIds(document.definitions) as Record<string, Record<string, unknown>>) }
  const inlined: Record<string, unknown> = { $schema: JsonSchema.META_SCHEMA_URI_DRAFT_2020_12, ...rest }
  const name = definitionName($ref)
  if (name !== undefined) {
    Object.assign(inlined, definitions[name])
    const stillReferenced = JSON.stringify({ inlined, definitions: { ...definitions, [name]: undefined } }).includes(`"${$ref}"`)
    if (!stillReferenced) delete definitions[name]
  }
  if (Object.keys(definitions).length > 0) inlined.$defs = definitions
  if (inlined.type !== "object" || typeof inlined.properties !== "object") {
    throw new Error(`A tool ${role} must be an object schema, got ${JSON.stringify(inlined).slice(0, 200)}`)
  }
  return { type: "object", properties: {}, required: [], ...inlined }
}
