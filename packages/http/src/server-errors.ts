import { errorBody, type StoreFailure, storeFailureOf } from "@erp/core"
import { Cause, Context, Effect, Exit } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"

/** What one request did that a log line of its failure should say; filled as the request goes. */
export interface RequestTrace {
  readonly requestId: string
  readonly method: string
  readonly path: string
  tenantId?: string
  /** Fields every answer to the request carries (the credential's RateLimit-*), whatever it ends with. */
  responseHeaders?: Record<string, string>
  failure?: { readonly tag: string; readonly message: string; readonly cause?: string }
  /** Set once the request's 5xx line is written: an answer finished twice (its first write failed) is logged once. */
  logged?: boolean
  /** A 5xx answered with no failure recorded, whose line waits for the request's end (`logUnexplained`). */
  unexplainedStatus?: number
}

/** The request's trace, seen by every fiber of the request (the authentication notes the tenant in it). */
export const CurrentTrace = Context.Reference<RequestTrace | undefined>("erp/http/CurrentTrace", { defaultValue: () => undefined })

const RETRY_PAUSE = "100 millis"

/** Seconds a client should wait before trying again after a 429 or 503 of ours. */
export const RETRY_AFTER_SECONDS = 1

const ANSWERS: Record<StoreFailure | "Defect", { readonly status: number; readonly message: string; readonly code: string }> = {
  StatementTimeout: { status: 503, message: "The request ran longer than the store allows and was stopped; try again later, or narrow its filters", code: "STATEMENT_TIMEOUT" },
  StoreBusy: { status: 503, message: "The store is busy; try again shortly", code: "STORE_BUSY" },
  ConnectionLost: { status: 503, message: "The connection to the store was lost; try again shortly", code: "STORE_UNAVAILABLE" },
  Contention: { status: 503, message: "Another request changed the same records at the same moment and this one was rolled back; try again", code: "STORE_CONTENTION" },
  Defect: { status: 500, message: "Internal server error", code: "INTERNAL_ERROR" }
}

const firstLine = (text: string): string => text.split("\n")[0].slice(0, 500)

/** Stack frames a line of the log names, innermost first: enough to find the code, short enough to read. */
const STACK_FRAMES = 5

/** Where an error was thrown, from its stack (file and function names only, never values). */
const thrownAt = (stack: unknown): string | undefined => {
  if (typeof stack !== "string") return undefined
  const frames = stack.split("\n").map((line) => line.trim()).filter((line) => line.startsWith("at ")).slice(0, STACK_FRAMES)
  return frames.length === 0 ? undefined : frames.join(" < ").slice(0, 1000)
}

interface Thrown {
  readonly _tag?: unknown
  readonly name?: unknown
  readonly code?: unknown
  readonly message?: unknown
  readonly cause?: unknown
  readonly stack?: unknown
}

/** Causes a wrapper names before the error that failed (a `SqlError`'s reason, then the driver's error). */
const CAUSE_DEPTH = 5

/** The innermost error of a chain of causes: the one that says what failed. */
const underneath = (cause: Thrown | undefined): Thrown | undefined => {
  let inner = cause
  for (let depth = 0; depth < CAUSE_DEPTH && inner?.cause !== undefined && inner.cause !== null && typeof inner.cause === "object"; depth++) {
    inner = inner.cause as Thrown
  }
  return inner
}

/**
 * Tag, message and cause of a defect, for the log only: none of it reaches the client. The
 * cause is the error underneath (a driver's error under a `SqlError`), else where the error
 * was thrown, else the failure as effect prints it: a line never says less than what failed.
 */
