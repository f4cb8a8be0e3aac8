import { Schema } from "effect"
import type { FieldType, FilterField, Operator } from "./fields.js"

/** A schema of any value that needs no services to decode or encode: what fields, inputs and answers are. */
export type AnySchema = Schema.Codec<unknown, unknown>

/** How a value is stored and cast when written: column names and casts come only from declarations. */
export type ColumnType = "text" | "uuid" | "numeric" | "date" | "timestamptz" | "boolean" | "jsonb" | "integer"

/** Who may write a field: on create and update, on create only, or nobody (the server computes it). */
export type InputRole = "both" | "create"

/** How an update combines the value sent with the stored one. */
export type PatchMode =
  /** The value sent replaces the stored one. */
  | "replace"
  /** JSON merge patch one level deep: keys sent replace, `null` removes a key. */
  | "merge"

export interface FieldInput {
  /** The wire schema clients send (constraints on its encoded side, so OpenAPI and MCP show them). */
  readonly schema: AnySchema
  readonly on: InputRole
  /** Required on create (never on update). */
  readonly required: boolean
  /** `null` is accepted and clears the stored value. */
  readonly nullable: boolean
  readonly patch: PatchMode
}

/** The stored form of a field: a column of the resource's table, or a read-only SQL expression over alias `r`. */
export interface FieldColumn {
  readonly type: ColumnType
  /** A SQL expression read instead of `r.<name>` (derived flags, a normalised status, a block with its owner id). */
  readonly sql?: string
  /** No column at all: the value exists only as `sql` (derived flags); never written. */
  readonly virtual?: boolean
  /** Not written by the engine (database defaults and generated values, e.g. `created_at`). */
  readonly generated?: boolean
  /** A jsonb object answered with exactly these keys, each `null` when absent (a country block). */
  readonly keys?: ReadonlyArray<string>
}

/**
 * A value answered from another record: the one a key field points at (`one`),
 * or the records of another resource pointing back at this one (`many`). Built by the
 * store inside the record's own statement (`store/record-json.ts`).
 */
export type EmbedSpec =
  | {
    readonly kind: "one"
    /** The field of this record holding the other record's id. */
    readonly key: string
    readonly resource: () => ResourceRef
    readonly pick?: Pick
  }
  | {
    readonly kind: "many"
    /** The field of the other resource holding this record's id. */
    readonly foreignKey: string
    readonly resource: () => ResourceRef
    readonly pick?: Pick
  }

/**
 * Which fields of the other record an embed answers: a list of names, a single
 * name (its value alone), or answered names to the other record's names.
 * `Name` is the other record's field names where the embed's constructor knows them.
 */
export type Pick<Name extends string = string> = ReadonlyArray<Name> | Name | Readonly<Record<string, Name>>

/** The field names of a record type; any name where the type is not known (a reference typed `ResourceRef`). */
export type NamesOf<R> = unknown extends R ? string : keyof R & string

/** What an embed needs of the resource it points at (a compiled declaration); `R` is its record type. */
export interface ResourceRef<R = unknown> {
  /** Phantom type: the record the resource answers (`ResourceDefinition<R>` carries the same). */
  readonly _record?: R
  readonly name: string
  readonly title: string
  readonly storage?: "tenant" | "catalog"
  readonly idType?: "uuid" | "integer"
}

/** A reference the engine checks before writing: the id must name a live record the caller can see. */
export interface ReferenceSpec {
  readonly resource: () => ResourceRef
}

/**
 * One field of a resource, declared once. Everything about it — the record schema,
 * the create and update inputs, the column and its cast, the row decoding, the
 * filter and sort — is derived from this value.
 *
 * `R` is the value the record answers (never when the field is not answered),
 * `I` the decoded value a client sends (never when clients cannot write it).
 */
