import { Cookies, HttpServerError, HttpServerResponse } from "@effect/platform"
import { type AnyResource, Authenticator, CredentialRateLimiter, type DomainError, IdempotencyKeys, OAuthConfig, ResourceEngine, type Row, TenantGate } from "@erp/core"
import { Cause, Effect, Exit, Layer, Option, Runtime } from "effect"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { ApiRequest } from "./api-request.js"
import { DRAIN_LIMIT_BYTES } from "./body.js"
import { errorBody, errorResponse, tenantBusy, toApiError } from "./errors.js"
import { admitNow } from "./authentication.js"
import { readAnswer } from "./conditional.js"
import { type LeanRoute, makeLeanRoutes } from "./lean-routes.js"
import { finishAnswer, type RequestStart, startRequest, traceRequest } from "./middleware.js"
import { publicUrl } from "./public-url.js"
import { describeDefect, logServerError, readDefect } from "./server-errors.js"
import { tracerInstalled } from "./tracing.js"

/** A request's body as `ApiRequest.body` reads it, from Node's stream. */
const nodeBody = (source: IncomingMessage, maxBytes: number) =>
  Effect.async<Buffer | undefined, Error>((resume) => {
    if (Number(source.headers["content-length"] ?? "0") > DRAIN_LIMIT_BYTES) return resume(Effect.succeed(undefined))
    const parts: Array<Buffer> = []
    let size = 0
    const stop = () => {
      source.off("data", onData).off("end", onEnd).off("error", onError)
    }
    const onData = (chunk: Buffer) => {
      size += chunk.byteLength
      if (size <= maxBytes) parts.push(chunk)
      else if (size > DRAIN_LIMIT_BYTES) {
        stop()
        resume(Effect.succeed(undefined))
      }
    }
    const onEnd = () => {
      stop()
      resume(Effect.succeed(size > maxBytes ? undefined : Buffer.concat(parts, size)))
    }
    const onError = (error: Error) => {
      stop()
      resume(Effect.fail(error))
    }
    source.on("data", onData).on("end", onEnd).on("error", onError)
    return Effect.sync(stop)
  })

/** The bodies the lean routes answer with; any other (a stream) would be a defect, answered 500. */
const writable = (body: HttpServerResponse.HttpServerResponse["body"]): body is Extract<HttpServerResponse.HttpServerResponse["body"], { _tag: "Empty" | "Uint8Array" }> =>
  body._tag === "Empty" || body._tag === "Uint8Array"

const write = (target: ServerResponse, response: HttpServerResponse.HttpServerResponse) => {
  if (target.writableEnded) return
  const body = response.body
  const headers = Cookies.isEmpty(response.cookies) ? response.headers : { ...response.headers, "set-cookie": Cookies.toSetCookieHeaders(response.cookies) }
  target.writeHead(response.status, headers)
  if (body._tag === "Uint8Array") target.end(body.body)
  else target.end()
}

/** Marks a request handed over to the platform (its credential did not authenticate). */
const HANDED_OVER: unique symbol = Symbol("erp/http/handed-over")

/**
 * The lean routes answered from Node's own request, before the platform sees it. Through the
 * platform, a request is a fiber with a scope, its tracing middleware, error handling and
 * response writing: about 110 steps of the Effect runtime and 0.1 ms of CPU before any of our
 * code runs (docs/architecture.md, "A request"), a quarter of a read by id. Here it is one fiber running the lean
 * answer, with the host's concerns as the platform route has them (`startRequest`,
 * `finishAnswer`). A request that is not a lean route, or whose credential does not
 * authenticate, goes to the platform unchanged.
 */
