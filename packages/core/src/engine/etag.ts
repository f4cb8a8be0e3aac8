import { createHash } from "node:crypto"
import { PreconditionFailed } from "../errors.js"
import { type AnyResource, present, type Row } from "./resource.js"

/**
 * JSON with object keys sorted, so the same record hashes alike whichever order its
 * columns were read in. Values serialise as in a response (`toJSON`: dates as ISO text).
 */
const canonical = (value: unknown): string => {
  const plain = value !== null && typeof value === "object" && typeof (value as { toJSON?: unknown }).toJSON === "function"
    ? (value as { toJSON: () => unknown }).toJSON()
    : value
  if (Array.isArray(plain)) return `[${plain.map(canonical).join(",")}]`
  if (plain !== null && typeof plain === "object") {
    const entries = Object.entries(plain as Record<string, unknown>).filter(([, item]) => item !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonical(item)}`).join(",")}}`
  }
  return JSON.stringify(plain) ?? "null"
}

/**
 * A record's strong entity tag: a hash of the record as answered (its `updated_at`
 * included), so every write that changes what a client would read changes it, even two
 * writes in the same millisecond. Fields shown once on create (`revealed`) are left out:
 * reads never show them, and the tag of the create's answer must match a later read's.
 */
export const recordEtag = (resource: Pick<AnyResource, "fields">, record: Row): string => {
  const shown: Record<string, unknown> = { ...record }
  for (const [name, field] of Object.entries(resource.fields)) if (field.revealed) delete shown[name]
  return `"${createHash("sha256").update(canonical(shown)).digest("base64url").slice(0, 32)}"`
}

/** What a write requires of the record's current version: `If-Match`'s tags (`*`: any current version). */
export interface Precondition {
  readonly ifMatch: ReadonlyArray<string>
}

/** The entity tags of an `If-Match` / `If-None-Match` value: `*`, or a list of `"tag"` / `W/"tag"`. */
export const parseEntityTags = (header: string): ReadonlyArray<string> => header.match(/\*|(?:W\/)?"[^"]*"/g) ?? []

/** Strong comparison (RFC 9110 §13.1.1): a weak tag never matches. */
export const matchesAny = (tags: ReadonlyArray<string>, etag: string): boolean =>
  tags.some((tag) => tag === "*" || tag === etag)

/** 412 unless the record's current tag is one `If-Match` names; run under the row's lock, so racing writers get one 412. */
export const checkPrecondition = (resource: AnyResource, current: Row, precondition: Precondition | undefined) =>
  precondition === undefined || matchesAny(precondition.ifMatch, recordEtag(resource, present(resource, current)))
    ? undefined
    : new PreconditionFailed({
      message: `This ${resource.title.toLowerCase()} changed since the version If-Match names: read it again (its ETag) and retry`,
      code: "PRECONDITION_FAILED"
    })
