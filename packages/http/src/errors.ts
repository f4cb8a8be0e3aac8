import { type DomainError, ERROR_STATUS, type ErrorBody, errorBody, FieldErrors, type TenantBusy } from "@erp/core"
import { Effect, Schema } from "effect"
import { HttpServerRespondable, HttpServerResponse } from "effect/http"

export { errorBody, reasonPhrase } from "@erp/core"

/**
 * The spec's error body. `status_code` is a literal per class so that encoding
 * an error picks the class (and status) it belongs to, never a look-alike.
 */
const errorFields = <S extends number>(status: S) => ({
  status_code: Schema.Literal(status),
  message: Schema.String,
  error: Schema.String,
  code: Schema.optionalKey(Schema.String),
  details: Schema.optionalKey(Schema.Struct({ fields: FieldErrors }))
})

/**
 * The body of one status as the OpenAPI document names it: the class's wire form
 * carries the identifier and description, so the document has `BadRequest`, not the
 * name the generator gives an encoded side.
 */
const bodySchema = <S extends number>(status: S, identifier: string, description: string) =>
  Schema.Struct(errorFields(status)).annotate({ identifier, description })

/**
 * Every error class answers for itself (`HttpServerRespondable`): an operation answers the
 * errors it declares (encoded by the API, as the document shows them), and one the engine
 * gives that its declaration leaves out (a 409 of a delete) is still the spec's body, never a 500.
 */
const answer = (error: ApiError) => Effect.sync(() => errorResponse(error))

/** What a 5xx adds: the request id its log line carries. */
const serverBodySchema = <S extends number>(status: S, identifier: string, description: string) =>
  Schema.Struct({ ...errorFields(status), request_id: Schema.optionalKey(Schema.String) }).annotate({ identifier, description })

const BAD_REQUEST = "Invalid input: body, query, id or api-version"
export class BadRequest extends Schema.Class<BadRequest>("BadRequest")(bodySchema(400, "BadRequest", BAD_REQUEST), {
  httpApiStatus: 400,
  description: BAD_REQUEST
}) {
  [HttpServerRespondable.symbol]() {
    return answer(this)
  }
}
const UNAUTHORIZED = "Missing, invalid, expired or revoked credentials"
export class Unauthorized extends Schema.Class<Unauthorized>("Unauthorized")(bodySchema(401, "Unauthorized", UNAUTHORIZED), {
  httpApiStatus: 401,
  description: UNAUTHORIZED
}) {
  [HttpServerRespondable.symbol]() {
    return answer(this)
  }
}
const FORBIDDEN = "Valid credentials without the permission"
export class Forbidden extends Schema.Class<Forbidden>("Forbidden")(bodySchema(403, "Forbidden", FORBIDDEN), {
  httpApiStatus: 403,
  description: FORBIDDEN
}) {
  [HttpServerRespondable.symbol]() {
    return answer(this)
  }
}
const NOT_FOUND = "No such record for this tenant"
export class NotFound extends Schema.Class<NotFound>("NotFound")(bodySchema(404, "NotFound", NOT_FOUND), {
  httpApiStatus: 404,
  description: NOT_FOUND
}) {
  [HttpServerRespondable.symbol]() {
    return answer(this)
  }
}
const CONFLICT = "Duplicate of an existing record, or an Idempotency-Key whose first request is still running (IDEMPOTENCY_KEY_IN_USE)"
export class Conflict extends Schema.Class<Conflict>("Conflict")(bodySchema(409, "Conflict", CONFLICT), {
  httpApiStatus: 409,
  description: CONFLICT
}) {
  [HttpServerRespondable.symbol]() {
    return answer(this)
  }
}
const PRECONDITION_FAILED = "If-Match names another version of the record than the current one (code PRECONDITION_FAILED); nothing was written"
export class PreconditionFailed extends Schema.Class<PreconditionFailed>("PreconditionFailed")(bodySchema(412, "PreconditionFailed", PRECONDITION_FAILED), {
  httpApiStatus: 412,
  description: PRECONDITION_FAILED
}) {
  [HttpServerRespondable.symbol]() {
    return answer(this)
  }
}
const PAYLOAD_TOO_LARGE = "Request body over the size limit"
export class PayloadTooLarge extends Schema.Class<PayloadTooLarge>("PayloadTooLarge")(bodySchema(413, "PayloadTooLarge", PAYLOAD_TOO_LARGE), {
  httpApiStatus: 413,
  description: PAYLOAD_TOO_LARGE
}) {
  [HttpServerRespondable.symbol]() {
    return answer(this)
  }
}
const UNPROCESSABLE = "Well-formed input the business rules refuse (details.fields names each field), or an Idempotency-Key used for another request (IDEMPOTENCY_KEY_REUSED)"
export class UnprocessableEntity extends Schema.Class<UnprocessableEntity>("UnprocessableEntity")(bodySchema(422, "UnprocessableEntity", UNPROCESSABLE), {
  httpApiStatus: 422,
  description: UNPROCESSABLE
}) {
  [HttpServerRespondable.symbol]() {
    return answer(this)
  }
}
const TOO_MANY_REQUESTS = "Rate limit exceeded, or more of the tenant's requests at once than it may have; see Retry-After"
export class TooManyRequests extends Schema.Class<TooManyRequests>("TooManyRequests")(bodySchema(429, "TooManyRequests", TOO_MANY_REQUESTS), {
  httpApiStatus: 429,
  description: TOO_MANY_REQUESTS
}) {
  [HttpServerRespondable.symbol]() {
    return answer(this)
  }
}
const INTERNAL = "Internal failure; request_id names it in the server's log"
export class InternalServerError extends Schema.Class<InternalServerError>("InternalServerError")(serverBodySchema(500, "InternalServerError", INTERNAL), {
  httpApiStatus: 500,
  description: INTERNAL
}) {
  [HttpServerRespondable.symbol]() {
    return answer(this)
  }
}
const UNAVAILABLE = "The store cut the statement at its time limit, had no free connection in time, or lost the connection; see Retry-After"
export class ServiceUnavailable extends Schema.Class<ServiceUnavailable>("ServiceUnavailable")(serverBodySchema(503, "ServiceUnavailable", UNAVAILABLE), {
  httpApiStatus: 503,
  description: UNAVAILABLE
}) {
  [HttpServerRespondable.symbol]() {
    return answer(this)
  }
}

