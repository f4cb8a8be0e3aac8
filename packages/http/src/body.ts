import { HttpIncomingMessage, type HttpServerRequest } from "@effect/platform"
import { Effect, Option } from "effect"
import { apiError } from "./errors.js"

/** Largest JSON body accepted (the spec leaves it open; 1 MiB fits any single record). */
export const MAX_BODY_BYTES = 1024 * 1024

/** Reads a JSON body: 413 over the limit, 400 when it is not JSON. */
export const readJsonBody = (request: HttpServerRequest.HttpServerRequest) =>
  Effect.gen(function* () {
    const declared = Number(request.headers["content-length"] ?? "0")
    const tooLarge = apiError(413, `The request body exceeds ${MAX_BODY_BYTES} bytes`, "PAYLOAD_TOO_LARGE")
    if (declared > MAX_BODY_BYTES) return yield* Effect.fail(tooLarge)
    const text = yield* request.text.pipe(
      HttpIncomingMessage.withMaxBodySize(Option.some(MAX_BODY_BYTES)),
      Effect.mapError((error) => (String(error.cause).includes("maxBytes") ? tooLarge : apiError(400, "The request body could not be read", "INVALID_BODY")))
    )
    if (Buffer.byteLength(text) > MAX_BODY_BYTES) return yield* Effect.fail(tooLarge)
    if (text.trim() === "") return yield* Effect.fail(apiError(400, "The request body must be a JSON object", "INVALID_BODY"))
    return yield* Effect.try({
      try: () => JSON.parse(text) as unknown,
      catch: () => apiError(400, "The request body is not valid JSON", "INVALID_JSON")
    })
  })

/** Reads a file body (an OFX statement) as bytes: 413 over `maxBytes`. */
export const readRawBody = (request: HttpServerRequest.HttpServerRequest, maxBytes: number) =>
  Effect.gen(function* () {
    const tooLarge = apiError(413, `The request body exceeds ${maxBytes} bytes`, "PAYLOAD_TOO_LARGE")
    if (Number(request.headers["content-length"] ?? "0") > maxBytes) return yield* Effect.fail(tooLarge)
    const buffer = yield* request.arrayBuffer.pipe(
      HttpIncomingMessage.withMaxBodySize(Option.some(maxBytes)),
      Effect.mapError((error) => (String(error.cause).includes("maxBytes") ? tooLarge : apiError(400, "The request body could not be read", "INVALID_BODY")))
    )
    if (buffer.byteLength > maxBytes) return yield* Effect.fail(tooLarge)
    return new Uint8Array(buffer)
  })
