import { Effect, Schema, SchemaIssue, SchemaTransformation } from "effect"
import { compact } from "../engine/draft.js"
import { type AnySchema, column, type Field, type FilterOptions, type ResourceRef } from "../engine/field.js"
import { type FieldType, INT4_MAX } from "../engine/fields.js"
import { isValidDate, parseDatetime } from "../engine/datetime.js"
import type { FieldErrors } from "../errors.js"
import { unprocessable } from "../errors.js"
import { Decimal, NonNegativeDecimal } from "../money/decimal.js"

/**
 * A pattern whose JSON Schema also names a `format`, beside the pattern on the same object
 * (a `format` annotation would land in an `allOf` of its own, where clients do not look).
 * Patterns here carry the `u` flag: only Unicode patterns go into a JSON Schema.
 */
const isPatternOfFormat = (pattern: RegExp, format: string, annotations: Schema.Annotations.Filter) =>
  Schema.isPattern(pattern, { ...annotations, toJsonSchema: () => ({ pattern: pattern.source, format }) })

/**
 * A check with no JSON Schema keyword of its own (a predicate): it says so, and the
 * annotations a schema gets after it (descriptions) still reach the JSON Schema.
 */
const predicate = <T>(check: (value: T) => true | string) => Schema.makeFilter(check, { toJsonSchema: () => [{}, true] as const })

/** Any UUID of the 8-4-4-4-12 hex shape, whatever its version and variant. */
export const Uuid = Schema.String.check(
  isPatternOfFormat(/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/u, "uuid", { expected: "a UUID" })
).annotate({ description: "UUID" })

/** A whole number whose later checks (a range) run only once it is whole: one reason per field. */
export const WholeNumber = Schema.Number.check(Schema.isInt().abort())

/** A catalog id (countries, states, cities): a positive PostgreSQL `integer`, so nothing larger reaches the store. */
export const Int4Id = WholeNumber.check(Schema.isBetween({ minimum: 1, maximum: INT4_MAX }, { message: "must be a positive integer id" }))

/** Optional and clearable: absent leaves the value alone, `null` clears it. */
export const clearable = <A, I>(schema: Schema.Codec<A, I>) => Schema.optionalKey(Schema.NullOr(schema))

/**
 * Trims what it decodes. Constraints sit on the wire side (`wire`), so OpenAPI and
 * MCP tool schemas show them to clients.
 */
export const trimmed = (wire: Schema.Codec<string, string>) =>
  wire.pipe(Schema.decodeTo(Schema.String, SchemaTransformation.transform({ decode: (text: string) => text.trim(), encode: (text: string) => text })))

// Later checks run only once the length passes (`abort`): one reason per field, the first that fails.
const StringUpTo = (maxLength: number) =>
  Schema.String.check(Schema.isMaxLength(maxLength, { message: `must be at most ${maxLength} characters` }).abort())

export const Text = (maxLength: number) => trimmed(StringUpTo(maxLength))

export const RequiredText = (maxLength: number) =>
  trimmed(StringUpTo(maxLength).check(Schema.isPattern(/\S/u, { message: "must not be empty" })))

/** A code of `count` digits; dots, dashes, slashes and spaces are accepted and dropped. */
export const Digits = (count: number, label: string) =>
  Schema.String.check(
    Schema.isPattern(new RegExp(`^\\s*(?:\\d[.\\s/-]*){${count}}$`, "u"), { message: `must be a ${label} of ${count} digits` })
  ).annotate({ description: `${label}: ${count} digits (dots, dashes, slashes and spaces are dropped)` }).pipe(
    Schema.decodeTo(Schema.String, SchemaTransformation.transform({ decode: (text: string) => text.replace(/\D/g, ""), encode: (text: string) => text }))
  )

const METADATA_MAX_KEYS = 50
const METADATA_MAX_BYTES = 16_384

