import { sha256 } from "../sha256.js"
import { PreconditionFailed } from "../errors.js"
import { type AnyResource, present, type Row } from "./resource.js"

/** The names of a resource's `revealed` fields, found once per field set. */
const revealedNames = new WeakMap<object, ReadonlyArray<string>>()
const revealedOf = (fields: AnyResource["fields"]): ReadonlyArray<string> => {
  let names = revealedNames.get(fields)
  if (names === undefined) {
    names = Object.entries(fields).filter(([, field]) => field.revealed).map(([name]) => name)
    revealedNames.set(fields, names)
  }
  return names
}

/** The tag of an answer's text. */
const tagOf = (text: string): string => `"${sha256(text, "base64url").slice(0, 32)}"`

/**
 * A record's strong entity tag: a hash of the record's JSON as answered (its `updated_at`
 * included), so every write that changes what a client would read changes it, even two
 * writes in the same millisecond. Every answered record is built by the store (`record-json`),
 * its keys in the declaration's order whichever path read or wrote it, so its text is the same
 * on every path and is hashed as answered, not re-encoded. Fields shown once on create
 * (`revealed`) are left out: reads never show them, and the tag of the create's answer must
 * match a later read's.
 */
export const recordEtag = (resource: Pick<AnyResource, "fields">, record: Row): string =>
  tagOf(JSON.stringify(withoutRevealed(resource, record) ?? record))

/** `recordEtag` of a record whose answer text is at hand (`JSON.stringify(record)`): the text is hashed, not encoded again. */
export const answerEtag = (resource: Pick<AnyResource, "fields">, record: Row, text: string): string => {
  const shown = withoutRevealed(resource, record)
  return tagOf(shown ? JSON.stringify(shown) : text)
}

/** The record without the fields shown once on create, when it carries any (a create's answer); else undefined. */
const withoutRevealed = (resource: Pick<AnyResource, "fields">, record: Row): Row | undefined => {
  const revealed = revealedOf(resource.fields)
  if (!revealed.some((name) => name in record)) return undefined
  const copy: Record<string, unknown> = { ...record }
  for (const name of revealed) delete copy[name]
  return copy
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
