import { JSONSchema, type Schema } from "effect"

/** What MCP requires of a tool's `inputSchema`: an object schema at the root. */
export interface ObjectJsonSchema {
  readonly type: "object"
  readonly properties: Readonly<Record<string, object>>
  readonly required: ReadonlyArray<string>
  readonly [keyword: string]: unknown
}

const DEFINITIONS = "#/$defs/"

/**
 * JSON Schema (2020-12, the MCP default dialect) of what a caller sends. A
 * schema with an identifier comes out as a bare `$ref`; MCP wants the object
 * itself at the root, so that reference is inlined and `$defs` kept for the nested ones.
 */
export const inputJsonSchema = (schema: Schema.Schema.AnyNoContext): ObjectJsonSchema => objectJsonSchema(schema, "input")

/**
 * JSON Schema of what a tool answers in `structuredContent` (MCP `outputSchema`): clients
 * validate results against it, so it is derived from the very schema the answer is encoded with.
 */
export const outputJsonSchema = (schema: Schema.Schema.AnyNoContext): ObjectJsonSchema => objectJsonSchema(schema, "output")

/** Any object: for answers whose shape varies (an action without a declared output). */
export const ANY_OBJECT: ObjectJsonSchema = { type: "object", properties: {}, required: [] }

/**
 * Effect marks `Unknown`, `object` and `{}` with `$id`s such as `/schemas/unknown`; a schema using
 * two of them then has one id twice, which validators (Ajv in the MCP client) refuse.
 */
const withoutIds = (value: unknown): unknown =>
  Array.isArray(value)
    ? value.map(withoutIds)
    : typeof value === "object" && value !== null
    ? Object.fromEntries(Object.entries(value).filter(([key]) => key !== "$id").map(([key, inner]) => [key, withoutIds(inner)]))
    : value

const objectJsonSchema = (schema: Schema.Schema.AnyNoContext, role: "input" | "output"): ObjectJsonSchema => {
  const root = withoutIds(JSONSchema.make(schema, { target: "jsonSchema2020-12" })) as Readonly<Record<string, unknown>>
  const { $ref, $defs, ...rest } = root
  const definitions = { ...($defs as Record<string, Record<string, unknown>> | undefined) }
  const inlined: Record<string, unknown> = { ...rest }
  if (typeof $ref === "string" && $ref.startsWith(DEFINITIONS)) {
    const name = $ref.slice(DEFINITIONS.length)
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