/** Free JSON object; at most 50 keys and 16 KiB. */
export const Metadata = Schema.Record(Schema.String, Schema.Unknown).check(
  predicate((value: { readonly [key: string]: unknown }) => Object.keys(value).length <= METADATA_MAX_KEYS || `must have at most ${METADATA_MAX_KEYS} keys`).abort(),
  predicate((value: { readonly [key: string]: unknown }) => JSON.stringify(value).length <= METADATA_MAX_BYTES || `must be at most ${METADATA_MAX_BYTES} bytes as JSON`)
).annotate({ identifier: "Metadata", description: "Free JSON object (at most 50 keys, 16 KiB)." })

export const StringList = (item: Schema.Codec<string, string>, maxItems: number) =>
  Schema.Array(item).check(Schema.isMaxLength(maxItems, { message: `must have at most ${maxItems} items` }))

export const Tags = StringList(RequiredText(64), 50).annotate({ description: "Labels, at most 50 of 64 characters." })

/** Its JSON Schema says `format: email`; the loose pattern it is checked with stays the server's. */
export const Email = trimmed(
  StringUpTo(254).check(
    Schema.isPattern(/^\s*[^\s@]+@[^\s@]+\.[^\s@]+\s*$/u, { message: "must be an email address", toJsonSchema: () => ({ format: "email" }) })
  )
)

export const Url = trimmed(
  StringUpTo(2048).check(
    Schema.makeFilter((text: string) => {
      try {
        const url = new URL(text.trim())
        return url.protocol === "http:" || url.protocol === "https:" || "must be an http or https URL"
      } catch {
        return "must be an http or https URL"
      }
    }, { toJsonSchema: () => ({ format: "uri", pattern: "^\\s*https?://" }) })
  )
)

export const DateString = Schema.String.check(
  Schema.isPattern(/^\d{4}-\d{2}-\d{2}$/u, { message: "must be a date (YYYY-MM-DD)" }).abort(),
  predicate((text: string) => isValidDate(text) || "must be a real calendar date")
)

export const CountryCode = Schema.String.check(Schema.isPattern(/^[A-Za-z]{2}$/u, { message: "must be an ISO 3166-1 alpha-2 code" })).pipe(
  Schema.decodeTo(Schema.String, SchemaTransformation.transform({ decode: (code: string) => code.toUpperCase(), encode: (code: string) => code }))
)

// ---- Field constructors for the kinds business records share ----

interface TextOptions<N extends boolean> {
  readonly nullable?: N
  readonly required?: boolean
  /** Blank text is refused (codes and names); free text may be empty. */
  readonly nonBlank?: boolean
  readonly filter?: boolean | FilterOptions
  readonly input?: "both" | "create"
  readonly description?: string
  /** Deprecated input names still accepted. */
  readonly aliases?: ReadonlyArray<string>
}

/** Text stored as `text`, trimmed on input, at most `max` characters. */
export const text = <N extends boolean = false>(max: number, options: TextOptions<N> = {}) =>
  column<string, string, N>({
    type: "text",
    output: Schema.String,
    inputSchema: options.nonBlank === false ? Text(max) : RequiredText(max),
    ...options,
    filter: options.filter ?? true
  })

/** Free text that may be empty (descriptions, notes). */
export const freeText = <N extends boolean = true>(max: number, options: Omit<TextOptions<N>, "nonBlank"> = {}) =>
  text<N>(max, { nullable: true as N, ...options, nonBlank: false })

/** A choice among fixed values, stored as text. */
export const choice = <const V extends readonly [string, ...Array<string>], N extends boolean = false>(
  values: V,
  options: { readonly nullable?: N; readonly required?: boolean; readonly filter?: boolean | FilterOptions; readonly description?: string; readonly input?: "both" | "create" | false } = {}
) =>
  column<string, V[number], N>({
    type: "text",
    output: Schema.String,
    inputSchema: Schema.Literals(values).annotate({ description: options.description ?? values.join(", ") }),
    ...options,
    filter: options.filter ?? true
  })

export const flag = (options: { readonly filter?: boolean | FilterOptions; readonly description?: string } = {}) =>
  column<boolean>({ type: "boolean", output: Schema.Boolean, filter: options.filter ?? true, ...(options.description ? { description: options.description } : {}) })