export interface Field<R = unknown, I = unknown> {
  /** Phantom types: what the record answers and what a client sends. */
  readonly _R?: R
  readonly _I?: I
  /** The record's schema for this field; absent when the record does not answer it (stored keys, input-only fields). */
  readonly output?: AnySchema
  /** How the stored value (what the driver returns) decodes into the record value; defaults to `output`. */
  readonly read?: AnySchema
  readonly column?: FieldColumn
  readonly input?: FieldInput
  /** Filter (and sort) on this field; type and nullability are inferred from the column and the input. */
  readonly filter?: FilterField
  readonly embed?: EmbedSpec
  readonly reference?: ReferenceSpec
  /** Keys of an object input that rules consume and that are never stored (`br_data.unit_of_measure`). */
  readonly inputOnlyKeys?: ReadonlyArray<string>
  /** Filterable keys inside a jsonb object column, as `<field>.<key>`. */
  readonly blockFilters?: Readonly<Record<string, FieldType>>
  /** The stored form of a record value, as an update merges onto it. */
  readonly normalize?: (value: unknown) => unknown
  /** A collection of child rows in a table of their own, written through the parent's body. */
  readonly children?: ChildrenSpec
  /** Set by the create's rules and answered by that create only, never stored (a generated secret); `null` when read. */
  readonly revealed?: boolean
  /** Deprecated names a client may still send for this field; the engine renames them before decoding. */
  readonly aliases?: ReadonlyArray<string>
  readonly description?: string
}

/** A child collection as declared; compiled with the resource. */
export interface ChildrenSpec {
  readonly table: string
  /** Column of the child table holding the parent's id; answered on every child. */
  readonly parentKey: string
  readonly fields: Fields
  readonly maxItems: number
  /** At least one child on create. */
  readonly required: boolean
  /** Removed children keep a `deleted_at` instead of leaving the table. */
  readonly softDelete: boolean
  /** `false`: the collection is written by actions only (allocations), never through the body. */
  readonly writable: boolean
  /** Identifier stem for the child's schemas in OpenAPI, e.g. `QuoteItem`. */
  readonly identifier: string
}

export type AnyField = Field<unknown, unknown>
export type Fields = Readonly<Record<string, AnyField>>

/** The record type a field map answers. */
export type RecordOf<F extends Fields> = {
  readonly [K in keyof F as F[K] extends Field<infer R, unknown> ? ([R] extends [never] ? never : unknown extends R ? never : K) : never]:
    F[K] extends Field<infer R, unknown> ? R : never
}

/** The decoded input a field map accepts (every key optional: requiredness is checked by the schema). */
export type InputOf<F extends Fields> = {
  readonly [K in keyof F as F[K] extends Field<unknown, infer I> ? ([I] extends [never] ? never : unknown extends I ? never : K) : never]?:
    F[K] extends Field<unknown, infer I> ? I | null : never
}

/** The filter type of each column type (jsonb filters only as a string array). */
export const FILTER_TYPE: Record<ColumnType, FieldType | undefined> = {
  text: "string",
  uuid: "uuid",
  numeric: "number",
  integer: "number",
  date: "date",
  timestamptz: "datetime",
  boolean: "boolean",
  jsonb: undefined
}

export interface FilterOptions {
  /** Also sortable (`sort=<field>:asc`). */
  readonly sortable?: boolean
  /** `eq`/`neq` ignore case (codes such as ISO2). */
  readonly caseInsensitive?: boolean
  /** Narrow the operators of the type. */
  readonly operators?: ReadonlyArray<Operator>
  /** SQL the filter compares instead of the column (`r.country_code::text` for a `char(2)`). */
  readonly sql?: string
  readonly description?: string
}

interface Common {
  readonly nullable?: boolean
  /** `false`: clients cannot write it (computed or system). Default `both`. */
  readonly input?: InputRole | false
  readonly required?: boolean
  /** Filter options; a field that is answered filters as its type allows unless this is `false`. */
  readonly filter?: boolean | FilterOptions
  readonly description?: string
  /** Stored but not answered (e.g. a key whose record is embedded instead). */
  readonly hidden?: boolean
  /** Deprecated input names still accepted for this field. */
  readonly aliases?: ReadonlyArray<string>
}

const filterFrom = (type: FieldType | undefined, nullable: boolean, option: boolean | FilterOptions | undefined, extra: Partial<FilterField> = {}): FilterField | undefined => {
  if (!option || type === undefined) return undefined
  const options = option === true ? {} : option
  return {
    type,
    ...(nullable ? { nullable: true } : {}),
    ...(options.sortable ? { sortable: true } : {}),
    ...(options.caseInsensitive ? { caseInsensitive: true } : {}),
    ...(options.operators ? { operators: options.operators } : {}),
    ...(options.sql ? { sql: options.sql } : {}),
    ...(options.description ? { description: options.description } : {}),
    ...extra
  }
}

