import { Schema, SchemaAST } from "effect"
import type { AnyField, AnySchema, Fields } from "./field.js"

/**
 * The schemas a field map derives: the record clients read and the create and
 * update inputs clients send (the store builds rows from the fields themselves:
 * `store/record-json.ts`). Each field is read
 * once from its declaration; nothing here knows a resource by name.
 */

const entries = (fields: Fields) => Object.entries(fields) as Array<[string, AnyField]>

/** The record as answered: every field with an output, in declaration order. */
export const recordSchema = (fields: Fields, annotations: { readonly identifier: string; readonly description?: string }) =>
  Schema.Struct(
    Object.fromEntries(entries(fields).flatMap(([name, field]): Array<[string, AnySchema]> => (field.output ? [[name, field.output]] : [])))
  ).annotate(annotations)

/**
 * The record as the store answers it (`store/record-json.ts`, mode `row`): every answered field,
 * and the stored fields rules read but clients never see (`hidden`), of the record and of each
 * child. Each value is decoded by the field's `read` schema where it declares one (an embed keeps
 * its embed form there), else by its answer's.
 */
export const storedRecordSchema = (fields: Fields): Schema.Struct<Readonly<Record<string, AnySchema>>> =>
  Schema.Struct(
    Object.fromEntries(
      entries(fields).flatMap(([name, field]): Array<[string, AnySchema]> => {
        if (field.children) return [[name, Schema.Array(storedRecordSchema(field.children.fields))]]
        const schema = field.read ?? field.output
        return schema ? [[name, schema]] : []
      })
    )
  )

/** Fields the record answers but clients cannot write: sending one is refused by name. */
export const readOnlyNames = (fields: Fields): ReadonlyArray<string> =>
  entries(fields).filter(([, field]) => field.output && !field.input && !(field.children?.writable)).map(([name]) => name)

/** Fields of the record that are stored but not answered. */
export const hiddenNames = (fields: Fields): ReadonlyArray<string> =>
  entries(fields).filter(([, field]) => !field.output && field.read).map(([name]) => name)

const nullable = (field: AnyField, schema: AnySchema): AnySchema => (field.input!.nullable ? Schema.NullOr(schema) : schema)

const childArray = (item: AnySchema, spec: NonNullable<AnyField["children"]>, minItems: number): AnySchema => {
  const capped = Schema.Array(item).check(Schema.isMaxLength(spec.maxItems, { message: `must have at most ${spec.maxItems} items` }))
  return minItems > 0 ? capped.check(Schema.isMinLength(minItems, { message: `must have at least ${minItems} item` })) : capped
}

/** What a client sends to create: required fields required, nullable ones clearable, writable children as arrays. */
export const createInputSchema = (fields: Fields, identifier: string): AnySchema =>
  Schema.Struct(
    Object.fromEntries(
      entries(fields).flatMap(([name, field]): Array<[string, AnySchema]> => {
        if (field.children?.writable) {
          const items = childArray(childCreateSchema(field.children.fields, field.children.identifier), field.children, field.children.required ? 1 : 0)
          return [[name, field.children.required ? items : Schema.optionalKey(items)]]
        }
        if (!field.input) return []
        const schema = nullable(field, field.input.schema)
        return [[name, field.input.required ? schema : Schema.optionalKey(schema)]]
      })
    )
  ).annotate({ identifier: `${identifier}Create` })

/** What a client sends to update: every field optional; children as the complete new list. */
export const updateInputSchema = (fields: Fields, identifier: string): AnySchema =>
  Schema.Struct(
    Object.fromEntries(
      entries(fields).flatMap(([name, field]): Array<[string, AnySchema]> => {
        if (field.children?.writable) {
          const items = childArray(childPatchSchema(field.children.fields, field.children.identifier), field.children, field.children.required ? 1 : 0)
          return [[name, Schema.optionalKey(items)]]
        }
        if (!field.input || field.input.on !== "both") return []
        return [[name, Schema.optionalKey(nullable(field, field.input.schema))]]
      })
    )
  ).annotate({ identifier: `${identifier}Update` })

const UUID_PATTERN = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/

/** A UUID as the store takes it: any hexadecimal 8-4-4-4-12 spelling (`isUUID` also checks version and variant bits). */
const Uuid = Schema.String.check(
  Schema.isPattern(UUID_PATTERN, { expected: "a UUID", toJsonSchema: () => ({ format: "uuid", pattern: UUID_PATTERN.source }) })
).annotate({ description: "UUID" })

/** A new child, as sent inside the parent's create body. */
export const childCreateSchema = (fields: Fields, identifier: string) =>
  Schema.Struct(
    Object.fromEntries(
      entries(fields).flatMap(([name, field]): Array<[string, AnySchema]> => {
        if (!field.input) return []
        const schema = nullable(field, field.input.schema)
        return [[name, field.input.required ? schema : Schema.optionalKey(schema)]]
      })
    )
  ).annotate({ identifier: `${identifier}Create` })

/**
 * A child inside an update's complete list: with the `id` of a child it keeps
 * (fields sent replace), or without one for a new child (whose required fields the
 * engine checks, since a schema cannot make them depend on `id`).
 */
export const childPatchSchema = (fields: Fields, identifier: string) =>
  Schema.Struct({
    id: Schema.optionalKey(Uuid.annotate({ description: "Id of an existing item to keep and change; omit for a new item" })),
    ...Object.fromEntries(
      entries(fields).flatMap(([name, field]): Array<[string, AnySchema]> =>
        field.input ? [[name, Schema.optionalKey(nullable(field, field.input.schema))]] : []
      )
    )
  }).annotate({ identifier: `${identifier}Patch` })

/** Which side of a schema a value is on: as decoded (what a record answers) or as encoded (what a client sends). */
export type SchemaSide = "decoded" | "encoded"

/**
 * The node a value of the schema is, seen through suspensions and (on the encoded side) its
 * transformations; checks and the decoded side's transformations are part of the node itself.
 */
const unwrap = (ast: SchemaAST.AST, side: SchemaSide): SchemaAST.AST => {
  const node = side === "encoded" ? SchemaAST.toEncoded(ast) : ast
  return node._tag === "Suspend" ? unwrap(node.thunk(), side) : node
}

/** The keys of the object a schema describes, in order (the first object of a union, as of `T | null`); undefined when none. */
export const objectKeysOf = (ast: SchemaAST.AST, side: SchemaSide): ReadonlyArray<string> | undefined => {
  const node = unwrap(ast, side)
  if (node._tag === "Objects") return node.propertySignatures.map((signature) => String(signature.name))
  if (node._tag !== "Union") return undefined
  for (const member of node.types) {
    const keys = objectKeysOf(member, side)
    if (keys) return keys
  }
  return undefined
}

/** The element of the array a schema describes; undefined when it is not an array. */
export const arrayElementOf = (ast: SchemaAST.AST, side: SchemaSide): SchemaAST.AST | undefined => {
  const node = unwrap(ast, side)
  return node._tag === "Arrays" ? node.rest[0] : undefined
}
