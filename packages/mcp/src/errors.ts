import type { DomainError, FieldErrors } from "@erp/core"

/** The spec's error body, the same one the HTTP API answers with. */
export interface ErrorBody {
  readonly status_code: number
  readonly message: string
  readonly error: string
  readonly code?: string
  readonly details?: { readonly fields: FieldErrors }
}

const REASONS: Readonly<Record<number, string>> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  409: "Conflict",
  422: "Unprocessable Entity",
  500: "Internal Server Error"
}

const STATUS: Readonly<Record<DomainError["_tag"], number>> = {
  InvalidRequest: 400,
  Unauthenticated: 401,
  Forbidden: 403,
  NotFound: 404,
  Conflict: 409,
  Unprocessable: 422
}

export const errorBody = (status: number, message: string, code?: string, fields?: FieldErrors): ErrorBody => ({
  status_code: status,
  message,
  error: REASONS[status] ?? "Error",
  ...(code ? { code } : {}),
  ...(fields ? { details: { fields } } : {})
})

/**
 * Agents relay these bodies to people who also use the HTTP API, so a core
 * error reads the same here as there: same status, code and field reasons.
 */
export const domainErrorBody = (error: DomainError): ErrorBody =>
  errorBody(STATUS[error._tag], error.message, error.code, "fields" in error ? error.fields : undefined)

export const internalErrorBody = (): ErrorBody =>
  errorBody(500, "The server failed while running this tool; the failure was logged", "INTERNAL_ERROR")
