import { Context, Effect, Layer } from "effect"
import { HttpServerRequest } from "effect/http"
import { HttpApiError, HttpApiMiddleware } from "effect/http-api"
import { MAX_BODY_BYTES, readBounded } from "./body.js"
import { BadRequest, errorBody, PayloadTooLarge } from "./errors.js"

/** The most bytes an endpoint's body may have: 1 MiB of JSON unless the endpoint declares its own (a file upload). */
export const BodyLimit = Context.Reference<number>("erp/http/BodyLimit", { defaultValue: () => MAX_BODY_BYTES })

/**
 * Every resource operation's body policy, around the builder's payload decoding: the body is
 * read with its endpoint's bound (413 over it, the rest drained so the client hears the answer),
 * a JSON endpoint refuses an empty body and one that is not JSON (400, the spec's body), and
 * the body is read as the endpoint's declared type whatever `Content-Type` the client sent,
 * as `curl -d` and many integration platforms send JSON under another one.
 */
export class RequestBody extends HttpApiMiddleware.Service<RequestBody>()("erp/http/RequestBody", {
  error: [BadRequest, PayloadTooLarge]
}) {}

const notRead = () => new BadRequest(errorBody(400, "The request body could not be read", "INVALID_BODY"))
const tooLarge = (limit: number) => new PayloadTooLarge(errorBody(413, `The request body exceeds ${limit} bytes`, "PAYLOAD_TOO_LARGE"))
const empty = () => new BadRequest(errorBody(400, "The request body must be a JSON object", "INVALID_BODY"))
const notJson = () => new BadRequest(errorBody(400, "The request body is not valid JSON", "INVALID_JSON"))

/** JSON's whitespace: a body of nothing else is no body. */
const isBlank = (bytes: Uint8Array) => bytes.every((byte) => byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09)

/** Headers the buffered body makes untrue, or that the client chose and the endpoint overrides. */
const REPLACED_HEADERS = new Set(["content-length", "transfer-encoding", "content-encoding", "content-type"])

/** The request again, its body the bytes already read and its type the one the endpoint declares. */
const withBody = (request: HttpServerRequest.HttpServerRequest, bytes: Uint8Array, contentType: string) => {
  const headers = new Headers()
  for (const [name, value] of Object.entries(request.headers)) if (!REPLACED_HEADERS.has(name)) headers.set(name, value)
  headers.set("content-type", contentType)
  return HttpServerRequest.fromWeb(new Request(new URL(request.url, "http://erp.invalid"), { method: request.method, headers, body: bytes }))
}

export const layerRequestBody = Layer.succeed(RequestBody, (effect, { endpoint }) => {
  const contentType = endpoint.payload.keys().next().value
  if (contentType === undefined) return effect
  const limit = Context.get(endpoint.annotations, BodyLimit)
  const json = contentType === "application/json"
  return Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const bytes = yield* readBounded(request, limit).pipe(Effect.mapError(notRead))
    if (bytes === undefined) return yield* Effect.fail(tooLarge(limit))
    if (json && isBlank(bytes)) return yield* Effect.fail(empty())
    return yield* effect.pipe(
      Effect.provideService(HttpServerRequest.HttpServerRequest, withBody(request, bytes, contentType)),
      // The payload's schema takes any JSON value (the use case decodes it), so a payload failure is a body that is not JSON.
      Effect.catchIf((error) => HttpApiError.HttpApiSchemaError.is(error) && error.kind === "Payload", () => Effect.fail(notJson()))
    )
  })
})