const directAnswers = (registry: ReadonlyArray<AnyResource>) =>
  Effect.gen(function* () {
    const services = {
      authenticator: yield* Authenticator,
      config: yield* OAuthConfig,
      limiter: yield* CredentialRateLimiter,
      engine: yield* ResourceEngine,
      gate: yield* TenantGate,
      keys: yield* IdempotencyKeys
    }
    // Spans only for a tracer someone installed: then every request goes the platform's way, with its spans.
    const runFork = Runtime.runFork(yield* Effect.withTracerEnabled(Effect.runtime<never>(), false))
    const lean = makeLeanRoutes(registry)

    /** A lean answer run in a fiber of its own, and what it answers written (a request handed over to the platform aside). */
    const runAnswer = (target: ServerResponse, start: RequestStart, answer: Effect.Effect<HttpServerResponse.HttpServerResponse | typeof HANDED_OVER>) => {
      const fiber = runFork(Effect.zipRight(traceRequest(start.trace), answer))
      fiber.addObserver((exit) => {
        if (Exit.isSuccess(exit)) {
          if (exit.value === HANDED_OVER) return
          if (writable(exit.value.body)) return write(target, exit.value)
        }
        // Interrupted: the client is gone. Anything else cannot happen (failures and defects are answers by now), so it is logged.
        if (Exit.isFailure(exit) && Exit.isInterrupted(exit)) return
        start.trace.failure = Exit.isSuccess(exit)
          ? { tag: "Defect", message: "a lean route answered with a stream", cause: "a body the direct route cannot write" }
          : describeDefect(exit.cause)
        const failed = start.finish(HttpServerResponse.unsafeJson(errorBody(500, "Internal server error", "INTERNAL_ERROR"), { status: 500 }))
        Effect.runFork(logServerError(start.trace, 500))
        write(target, failed)
      })
      target.on("close", () => {
        if (!target.writableEnded) fiber.unsafeInterruptAsFork(HttpServerError.clientAbortFiberId)
      })
    }

    /**
     * A read by id answered without a fiber of the runtime, where all it needs is at hand: the
     * credential authenticated moments ago, its count within the lease, a store whose tenant turns
     * and statements take callbacks (PostgreSQL). Where anything is not, false with nothing done:
     * the lean answer takes the request. The steps are the lean answer's own, in the services'
     * synchronous or callback forms: a third of a read's CPU was the runtime's and its garbage. A statement
     * that fails is answered as the lean answer answers it (503 for a timeout or a busy store, else
     * a logged 500); one whose connection died is read once more, in a fiber. A client gone before
     * the answer leaves the tenant's queue, or gives its turn back and its statement is cancelled.
     */
    const readNow = (route: LeanRoute, request: ApiRequest, authorization: string, start: RequestStart, target: ServerResponse): boolean => {
      const { engine, gate } = services
      if (route.endpoint !== "get" || route.id === undefined || engine.startGet === undefined || gate.enter === undefined) return false
      const tenantId = request.headers["x-tenant-id"]
      const principal = services.authenticator.authenticateNow(authorization, tenantId === undefined ? {} : { tenantId })
      const read = principal && engine.startGet(route.resource, principal, route.id)
      if (!principal || !read) return false
      const admitted = admitNow(principal, services.limiter, start.trace)
      if (admitted === "ask") return false
      const answer = (response: HttpServerResponse.HttpServerResponse) => write(target, start.finish(response))
      if (admitted !== undefined) {
        answer(errorResponse(admitted))
        return true
      }
      let settled = false
      // What the client's going away undoes: the wait for a turn, then the statement and the turn.
      let stop: (() => void) | undefined
      /** The read's outcome answered: a success or refusal as the handler answers it, a failed statement as `answerDefects` does. */
      const settle = (exit: Exit.Exit<Row, DomainError>) => {
        if (Exit.isSuccess(exit)) {
          const reply = readAnswer(request, route.resource, exit.value)
          return answer(HttpServerResponse.isServerResponse(reply) ? reply : errorResponse(reply))
        }
        const failure = Cause.failureOption(exit.cause)
        if (Option.isSome(failure)) return answer(errorResponse(toApiError(failure.value)))
        const retry = Effect.flatMap(lean.answerCaller(services, route, request, principal, start.trace, Effect.void, true), (response) => finishAnswer(start, response))
        const defect = readDefect(exit.cause, start.trace, retry)
        if (!HttpServerResponse.isServerResponse(defect)) return runAnswer(target, start, defect)
        answer(defect)
        Effect.runFork(logServerError(start.trace, defect.status))
      }
      // Called back by the gate and the driver, outside any fiber: an exception here is a defect answered as one, never the process's.
      const guarded = (step: () => void, release?: () => void) => {
        try {
          step()
        } catch (error) {
          settled = true
          release?.()
          settle(Exit.die(error))
        }
      }
      const leave = gate.enter(
        principal.tenantId,
        (release) =>
          guarded(() => {
            const cancel = read((exit) => {
              settled = true
              release()
              guarded(() => settle(exit))
            })
            stop = () => {
              release()
              cancel()
            }
          }, release),
        (busy) => {
          settled = true
          guarded(() => answer(errorResponse(tenantBusy(busy))))
        }
      )
      stop ??= leave
      target.on("close", () => {
        if (settled) return
        settled = true
        stop?.()
      })
      return true
    }

    return (source: IncomingMessage, target: ServerResponse, platform: () => void): boolean => {
      const authorization = source.headers.authorization
      const method = source.method ?? "GET"
      const url = source.url ?? "/"
      const route = authorization === undefined ? undefined : lean.match(method, url)
      if (route === undefined || authorization === undefined) return false
      // Node gives arrays for set-cookie only, which no request carries that these routes read.
      const headers = source.headers as Readonly<Record<string, string | undefined>>
      const start = startRequest({ method, headers }, url, () => publicUrl(services.config, { headers }))
      if (start.refused) {
        write(target, start.refused)
        return true
      }
      const request: ApiRequest = { method, url, headers, body: (maxBytes) => nodeBody(source, maxBytes) }
      if (readNow(route, request, authorization, start, target)) return true
      const handOver = Effect.sync((): typeof HANDED_OVER => {
        platform()
        return HANDED_OVER
      })
      runAnswer(target, start, lean.answer(services, route, request, authorization, start.trace, (response) => finishAnswer(start, response), handOver))
      return true
    }
  })