/** Money, quantities and rates: `numeric(20, 6)`, six-digit strings on the wire. */
export const money = <N extends boolean = false>(
  options: { readonly nullable?: N; readonly required?: boolean; readonly signed?: boolean; readonly filter?: boolean | FilterOptions; readonly input?: "both" | "create" | false; readonly description?: string } = {}
) =>
  column<string, string, N>({
    type: "numeric",
    output: Schema.String,
    inputSchema: options.signed ? Decimal : NonNegativeDecimal,
    ...options,
    filter: options.filter ?? true
  })

export const url = <N extends boolean = true>(options: { readonly nullable?: N; readonly filter?: boolean | FilterOptions } = {}) =>
  column<string, string, N>({ type: "text", output: Schema.String, inputSchema: Url, nullable: true as N, filter: true, ...options })

/** A list of strings stored as a jsonb array: filters `eq` (has the element) and `contains` (an element contains). */
export const stringList = (item: Schema.Codec<string, string>, maxItems: number, options: { readonly description?: string; readonly filter?: boolean } = {}) =>
  column<ReadonlyArray<string>, ReadonlyArray<string>>({
    type: "jsonb",
    output: Schema.Array(Schema.String),
    inputSchema: StringList(item, maxItems).annotate(options.description ? { description: options.description } : {}),
    array: true,
    filter: options.filter ?? true,
    ...(options.description ? { description: options.description } : {})
  })

export const tags = () =>
  column<ReadonlyArray<string>, ReadonlyArray<string>>({
    type: "jsonb",
    output: Schema.Array(Schema.String),
    inputSchema: Tags,
    array: true,
    filter: { description: "eq: has the tag; contains: a tag contains the text" }
  })

/** Free JSON; an update merges key by key (`null` removes a key). */
export const metadata = () =>
  column<Readonly<Record<string, unknown>>, Readonly<Record<string, unknown>>>({
    type: "jsonb",
    output: Schema.Record(Schema.String, Schema.Unknown),
    inputSchema: Metadata,
    patch: "merge"
  })

