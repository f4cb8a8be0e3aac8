/** Field name (a dotted path for nested input) to the reasons it was refused, in English. */
export type FieldErrors = Readonly<Record<string, ReadonlyArray<string>>>

/** The error body every 4xx and 5xx of the API answers. */
export interface ErrorBody {
  readonly status_code: number
  readonly message: string
  readonly error: string
  readonly code?: string
  readonly details?: { readonly fields: FieldErrors }
  readonly request_id?: string
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value)

const fieldsOf = (details: unknown): FieldErrors => {
  if (!isRecord(details) || !isRecord(details.fields)) return {}
  const fields: Record<string, ReadonlyArray<string>> = {}
  for (const [name, reasons] of Object.entries(details.fields)) {
    if (Array.isArray(reasons)) fields[name] = reasons.filter((reason): reason is string => typeof reason === "string")
  }
  return fields
}

/**
 * An answer of the API other than 2xx, thrown by every method of the client (after the retries
 * of a 429 or 503 ran out). The fields are the API's error body: `status_code`, `code` (for
 * example `VALIDATION_FAILED`, `PRODUCT_NOT_FOUND`, `RATE_LIMITED`), `message`, and
 * `details.fields`, the refused fields (empty when the answer names none). A body that is not
 * the API's (a proxy's HTML page) still gives the status, with the body's text as `message`.
 */
export class ErpApiError extends Error {
  override readonly name = "ErpApiError"
  /** The HTTP status. */
  readonly status_code: number
  /** The API's error code, when the answer has one (every 4xx of the API does). */
  readonly code: string | undefined
  /** The reason phrase of the status (`Unprocessable Entity`). */
  readonly error: string
  /** The refused fields and why; `{}` when the answer names none. */
  readonly details: { readonly fields: FieldErrors }
  /** The `x-request-id` of the answer: the id the host's log line carries. */
  readonly request_id: string | undefined
  /** The answer's headers (`Retry-After`, `RateLimit-*`, `ETag`). */
  readonly headers: Headers
  /** The answer's body as received: the parsed JSON, or the text when it is not JSON. */
  readonly body: unknown

  constructor(status: number, body: unknown, headers: Headers = new Headers()) {
    const fields = isRecord(body) ? body : {}
    const message = typeof fields.message === "string"
      ? fields.message
      : typeof body === "string" && body.trim() !== ""
      ? body.trim().slice(0, 500)
      : `HTTP ${status}`
    super(message)
    this.status_code = status
    this.code = typeof fields.code === "string" ? fields.code : undefined
    this.error = typeof fields.error === "string" ? fields.error : `HTTP ${status}`
    this.details = { fields: fieldsOf(fields.details) }
    this.request_id = headers.get("x-request-id") ?? (typeof fields.request_id === "string" ? fields.request_id : undefined)
    this.headers = headers
    this.body = body
  }
}