/** How long a stopping host waits for the requests in flight before it ends the connections left. */
const SHUTDOWN_GRACE_MS = 5_000

/**
 * The Node server for `NodeHttpServer.layer`, and the layer that lets the lean routes answer its
 * requests directly once the core services are there (none while a tracer is installed).
 */
export const makeDirectServer = (registry: ReadonlyArray<AnyResource>, shutdownGraceMs = SHUTDOWN_GRACE_MS) => {
  let direct: ((source: IncomingMessage, target: ServerResponse, platform: () => void) => boolean) | undefined
  const create = (): Server => {
    const server = createServer()
    // Node's `close` waits for every connection to end, and a client that never finishes sending its
    // request kept a stopping host alive for as long as it liked: after the grace, the rest are ended.
    const close = server.close.bind(server)
    server.close = ((callback?: (error?: Error) => void) => {
      const cut = setTimeout(() => server.closeAllConnections(), shutdownGraceMs).unref()
      return close((error) => {
        clearTimeout(cut)
        callback?.(error)
      })
    }) as Server["close"]
    const emit = server.emit.bind(server) as (event: string | symbol, ...args: Array<unknown>) => boolean
    // Every request is an emit of `request`: answered here first, else emitted to the platform's listener.
    server.emit = ((event: string | symbol, ...args: Array<unknown>): boolean => {
      if (event !== "request" || direct === undefined) return emit(event, ...args)
      const [source, target] = args as [IncomingMessage, ServerResponse]
      return direct(source, target, () => emit(event, ...args)) || emit(event, ...args)
    }) as Server["emit"]
    return server
  }
  const layer = Layer.scopedDiscard(
    Effect.gen(function* () {
      if (yield* tracerInstalled) return
      direct = yield* directAnswers(registry)
      yield* Effect.addFinalizer(() => Effect.sync(() => {
        direct = undefined
      }))
    })
  )
  return { create, layer }
}
