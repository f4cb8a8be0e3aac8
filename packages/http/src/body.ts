import { Effect, Stream } from "effect"
import type { HttpServerRequest } from "effect/http"
import { IncomingMessage } from "node:http"
import type { ApiRequest } from "./api-request.js"
import { apiError } from "./errors.js"

/** Largest JSON body accepted (the spec leaves it open; 1 MiB fits any single record). */
export const MAX_BODY_BYTES = 1024 * 1024

/**
 * How much of a body over its limit is still read (and thrown away) so the client, still
 * sending, receives the 413 instead of a reset connection; past this the connection is cut.
 */
export const DRAIN_LIMIT_BYTES = 16 * 1024 * 1024

/**
 * A body as bytes, `undefined` when it is over `maxBytes` (declared or, chunked, as it arrives).
 * The rest of a body over the limit is read and discarded up to `DRAIN_LIMIT_BYTES`.
 */
export const readBounded = (request: HttpServerRequest.HttpServerRequest, maxBytes: number) =>
  Effect.gen(function* () {
    if (Number(request.headers["content-length"] ?? "0") > DRAIN_LIMIT_BYTES) return undefined
    // Node holds a body to its declared length: one within the limit is read whole, without a stream of chunks.
    if (request.source instanceof IncomingMessage && request.headers["transfer-encoding"] === undefined && Number(request.headers["content-length"] ?? "0") <= maxBytes) {
      const bytes = yield* request.arrayBuffer
      return bytes.byteLength > maxBytes ? undefined : Buffer.from(bytes)
    }
    const { parts, size } = yield* request.stream.pipe(
      Stream.mapAccum(() => 0, (seen, chunk: Uint8Array) => {
        const total = seen + chunk.byteLength
        return [total, [[total, chunk] as const]] as const
      }),
      Stream.takeUntil(([seen]) => seen > DRAIN_LIMIT_BYTES),
      Stream.runFold(() => ({ parts: [] as Array<Uint8Array>, size: 0 }), (state, [seen, chunk]) => {
        if (seen <= maxBytes) state.parts.push(chunk)
        state.size = seen
        return state
      })
    )
    return size > maxBytes ? undefined : Buffer.concat(parts)
  })

/** The platform's request as the handlers read it. */
export const apiRequestOf = (request: HttpServerRequest.HttpServerRequest): ApiRequest => ({
  method: request.method,
  url: request.url,
  headers: request.headers,
  body: (maxBytes) => readBounded(request, maxBytes)
})

/** Reads a JSON body: 413 over the limit, 400 when it is not JSON. */
export const readJsonBody = (request: ApiRequest) =>
  Effect.gen(function* () {
    const bytes = yield* request.body(MAX_BODY_BYTES).pipe(
      Effect.mapError(() => apiError(400, "The request body could not be read", "INVALID_BODY"))
    )
    if (bytes === undefined) return yield* Effect.fail(apiError(413, `The request body exceeds ${MAX_BODY_BYTES} bytes`, "PAYLOAD_TOO_LARGE"))
    const text = bytes.toString("utf8")
    if (text.trim() === "") return yield* Effect.fail(apiError(400, "The request body must be a JSON object", "INVALID_BODY"))
    return yield* Effect.try({
      try: () => JSON.parse(text) as unknown,
      catch: () => apiError(400, "The request body is not valid JSON", "INVALID_JSON")
    })
  })