const isObject = (value: unknown): value is Readonly<Record<string, unknown>> => typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * A country block (`br_data`, `us_data`) stored as a compact jsonb object and
 * answered with every key (null when unset) and, for parties, the owner's id.
 * A block with no row of its own (an invoice's) also answers the record's id as `id`
 * (`answersId`) and keys computed on read (`computed`). Updates merge key by key;
 * `null` for the whole block clears it.
 */
export const block = <Keys extends Schema.Struct.Fields>(spec: {
  readonly identifier: string
  /** The keys as answered (each nullable). */
  readonly keys: Keys
  readonly input: AnySchema
  /** The owner's id inside the block (`customer_id`), from the row. */
  readonly owner?: { readonly key: string }
  /** The record's id as the block's `id` too. */
  readonly answersId?: boolean
  /** Keys computed on read, each an SQL expression over the row `r`. */
  readonly computed?: Readonly<Record<string, { readonly sql: string; readonly schema: AnySchema }>>
  readonly filters?: Readonly<Record<string, FieldType>>
  readonly inputOnlyKeys?: ReadonlyArray<string>
}) => {
  const computed = spec.computed ?? {}
  const owner = spec.owner?.key
  // Keys the server fills in, never stored: the ids from the row and the computed ones.
  const derivedKeys: Record<string, AnySchema> = {
    ...(spec.answersId ? { id: Schema.String } : {}),
    ...(owner ? { [owner]: Schema.String } : {})
  }
  const output = Schema.Struct({
    ...derivedKeys,
    ...spec.keys,
    ...Object.fromEntries(Object.entries(computed).map(([name, entry]) => [name, entry.schema]))
  }).annotate({ identifier: spec.identifier })
  const names = [...Object.keys(derivedKeys), ...Object.keys(spec.keys), ...Object.keys(computed)]
  const derived = [...Object.keys(derivedKeys), ...Object.keys(computed)]
  type Block = Schema.Schema.Type<typeof output>
  const read = Schema.Unknown.pipe(Schema.decodeTo(
    Schema.toType(output),
    SchemaTransformation.transform<Block, unknown>({
      decode: (stored) => Object.fromEntries(names.map((name) => [name, isObject(stored) ? stored[name] ?? null : null])) as Block,
      encode: (value) => value
    })
  ))
  const extra = [
    ...Object.keys(derivedKeys).map((name) => `'${name}', r.id`),
    ...Object.entries(computed).map(([name, entry]) => `'${name}', ${entry.sql}`)
  ]
  return column<Block, unknown>({
    type: "jsonb",
    output,
    read,
    inputSchema: spec.input,
    clearable: true,
    patch: "merge",
    keys: names,
    ...(extra.length > 0 ? { select: `({self} || jsonb_build_object(${extra.join(", ")}))` } : {}),
    ...(spec.filters ? { blockFilters: spec.filters } : {}),
    ...(spec.inputOnlyKeys ? { inputOnlyKeys: spec.inputOnlyKeys } : {}),
    normalize: (value) => {
      if (!isObject(value)) return {}
      const rest: Record<string, unknown> = { ...value }
      for (const name of derived) delete rest[name]
      return compact(rest)
    }
  })
}

/** Collects 422 reasons and fails once with all of them. */
export class Problems {
  private readonly fields: Record<string, Array<string>> = {}
  add(field: string, reason: string): void {
    ;(this.fields[field] ??= []).push(reason)
  }
  get any(): boolean {
    return Object.keys(this.fields).length > 0
  }
  fail(message: string, code = "VALIDATION_FAILED") {
    return Effect.fail(unprocessable(message, this.fields as FieldErrors, code))
  }
}

export type { Field }

/** An ISO 8601 datetime with its offset (`Z` or `±hh:mm`), stored and answered in UTC. */
export const DateTimeString = Schema.String.annotate({ description: "ISO 8601 datetime with Z or an offset, e.g. 2024-01-15T13:45:00Z", format: "date-time" }).pipe(
  Schema.decodeTo(
    Schema.String,
    SchemaTransformation.transformEffect({
      decode: (text: string) => {
        const instant = parseDatetime(text)
        return instant.ok ? Effect.succeed(new Date(instant.millis).toISOString()) : Effect.fail(new SchemaIssue.InvalidValue({ message: instant.reason }, text))
      },
      encode: (text: string) => Effect.succeed(text)
    })
  )
)

interface PlainOptions<N extends boolean> {
  readonly nullable?: N
  readonly required?: boolean
  readonly input?: "both" | "create" | false
  readonly filter?: boolean | FilterOptions
  readonly description?: string
}

/** A calendar date (`YYYY-MM-DD`), stored as `date`. */
export const date = <N extends boolean = false>(options: PlainOptions<N> = {}) =>
  column<string, string, N>({ type: "date", output: Schema.String, inputSchema: DateString, ...options, filter: options.filter ?? true })

/** A moment in time, stored as `timestamptz`, answered in UTC. */
export const datetime = <N extends boolean = false>(options: PlainOptions<N> = {}) =>
  column<string, string, N>({ type: "timestamptz", output: Schema.String, inputSchema: DateTimeString, ...options, filter: options.filter ?? true })

/** A whole number stored as `integer` (display orders, positions). */
export const integer = <N extends boolean = false>(options: PlainOptions<N> & { readonly min?: number; readonly max?: number } = {}) => {
  const { min = 0, max = INT4_MAX, ...rest } = options
  return column<number, number, N>({
    type: "integer",
    output: Schema.Int,
    inputSchema: WholeNumber.check(Schema.isBetween({ minimum: min, maximum: max }, { message: `must be a whole number from ${min} to ${max}` })),
    ...rest,
    filter: rest.filter ?? true
  })
}

/** A UUID key naming a record of another resource (the engine checks it exists for the tenant: 422 naming the field). */
export const reference = <N extends boolean = true>(target: () => ResourceRef, options: PlainOptions<N> = {}) =>
  column<string, string, N>({
    type: "uuid",
    output: Schema.String,
    inputSchema: Uuid,
    nullable: true as N,
    ...options,
    filter: options.filter ?? true,
    reference: { resource: target }
  })
