import { Schema } from "effect"

/** Field name (dotted path for nested input) to the reasons it was refused, in English. */
export const FieldErrors = Schema.Record({ key: Schema.String, value: Schema.Array(Schema.String) })
export type FieldErrors = typeof FieldErrors.Type

/** A record that does not exist for the caller's tenant (another tenant's record included). */
export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", {
  message: Schema.String,
  code: Schema.String
}) {}

/** Malformed input: bad query parameter, bad body shape or type, bad identifier. */
export class InvalidRequest extends Schema.TaggedError<InvalidRequest>()("InvalidRequest", {
  message: Schema.String,
  code: Schema.optional(Schema.String),
  fields: Schema.optional(FieldErrors)
}) {}

/** A well-formed request that the business rules refuse. */
export class Unprocessable extends Schema.TaggedError<Unprocessable>()("Unprocessable", {
  message: Schema.String,
  code: Schema.optional(Schema.String),
  fields: FieldErrors
}) {}

/** Missing, malformed, unknown, expired or revoked credentials. */
export class Unauthenticated extends Schema.TaggedError<Unauthenticated>()("Unauthenticated", {
  message: Schema.String,
  code: Schema.optional(Schema.String)
}) {}

/** Valid credentials lacking the permission for the resource and action. */
export class Forbidden extends Schema.TaggedError<Forbidden>()("Forbidden", {
  message: Schema.String,
  code: Schema.optional(Schema.String)
}) {}

/** The write collides with an existing record (unique key). */
export class Conflict extends Schema.TaggedError<Conflict>()("Conflict", {
  message: Schema.String,
  code: Schema.optional(Schema.String)
}) {}

export type DomainError = NotFound | InvalidRequest | Unprocessable | Unauthenticated | Forbidden | Conflict

export const invalid = (message: string, code?: string, fields?: FieldErrors) =>
  new InvalidRequest({ message, ...(code ? { code } : {}), ...(fields ? { fields } : {}) })

export const unprocessable = (message: string, fields: FieldErrors, code?: string) =>
  new Unprocessable({ message, fields, ...(code ? { code } : {}) })
