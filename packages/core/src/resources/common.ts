import { Effect, Schema } from "effect"
import type { FieldErrors } from "../errors.js"
import { unprocessable } from "../errors.js"
import type { FilterField } from "../engine/fields.js"
import { isValidDate } from "../engine/filter.js"
import type { ColumnValues } from "../engine/resource.js"

export const Uuid = Schema.UUID.annotations({ description: "UUID" })

/** Optional and clearable: absent leaves the value alone, `null` clears it. */
export const clearable = <A, I>(schema: Schema.Schema<A, I>) => Schema.optional(Schema.NullOr(schema))

/**
 * Trims what it decodes. Constraints sit on the wire side (`wire`), so OpenAPI and
 * MCP tool schemas show them to clients.
 */
export const trimmed = (wire: Schema.Schema<string, string>) =>
  Schema.transform(wire, Schema.String, { strict: true, decode: (text) => text.trim(), encode: (text) => text })

const StringUpTo = (maxLength: number) =>
  Schema.String.pipe(Schema.maxLength(maxLength, { message: () => `must be at most ${maxLength} characters` }))

export const Text = (maxLength: number) => trimmed(StringUpTo(maxLength))

export const RequiredText = (maxLength: number) =>
  trimmed(StringUpTo(maxLength).pipe(Schema.pattern(/\S/, { message: () => "must not be empty" })))

/** A code of `count` digits; dots, dashes, slashes and spaces are accepted and dropped. */
export const Digits = (count: number, label: string) =>
  Schema.transform(
    Schema.String.pipe(
      Schema.pattern(new RegExp(`^\\s*(?:\\d[.\\s/-]*){${count}}$`), { message: () => `must be a ${label} of ${count} digits` })
    ).annotations({ description: `${label}: ${count} digits (dots, dashes, slashes and spaces are dropped)` }),
    Schema.String,
    { strict: true, decode: (text) => text.replace(/\D/g, ""), encode: (text) => text }
  )

const METADATA_MAX_KEYS = 50
const METADATA_MAX_BYTES = 16_384

/** Free JSON object; at most 50 keys and 16 KiB. */
export const Metadata = Schema.Record({ key: Schema.String, value: Schema.Unknown }).pipe(
  Schema.filter((value) => Object.keys(value).length <= METADATA_MAX_KEYS || `must have at most ${METADATA_MAX_KEYS} keys`),
  Schema.filter((value) => JSON.stringify(value).length <= METADATA_MAX_BYTES || `must be at most ${METADATA_MAX_BYTES} bytes as JSON`)
).annotations({ identifier: "Metadata", description: "Free JSON object (at most 50 keys, 16 KiB)." })

export const StringList = (item: Schema.Schema<string, string>, maxItems: number) =>
  Schema.Array(item).pipe(Schema.maxItems(maxItems, { message: () => `must have at most ${maxItems} items` }))

export const Tags = StringList(RequiredText(64), 50).annotations({ description: "Labels, at most 50 of 64 characters." })

export const Email = trimmed(
  StringUpTo(254).pipe(
    Schema.pattern(/^\s*[^\s@]+@[^\s@]+\.[^\s@]+\s*$/, { message: () => "must be an email address" })
  ).annotations({ jsonSchema: { format: "email" } })
)

export const Url = trimmed(
  StringUpTo(2048).pipe(
    Schema.filter((text) => {
      try {
        const url = new URL(text.trim())
        return url.protocol === "http:" || url.protocol === "https:" || "must be an http or https URL"
      } catch {
        return "must be an http or https URL"
      }
    }, { jsonSchema: { format: "uri", pattern: "^\\s*https?://" } })
  )
)

export const DateString = Schema.String.pipe(
  Schema.pattern(/^\d{4}-\d{2}-\d{2}$/, { message: () => "must be a date (YYYY-MM-DD)" }),
  Schema.filter((text) => isValidDate(text) || "must be a real calendar date")
)

export const CountryCode = Schema.String.pipe(
  Schema.pattern(/^[A-Za-z]{2}$/, { message: () => "must be an ISO 3166-1 alpha-2 code" }),
  Schema.transform(Schema.String, { strict: true, decode: (code) => code.toUpperCase(), encode: (code) => code })
)

/** Timestamps every record answers with. */
export const Timestamps = {
  created_at: Schema.String,
  updated_at: Schema.String,
  deleted_at: Schema.NullOr(Schema.String)
}

export const timestampsOf = (row: Readonly<Record<string, unknown>>) => ({
  created_at: row.created_at as string,
  updated_at: row.updated_at as string,
  deleted_at: (row.deleted_at as string | null) ?? null
})

/** Filters every soft-deletable record has. */
export const timestampFilters: Record<string, FilterField> = {
  id: { type: "uuid" },
  created_at: { type: "datetime", sortable: true },
  updated_at: { type: "datetime", sortable: true },
  deleted_at: { type: "datetime", nullable: true }
}

/** Filters on keys of a jsonb block, e.g. `br_data.ncm_code`. */
export const blockFilters = (block: string, keys: ReadonlyArray<string>, type: FilterField["type"] = "string") =>
  Object.fromEntries(
    keys.map((key) => [`${block}.${key}`, { type, nullable: true, sql: `(r.${block}->>'${key}')${type === "boolean" ? "::boolean" : ""}` }])
  ) as Record<string, FilterField>

/**
 * JSON merge patch (RFC 7396) one level deep: keys given replace, `null` removes,
 * keys not given stay.
 */
export const mergePatch = (
  current: Readonly<Record<string, unknown>> | null | undefined,
  patch: Readonly<Record<string, unknown>>
): Record<string, unknown> => {
  const merged: Record<string, unknown> = { ...(current ?? {}) }
  for (const [key, value] of Object.entries(patch)) {
    if (value === undefined) continue
    if (value === null) delete merged[key]
    else merged[key] = value
  }
  return merged
}

/** Keeps only the keys present in `input` (undefined means "not sent"). */
export const present = <K extends string>(input: Partial<Record<K, unknown>>, keys: ReadonlyArray<K>): ColumnValues => {
  const values: Record<string, unknown> = {}
  for (const key of keys) if (input[key] !== undefined) values[key] = input[key]
  return values
}

/** A block as answered: every declared key present (null when unset), plus the owner's id. */
export const blockOf = (
  stored: unknown,
  keys: ReadonlyArray<string>,
  owner?: { readonly key: string; readonly id: string }
): Record<string, unknown> => {
  const source = (typeof stored === "object" && stored !== null ? stored : {}) as Record<string, unknown>
  const block: Record<string, unknown> = owner ? { [owner.key]: owner.id } : {}
  for (const key of keys) block[key] = source[key] ?? null
  return block
}

/** Drops nulls so a stored block holds only what was set. */
export const compact = (block: Readonly<Record<string, unknown>>): Record<string, unknown> =>
  Object.fromEntries(Object.entries(block).filter(([, value]) => value !== null && value !== undefined))

/** Collects 422 reasons and fails once with all of them, under one `code` (`VALIDATION_FAILED` unless named). */
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