/**
 * A field's description. JSON Schemas (OpenAPI, MCP tools) show a transformation's encoded side
 * (a decimal's text), so that side is described too, as the field's own schema rather than the
 * shared definition its identifier names.
 */
const describe = (schema: AnySchema, description: string | undefined): AnySchema => {
  if (!description) return schema
  const described = schema.annotate({ description })
  return schema.ast.encoding === undefined ? described : described.pipe(Schema.annotateEncoded({ description, identifier: undefined }))
}

/**
 * A stored field: `output` is what the record answers, `inputSchema` what clients
 * send (defaults to `output`), `type` its SQL column type.
 */
export const column = <R, I = R, N extends boolean = false>(spec: Common & {
  readonly nullable?: N
  /** `null` accepted on input (clears the value) although the record never answers null; defaults to `nullable`. */
  readonly clearable?: boolean
  readonly type: ColumnType
  readonly output: Schema.Codec<R, unknown>
  readonly inputSchema?: Schema.Codec<I, unknown>
  readonly read?: Schema.Codec<R, unknown>
  /** SQL read instead of `r.<name>` (the value is still written to the column). */
  readonly select?: string
  /** A jsonb object answered with exactly these keys (null when absent). */
  readonly keys?: ReadonlyArray<string>
  readonly patch?: PatchMode
  readonly array?: boolean
  readonly inputOnlyKeys?: ReadonlyArray<string>
  readonly blockFilters?: Readonly<Record<string, FieldType>>
  readonly reference?: ReferenceSpec
  /** The stored form of a record value, as updates merge onto it (e.g. a block without its owner key and nulls). */
  readonly normalize?: (value: unknown) => unknown
}): Field<N extends true ? R | null : R, I> => {
  const nullable: boolean = spec.nullable ?? false
  const output: AnySchema = nullable ? Schema.NullOr(spec.output) : spec.output
  const role = spec.input ?? "both"
  const filterType = spec.array ? "string" : FILTER_TYPE[spec.type]
  const filter = filterFrom(filterType, nullable, spec.filter ?? !spec.hidden, spec.array ? { array: true } : {})
  const field: Field<N extends true ? R | null : R, I> = {
    ...(spec.hidden ? {} : { output: describe(output, spec.description) }),
    ...(spec.read ? { read: spec.read } : spec.hidden ? { read: output } : {}),
    column: { type: spec.type, ...(spec.select ? { sql: spec.select } : {}), ...(spec.keys ? { keys: spec.keys } : {}) },
    ...(role === false
      ? {}
      : {
        input: {
          schema: describe(spec.inputSchema ?? spec.output, spec.description),
          on: role,
          required: spec.required ?? false,
          nullable: spec.clearable ?? nullable,
          patch: spec.patch ?? "replace"
        }
      }),
    ...(filter ? { filter } : {}),
    ...(spec.reference ? { reference: spec.reference } : {}),
    ...(spec.inputOnlyKeys ? { inputOnlyKeys: spec.inputOnlyKeys } : {}),
    ...(spec.blockFilters ? { blockFilters: spec.blockFilters } : {}),
    ...(spec.normalize ? { normalize: spec.normalize } : {}),
    ...(spec.aliases ? { aliases: spec.aliases } : {}),
    ...(spec.description ? { description: spec.description } : {})
  }
  return field
}

/**
 * A value the create's rules make and its answer shows once (a webhook's signing secret):
 * never stored, so every later read answers `null`.
 */
export const revealed = <R>(output: Schema.Codec<R, unknown>, description: string): Field<R | null, never> => ({
  output: describe(Schema.NullOr(output), description),
  column: { type: "text", sql: "NULL::text", virtual: true },
  revealed: true,
  description
})

/** A read-only value computed by SQL over the row (derived flags, a normalised status): filterable and sortable. */
export const expression = <R, N extends boolean = false>(spec: {
  readonly sql: string
  readonly type: ColumnType
  readonly output: Schema.Codec<R, unknown>
  readonly read?: Schema.Codec<R, unknown>
  readonly nullable?: N
  readonly filter?: boolean | FilterOptions
  readonly description?: string
}): Field<N extends true ? R | null : R, never> => {
  const nullable: boolean = spec.nullable ?? false
  const output: AnySchema = nullable ? Schema.NullOr(spec.output) : spec.output
  const filter = filterFrom(FILTER_TYPE[spec.type], nullable, spec.filter ?? true, { sql: spec.sql })
  return {
    output: describe(output, spec.description),
    ...(spec.read ? { read: spec.read } : {}),
    column: { type: spec.type, sql: spec.sql, virtual: true },
    ...(filter ? { filter } : {}),
    ...(spec.description ? { description: spec.description } : {})
  }
}