export const describeDefect = (cause: Cause.Cause<unknown>): NonNullable<RequestTrace["failure"]> => {
  const error = Cause.squash(cause) as Thrown | undefined
  const tag = typeof error?._tag === "string" ? error._tag : typeof error?.name === "string" ? error.name : typeof error
  const code = typeof error?.code === "string" ? `${error.code} ` : ""
  const message = firstLine(`${code}${String(error?.message ?? error)}`)
  const inner = underneath(error?.cause as Thrown | undefined)
  const causeText = inner !== undefined && inner !== null
    ? firstLine(`${inner.code === undefined ? "" : `${String(inner.code)} `}${String(inner.message ?? inner)}`)
    : thrownAt(error?.stack) ?? firstLine(Cause.pretty(cause))
  return { tag, message, cause: causeText }
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
  return HttpServerResponse.jsonUnsafe(body, {
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
      Effect.catchCause((cause) =>
        // Failures are the handlers' typed answers (the API encodes them); only defects are ours.
        Cause.hasInterruptsOnly(cause) || Cause.hasFails(cause)
          ? Effect.failCause(cause)
          : isRead && !retried && isConnectionLost(cause)
          ? afterPause(attempt(true))
          : Effect.succeed(answerFailure(cause, trace))
      )
    )
  return attempt(false)
}

// A short pause first: the pool drops the dead connection once its socket's close is seen.
const afterPause = <A, E, R>(retry: Effect.Effect<A, E, R>) => Effect.andThen(Effect.sleep(RETRY_PAUSE), retry)

/**
 * Around the router (inside the platform's own error handling, which would answer an
 * empty 500 and move on): `answerDefects`.
 */
export const handleServerFailures = <E, R>(
  app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R | HttpServerRequest.HttpServerRequest> =>
  Effect.withFiber((fiber) => {
    const request = Context.getUnsafe(fiber.context, HttpServerRequest.HttpServerRequest)
    const trace = fiber.getRef(CurrentTrace) ?? { requestId: "unknown", method: request.method, path: request.url.split("?")[0] }
    return answerDefects(app, request.method === "GET" || request.method === "HEAD", trace)
  })

/** Notes in the request's trace why a route answers a 5xx itself, for the log line (a store that does not answer /health). */
export const noteServerFailure = (error: unknown): Effect.Effect<void> =>
  Effect.withFiber((fiber) => {
    const trace = fiber.getRef(CurrentTrace)
    if (trace) trace.failure = describeDefect(Cause.fail(error))
    return Effect.void
  })

/** What the platform answered when a request failed: its exit carries the answer as a defect beside the failure. */
const answeredIn = (cause: Cause.Cause<unknown>): { readonly status: number | undefined; readonly failure: Cause.Cause<unknown> } => {
  let status: number | undefined
  const failure = cause.reasons.filter((reason) => {
    if (!Cause.isDieReason(reason) || !HttpServerResponse.isHttpServerResponse(reason.defect)) return true
    status = reason.defect.status
    return false
  })
  return { status, failure: Cause.fromReasons(failure) }
}

/**
 * The line of a 5xx that waited for the request's end: the platform answers 500 by itself
 * to a failure outside the routes (writing the answer: a header Node refuses), and that
 * failure reaches the host's middleware only as the request's exit. An answer Node could not
 * write is replaced by the platform's own 500, which no pre-response handler sees: its
 * status is read from the exit too.
 */
export const logUnexplained = (trace: RequestTrace, exit: Exit.Exit<unknown, unknown>): Effect.Effect<void> => {
  if (trace.logged || Exit.isSuccess(exit) || Cause.hasInterruptsOnly(exit.cause)) {
    return trace.unexplainedStatus === undefined || trace.logged ? Effect.void : logServerError(trace, trace.unexplainedStatus)
  }
  const answered = answeredIn(exit.cause)
  const status = trace.unexplainedStatus ?? answered.status
  if (status === undefined || status < 500) return Effect.void
  if (trace.failure === undefined && answered.failure.reasons.length > 0) trace.failure = describeDefect(answered.failure)
  return logServerError(trace, status)
}

/** `handleServerFailures` around every route of the router (the API's, the pages', MCP's, and no route at all). */
export const layerServerFailures = HttpRouter.middleware(handleServerFailures, { global: true })

/** The line's failure when nothing recorded one: a 5xx is never logged without saying why. */
const UNEXPLAINED = { message: "the route answered this status without a recorded failure", cause: "none recorded" }

/** One structured line per 5xx answer: request id, route, tenant, error tag, message and cause. */
export const logServerError = (trace: RequestTrace, status: number) =>
  Effect.sync(() => {
    if (trace.logged) return
    trace.logged = true
    const line = {
      level: "error",
      time: new Date().toISOString(),
      msg: "request failed",
      status,
      request_id: trace.requestId,
      route: `${trace.method} ${trace.path}`,
      tenant_id: trace.tenantId ?? null,
      error: trace.failure?.tag ?? `HTTP ${status}`,
      message: trace.failure?.message ?? UNEXPLAINED.message,
      cause: trace.failure?.cause ?? UNEXPLAINED.cause
    }
    process.stderr.write(`${JSON.stringify(line)}\n`)
  })
