import { Schema } from "effect"

/** Field name (dotted path for nested input) to the reasons it was refused, in English. */
export const FieldErrors = Schema.Record(Schema.String, Schema.Array(Schema.String))
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

/** `If-Match` named a version of the record other than the current one: nothing was written. */
export class PreconditionFailed extends Schema.TaggedError<PreconditionFailed>()("PreconditionFailed", {
  message: Schema.String,
  code: Schema.optional(Schema.String)
}) {}

export type DomainError = NotFound | InvalidRequest | Unprocessable | Unauthenticated | Forbidden | Conflict | PreconditionFailed

export const invalid = (message: string, code?: string, fields?: FieldErrors) =>
  new InvalidRequest({ message, ...(code ? { code } : {}), ...(fields ? { fields } : {}) })

export const unprocessable = (message: string, fields: FieldErrors, code?: string) =>
  new Unprocessable({ message, fields, ...(code ? { code } : {}) })

/** The HTTP status each core error answers with, on every transport (HTTP, MCP). */
export const ERROR_STATUS = {
  InvalidRequest: 400,
  Unauthenticated: 401,
  Forbidden: 403,
  NotFound: 404,
  Conflict: 409,
  PreconditionFailed: 412,
  Unprocessable: 422
} as const satisfies Record<DomainError["_tag"], number>

const REASON_PHRASES: Readonly<Record<number, string>> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  409: "Conflict",
  412: "Precondition Failed",
  413: "Payload Too Large",
  415: "Unsupported Media Type",
  422: "Unprocessable Entity",
  429: "Too Many Requests",
  500: "Internal Server Error",
  503: "Service Unavailable"
}

export const reasonPhrase = (status: number): string => REASON_PHRASES[status] ?? "Error"

/** The spec's error body: `status_code`, `message`, `error`, optional `code` and `details.fields`. */
export interface ErrorBody<S extends number = number> {
  readonly status_code: S
  readonly message: string
  readonly error: string
  readonly code?: string
  readonly details?: { readonly fields: FieldErrors }
}

export const errorBody = <S extends number>(status: S, message: string, code?: string, fields?: FieldErrors): ErrorBody<S> => ({
  status_code: status,
  message,
  error: reasonPhrase(status),
  ...(code ? { code } : {}),
  ...(fields ? { details: { fields } } : {})
})

/** A core error as the body every transport answers with. */
export const domainErrorBody = (error: DomainError): ErrorBody =>
  errorBody(ERROR_STATUS[error._tag], error.message, error.code, "fields" in error ? error.fields : undefined)
