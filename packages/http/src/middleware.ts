import { OAuthConfig } from "@erp/core"
import { Context, Effect, type Fiber, Option, References } from "effect"
import { HttpEffect, HttpServerRequest, HttpServerResponse } from "effect/http"
import { randomUUID } from "node:crypto"
import { errorBody } from "./errors.js"
import { bearerChallenge, publicUrl } from "./public-url.js"
import { CurrentTrace, logServerError, logUnexplained, RETRY_AFTER_SECONDS, type RequestTrace } from "./server-errors.js"
import { CURRENT_VERSION, SUPPORTED_VERSIONS } from "./versions.js"

export { CURRENT_VERSION, SUPPORTED_VERSIONS }

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/

const DEFAULT_MESSAGES: Record<number, string> = {
  404: "No such route",
  405: "Method not allowed",
  500: "Internal server error",
  503: "Service unavailable"
}

/**
 * Last touch on every response, including those the platform makes itself
 * (unknown route, defect): the spec's error body where there is none, the
 * request id, the version, and the challenge on 401.
 */
const finalize = (requestId: string, path: string, issuer: () => string, trace?: RequestTrace) => (response: HttpServerResponse.HttpServerResponse) => {
  let out = response
  if (out.status >= 400 && out.body._tag === "Empty") {
    const message = out.status === 404 ? `No route for ${path}` : DEFAULT_MESSAGES[out.status] ?? "Request failed"
    const code = out.status === 404 ? "ROUTE_NOT_FOUND" : out.status >= 500 ? "INTERNAL_ERROR" : undefined
    out = HttpServerResponse.jsonUnsafe(errorBody(out.status, message, code), { status: out.status, headers: out.headers })
  }
  // RFC 9728: the challenge points clients (MCP ones above all) at the resource metadata.
  if ((out.status === 429 || out.status === 503) && !out.headers["retry-after"]) {
    out = HttpServerResponse.setHeader(out, "retry-after", String(RETRY_AFTER_SECONDS))
  }
  if (out.status === 401 && !out.headers["www-authenticate"]) {
    out = HttpServerResponse.setHeader(out, "www-authenticate", bearerChallenge(issuer()))
  }
  const headers = { ...trace?.responseHeaders, "x-request-id": requestId, "api-version": CURRENT_VERSION }
  return HttpServerResponse.setHeaders(out, headers)
}

/**
 * The request as it arrived at the fetch handler, when a base path was taken off its
 * URL before routing (`routed: false`: it was not under the base path, so no route is).
 */
export class ArrivedAs extends Context.Service<ArrivedAs, { readonly path: string; readonly routed: boolean }>()("erp/http/ArrivedAs") {}

/** A request's start as the host sees it: its id, its trace, and the last touch of its answer. */
export interface RequestStart {
  readonly trace: RequestTrace
  /** Request id, version, rate-limit fields and the error body of a bare error, on the way out. */
  readonly finish: (response: HttpServerResponse.HttpServerResponse) => HttpServerResponse.HttpServerResponse
  /** The answer when the request is refused before anything runs (an `api-version` we do not serve). */
  readonly refused?: HttpServerResponse.HttpServerResponse
}

/**
 * What the host does before anything answers a request: the request id (the client's, or a new
 * one), the trace a failure's log line reads, and the `api-version` check.
 */
export const startRequest = (
  request: { readonly method: string; readonly headers: Readonly<Record<string, string | undefined>> },
  path: string,
  issuer: () => string
): RequestStart => {
  const incoming = request.headers["x-request-id"]
  const requestId = incoming && REQUEST_ID.test(incoming) ? incoming : randomUUID()
  const trace: RequestTrace = { requestId, method: request.method, path }
  const finish = finalize(requestId, `${request.method} ${path}`, issuer, trace)
  const version = request.headers["api-version"]
  if (version !== undefined && !(SUPPORTED_VERSIONS as ReadonlyArray<string>).includes(version)) {
    const message = `Invalid api-version "${version}". Accepted versions: ${SUPPORTED_VERSIONS.join(", ")}. Current version: ${CURRENT_VERSION}.`
    return { trace, finish, refused: finish(HttpServerResponse.jsonUnsafe(errorBody(400, message, "INVALID_API_VERSION"), { status: 400 })) }
  }
  return { trace, finish }
}

/**
 * The answer on its way out, finished; a 5xx logged (one line, from the request's trace). A 5xx
 * whose failure nothing recorded is the platform's answer to a failure it met outside the routes:
 * its line waits for the request's end, which carries that failure (`logUnexplained`).
 */
const finishPlatformAnswer = (start: RequestStart, response: HttpServerResponse.HttpServerResponse) => {
  const out = start.finish(response)
  if (out.status < 500) return Effect.succeed(out)
  if (start.trace.failure !== undefined) return Effect.as(logServerError(start.trace, out.status), out)
  start.trace.unexplainedStatus = out.status
  return Effect.succeed(out)
}

/**
 * Around every request: request id, `api-version` check, and `finalize` on the way out.
 * The platform runs each request in a fiber of its own, so the request's trace and log
 * annotation are set on that fiber rather than provided around the app (the platform
 * restores the fiber's context once the answer is sent).
 */
export const withHostConcerns = <E, R>(
  app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R | HttpServerRequest.HttpServerRequest> =>
  Effect.withFiber((fiber) => {
    const context = fiber.context
    const request = Context.getUnsafe(context, HttpServerRequest.HttpServerRequest)
    const config = Context.getOption(context, OAuthConfig)
    const issuer = () => Option.isSome(config) ? publicUrl(config.value, request) : `http://${request.headers.host ?? "localhost"}`
    const arrived = Context.getOption(context, ArrivedAs)
    const start = startRequest(request, Option.isSome(arrived) ? arrived.value.path : request.url.split("?")[0], issuer)
    if (start.refused) return Effect.succeed(start.refused)
    if (Option.isSome(arrived) && !arrived.value.routed) return Effect.succeed(start.finish(HttpServerResponse.empty({ status: 404 })))
    traceRequest(fiber, start.trace)
    HttpEffect.appendPreResponseHandlerUnsafe(fiber.context, (_request, response) => finishPlatformAnswer(start, response))
    return Effect.onExit(app, (exit) => logUnexplained(start.trace, exit))
  })

/** The request's trace and its id in the log annotations, set on the fiber that answers it (one change of its context). */
export const traceRequest = (fiber: Fiber.Fiber<unknown, unknown>, trace: RequestTrace): void =>
  fiber.setContext(
    Context.add(
      Context.add(fiber.context, CurrentTrace, trace),
      References.CurrentLogAnnotations,
      { ...fiber.getRef(References.CurrentLogAnnotations), request_id: trace.requestId }
    )
  )
