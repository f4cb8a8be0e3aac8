import { HttpApiSchema, HttpServerResponse } from "@effect/platform"
import { type DomainError, domainErrorBody, ERROR_STATUS, errorBody, FieldErrors, type TenantBusy } from "@erp/core"

export { errorBody, reasonPhrase } from "@erp/core"
import { Schema } from "effect"

/**
 * The spec's error body. `status_code` is a literal per class so that encoding
 * an error picks the class (and status) it belongs to, never a look-alike.
 */
const ErrorBody = <S extends number>(status: S) => ({
  status_code: Schema.Literal(status),
  message: Schema.String,
  error: Schema.String,
  code: Schema.optional(Schema.String),
  details: Schema.optional(Schema.Struct({ fields: FieldErrors }))
})

const annotate = <A>(status: number, description: string) => HttpApiSchema.annotations<A>({ status, description })

export class BadRequest extends Schema.Class<BadRequest>("BadRequest")(ErrorBody(400), annotate<BadRequest>(400, "Invalid input: body, query, id or api-version")) {}
export class Unauthorized extends Schema.Class<Unauthorized>("Unauthorized")(ErrorBody(401), annotate<Unauthorized>(401, "Missing, invalid, expired or revoked credentials")) {}
export class Forbidden extends Schema.Class<Forbidden>("Forbidden")(ErrorBody(403), annotate<Forbidden>(403, "Valid credentials without the permission")) {}
export class NotFound extends Schema.Class<NotFound>("NotFound")(ErrorBody(404), annotate<NotFound>(404, "No such record for this tenant")) {}
export class Conflict extends Schema.Class<Conflict>("Conflict")(ErrorBody(409), annotate<Conflict>(409, "Duplicate of an existing record, or an Idempotency-Key whose first request is still running (IDEMPOTENCY_KEY_IN_USE)")) {}
export class PreconditionFailed extends Schema.Class<PreconditionFailed>("PreconditionFailed")(
  ErrorBody(412),
  annotate<PreconditionFailed>(412, "If-Match names another version of the record than the current one (code PRECONDITION_FAILED); nothing was written")
) {}
export class PayloadTooLarge extends Schema.Class<PayloadTooLarge>("PayloadTooLarge")(ErrorBody(413), annotate<PayloadTooLarge>(413, "Request body over the size limit")) {}
export class UnprocessableEntity extends Schema.Class<UnprocessableEntity>("UnprocessableEntity")(ErrorBody(422), annotate<UnprocessableEntity>(422, "Well-formed input the business rules refuse (details.fields names each field), or an Idempotency-Key used for another request (IDEMPOTENCY_KEY_REUSED)")) {}
export class TooManyRequests extends Schema.Class<TooManyRequests>("TooManyRequests")(ErrorBody(429), annotate<TooManyRequests>(429, "Rate limit exceeded, or more of the tenant's requests at once than it may have; see Retry-After")) {}
export class InternalServerError extends Schema.Class<InternalServerError>("InternalServerError")(
  { ...ErrorBody(500), request_id: Schema.optional(Schema.String) },
  annotate<InternalServerError>(500, "Internal failure; request_id names it in the server's log")
) {}
export class ServiceUnavailable extends Schema.Class<ServiceUnavailable>("ServiceUnavailable")(
  { ...ErrorBody(503), request_id: Schema.optional(Schema.String) },
  annotate<ServiceUnavailable>(503, "The store cut the statement at its time limit, had no free connection in time, or lost the connection; see Retry-After")
) {}

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

export type ApiError = InstanceType<(typeof ERROR_CLASSES)[number]>

const encoders = new Map<unknown, (error: ApiError) => unknown>(
  ERROR_CLASSES.map((errorClass) => [errorClass, Schema.encodeSync(errorClass as unknown as Schema.Schema<ApiError, unknown>)] as const)
)

/** An error as `HttpApi` answers it: its class's encoded body (fields in declared order), with its status. */
export const errorResponse = (error: ApiError) =>
  HttpServerResponse.unsafeJson(encoders.get(error.constructor)!(error), { status: error.status_code })

const CLASS_BY_STATUS = {
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
} as const

export const apiError = (status: keyof typeof CLASS_BY_STATUS, message: string, code?: string, fields?: FieldErrors): ApiError =>
  new CLASS_BY_STATUS[status](errorBody(status, message, code, fields) as never)

/** A tenant's turns all taken past the wait (the tenant gate): 429. */
export const tenantBusy = (busy: TenantBusy) =>
  apiError(429, `Too many requests of this tenant at once (${busy.concurrency} run at a time; the wait for a turn exceeded ${busy.waitMs} ms); retry after the Retry-After delay`, "TOO_MANY_CONCURRENT_REQUESTS")

/** Core errors as the HttpApi error classes (the status comes from core's `ERROR_STATUS`). */
export const toApiError = (error: DomainError): ApiError =>
  new CLASS_BY_STATUS[ERROR_STATUS[error._tag]](domainErrorBody(error) as never)