export const ERROR_CLASSES = [
  BadRequest,
  Unauthorized,
  Forbidden,
  NotFound,
  Conflict,
  PreconditionFailed,
  PayloadTooLarge,
  UnprocessableEntity,
  TooManyRequests,
  InternalServerError,
  ServiceUnavailable
] as const

/** What any operation may answer when the store or the host fails, declared on every endpoint. */
export const SERVER_ERRORS = [InternalServerError, ServiceUnavailable] as const

/** The schema of one error body (one class per status). */
export type ApiErrorSchema = (typeof ERROR_CLASSES)[number]

export type ApiError = InstanceType<ApiErrorSchema>

const encodeError = Schema.encodeSync(Schema.Union(ERROR_CLASSES))

/** An error as `HttpApi` answers it: its class's encoded body (fields in declared order), with its status. */
export const errorResponse = (error: ApiError) => HttpServerResponse.jsonUnsafe(encodeError(error), { status: error.status_code })

/** The statuses a handler refuses a request with, each with its class. */
type ApiErrorStatus = 400 | 401 | 403 | 404 | 409 | 412 | 413 | 422 | 429 | 500

const CLASS_BY_STATUS: { readonly [S in ApiErrorStatus]: new(body: ErrorBody<S>) => ApiError } = {
  400: BadRequest,
  401: Unauthorized,
  403: Forbidden,
  404: NotFound,
  409: Conflict,
  412: PreconditionFailed,
  413: PayloadTooLarge,
  422: UnprocessableEntity,
  429: TooManyRequests,
  500: InternalServerError
}

export const apiError = <S extends ApiErrorStatus>(status: S, message: string, code?: string, fields?: FieldErrors): ApiError =>
  new CLASS_BY_STATUS[status](errorBody(status, message, code, fields))

/** A tenant's turns all taken past the wait (the tenant gate): 429. */
export const tenantBusy = (busy: TenantBusy) =>
  apiError(429, `Too many requests of this tenant at once (${busy.concurrency} run at a time; the wait for a turn exceeded ${busy.waitMs} ms); retry after the Retry-After delay`, "TOO_MANY_CONCURRENT_REQUESTS")

/** Core errors as the HttpApi error classes (the status comes from core's `ERROR_STATUS`). */
export const toApiError = (error: DomainError): ApiError =>
  apiError(ERROR_STATUS[error._tag], error.message, error.code, "fields" in error ? error.fields : undefined)
