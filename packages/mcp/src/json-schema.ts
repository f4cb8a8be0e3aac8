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
export const inputJsonSchema = (schema: Schema.Schema.AnyNoContext): ObjectJsonSchema => {
  const root: Readonly<Record<string, unknown>> = { ...JSONSchema.make(schema, { target: "jsonSchema2020-12" }) }
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
    throw new Error(`A tool input must be an object schema, got ${JSON.stringify(inlined).slice(0, 200)}`)
  }
  return { type: "object", properties: {}, required: [], ...inlined }
}