/** Not stored, not answered: an input the resource's rules consume (`city` text to match, `installments`). */
export const inputOnly = <I>(schema: Schema.Codec<I, unknown>, options: { readonly nullable?: boolean; readonly on?: InputRole; readonly required?: boolean } = {}): Field<never, I> => ({
  input: { schema, on: options.on ?? "both", required: options.required ?? false, nullable: options.nullable ?? false, patch: "replace" }
})

/**
 * A record of another resource, answered in place of (or beside) the key that points at it.
 * `T` is the other resource's record type: `pick` names its fields.
 */
export const embedOne = <R, T = unknown>(spec: {
  readonly key: string
  readonly resource: () => ResourceRef<T>
  readonly output: Schema.Codec<R, unknown>
  readonly pick?: NoInfer<Pick<NamesOf<T>>>
  readonly description?: string
}): Field<R | null, never> => ({
  output: describe(Schema.NullOr(spec.output), spec.description),
  embed: { kind: "one", key: spec.key, resource: spec.resource, ...(spec.pick ? { pick: spec.pick } : {}) }
})

/** The records of another resource that point at this one (a sales order's receivables); `pick` names fields of `T`, their record. */
export const embedMany = <R, T = unknown>(spec: {
  readonly foreignKey: string
  readonly resource: () => ResourceRef<T>
  readonly output: Schema.Codec<R, unknown>
  readonly pick?: NoInfer<Pick<NamesOf<T>>>
  readonly description?: string
}): Field<ReadonlyArray<R>, never> => ({
  output: describe(Schema.Array(spec.output), spec.description),
  embed: { kind: "many", foreignKey: spec.foreignKey, resource: spec.resource, ...(spec.pick ? { pick: spec.pick } : {}) }
})

export const idType = (type: "uuid" | "integer"): ColumnType => (type === "integer" ? "integer" : "uuid")

/** The record id: a UUID made by the store, or a catalog's stable integer. */
export const id = (options: { readonly sortable?: boolean } = {}): Field<string, never> => ({
  output: Schema.String,
  column: { type: "uuid", generated: true },
  filter: { type: "uuid", ...(options.sortable ? { sortable: true } : {}) }
})

/** A catalog's stable integer id (ISO numeric, IBGE code). */
export const integerId = (options: { readonly sortable?: boolean } = {}): Field<number, never> => ({
  output: Schema.Int,
  column: { type: "integer", generated: true },
  filter: { type: "number", ...(options.sortable ? { sortable: true } : {}) }
})

/** `created_at` / `updated_at`: set by the store, filterable and sortable. */
export const timestamp = (): Field<string, never> => ({
  output: Schema.String,
  column: { type: "timestamptz", generated: true },
  filter: { type: "datetime", sortable: true }
})

/** `deleted_at`: set by soft delete, cleared by restore. */
export const deletedAt = (): Field<string | null, never> => ({
  output: Schema.NullOr(Schema.String),
  column: { type: "timestamptz", generated: true },
  filter: { type: "datetime", nullable: true }
})

/** Fields every soft-deletable tenant record carries. */
export const timestamps = () => ({ created_at: timestamp(), updated_at: timestamp(), deleted_at: deletedAt() })

/** A read-only stored field of a catalog (catalogs take no writes). */
export const stored = <R, N extends boolean = false>(
  type: ColumnType,
  output: Schema.Codec<R, unknown>,
  options: { readonly nullable?: N; readonly filter?: boolean | FilterOptions; readonly array?: boolean; readonly description?: string } = {}
): Field<N extends true ? R | null : R, never> => column<R, never, N>({ type, output, input: false, ...options })

/** The same field, also taking an input that rules consume (a supplier's `country_code` text, answered as the ISO2 it matched). */
export const withInput = <R, I>(field: Field<R, never>, schema: Schema.Codec<I, unknown>, options: { readonly nullable?: boolean } = {}): Field<R, I> => ({
  ...field,
  input: { schema, on: "both", required: false, nullable: options.nullable ?? false, patch: "replace" }
})
