import { HttpApiBuilder, type HttpApp, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { errorBody, type StoreFailure, storeFailureOf } from "@erp/core"
import { Cause, Context, Effect, FiberRef, Option } from "effect"

/** What one request did that a log line of its failure should say; filled as the request goes. */
export interface RequestTrace {
  readonly requestId: string
  readonly method: string
  readonly path: string
  tenantId?: string
  /** Fields every answer to the request carries (the credential's RateLimit-*), whatever it ends with. */
  responseHeaders?: Record<string, string>
  failure?: { readonly tag: string; readonly message: string; readonly cause?: string }
}

/** The request's trace, seen by every fiber of the request (the authentication notes the tenant in it). */
export const CurrentTrace = FiberRef.unsafeMake<RequestTrace | undefined>(undefined)

const RETRY_PAUSE = "100 millis"

/** Seconds a client should wait before trying again after a 429 or 503 of ours. */
export const RETRY_AFTER_SECONDS = 1

const ANSWERS: Record<StoreFailure | "Defect", { readonly status: number; readonly message: string; readonly code: string }> = {
  StatementTimeout: { status: 503, message: "The request ran longer than the store allows and was stopped; try again later, or narrow its filters", code: "STATEMENT_TIMEOUT" },
  StoreBusy: { status: 503, message: "The store is busy; try again shortly", code: "STORE_BUSY" },
  ConnectionLost: { status: 503, message: "The connection to the store was lost; try again shortly", code: "STORE_UNAVAILABLE" },
  Defect: { status: 500, message: "Internal server error", code: "INTERNAL_ERROR" }
}

const firstLine = (text: string): string => text.split("\n")[0].slice(0, 500)

/** Tag, message and underlying cause of a defect, for the log only: none of it reaches the client. */
const describeDefect = (cause: Cause.Cause<unknown>): NonNullable<RequestTrace["failure"]> => {
  const error = Cause.squash(cause) as { _tag?: unknown; name?: unknown; message?: unknown; cause?: unknown } | undefined
  const tag = typeof error?._tag === "string" ? error._tag : typeof error?.name === "string" ? error.name : typeof error
  const message = firstLine(String(error?.message ?? error))
  const inner = error?.cause as { message?: unknown; code?: unknown } | undefined
  const causeText = inner === undefined
    ? undefined
    : firstLine(`${inner.code === undefined ? "" : `${String(inner.code)} `}${String(inner.message ?? inner)}`)
  return { tag, message, ...(causeText ? { cause: causeText } : {}) }
}

/**
 * A failure no handler answered (a defect: SQL errors are defects) as the spec's body:
 * 503 with `Retry-After` when the store timed out or was busy, else 500; the request id in
 * the body, the details only in the trace for the log line.
 */
export const answerFailure = (cause: Cause.Cause<unknown>, trace: RequestTrace): HttpServerResponse.HttpServerResponse => {
  const storeFailure = storeFailureOf(cause)
  const answer = ANSWERS[storeFailure ?? "Defect"]
  trace.failure = storeFailure ? { ...describeDefect(cause), tag: storeFailure } : describeDefect(cause)
  const body = { ...errorBody(answer.status, `${answer.message} (request id ${trace.requestId})`, answer.code), request_id: trace.requestId }
  return HttpServerResponse.unsafeJson(body, {
    status: answer.status,
    headers: answer.status === 503 ? { "retry-after": String(RETRY_AFTER_SECONDS) } : {}
  })
}

const isConnectionLost = (cause: Cause.Cause<unknown>) => storeFailureOf(cause) === "ConnectionLost"

/**
 * A failure no handler answered (a defect: SQL errors are defects) becomes our answer. A read
 * whose connection died under it runs once more, on a new connection; nothing else is retried.
 */
export const answerDefects = <A, E, R>(answer: Effect.Effect<A | HttpServerResponse.HttpServerResponse, E, R>, isRead: boolean, trace: RequestTrace) => {
  const attempt = (retried: boolean): Effect.Effect<A | HttpServerResponse.HttpServerResponse, E, R> =>
    answer.pipe(
      Effect.catchAllCause((cause) =>
        // Failures are the handlers' typed answers (the API encodes them); only defects are ours.
        Cause.isInterruptedOnly(cause) || Option.isSome(Cause.failureOption(cause))
          ? Effect.failCause(cause)
          : isRead && !retried && isConnectionLost(cause)
          ? afterPause(attempt(true))
          : Effect.succeed(answerFailure(cause, trace))
      )
    )
  return attempt(false)
}

// A short pause first: the pool drops the dead connection once its socket's close is seen.
const afterPause = <A, E, R>(retry: Effect.Effect<A, E, R>) => Effect.zipRight(Effect.sleep(RETRY_PAUSE), retry)

/**
 * A read's defect outside `answerDefects` (one answered without a fiber): the read's `retry` when
 * its connection died under it (to run in a fiber; its own failure is answered, not retried
 * again), else the answer now.
 */
export const readDefect = <A, E, R>(cause: Cause.Cause<unknown>, trace: RequestTrace, retry: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> | HttpServerResponse.HttpServerResponse =>
  isConnectionLost(cause) ? afterPause(retry) : answerFailure(cause, trace)

/**
 * Around the API's router (inside the platform's own error handling, which would answer an
 * empty 500 and move on): `answerDefects`.
 */
export const handleServerFailures = <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R | HttpServerRequest.HttpServerRequest> =>
  Effect.withFiberRuntime((fiber) => {
    const request = Context.unsafeGet(fiber.currentContext, HttpServerRequest.HttpServerRequest)
    const trace = fiber.getFiberRef(CurrentTrace) ?? { requestId: "unknown", method: request.method, path: request.url.split("?")[0] }
    return answerDefects(app, request.method === "GET" || request.method === "HEAD", trace)
  })

/** `handleServerFailures` as the API's middleware layer. */
export const layerServerFailures = HttpApiBuilder.middleware(handleServerFailures)

/** One structured line per 5xx answer: request id, route, tenant, error tag and cause. */
export const logServerError = (trace: RequestTrace, status: number) =>
  Effect.sync(() => {
    const line = {
      level: "error",
      time: new Date().toISOString(),
      msg: "request failed",
      status,
      request_id: trace.requestId,
      route: `${trace.method} ${trace.path}`,
      tenant_id: trace.tenantId ?? null,
      error: trace.failure?.tag ?? `HTTP ${status}`,
      message: trace.failure?.message ?? null,
      cause: trace.failure?.cause ?? null
    }
    process.stderr.write(`${JSON.stringify(line)}\n`)
  })
