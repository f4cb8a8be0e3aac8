import { canonicalJson, IDEMPOTENCY_KEY_MAX_LENGTH, type IdempotencyKeys, IdempotentWrite, type Principal, type StoredResponse } from "@erp/core"
import { Cause, Effect, Exit, Option } from "effect"
import { HttpServerResponse } from "effect/http"
import { createHash } from "node:crypto"
import type { ApiRequest } from "./api-request.js"
import { type ApiError, apiError, errorResponse } from "./errors.js"

/** Printable ASCII without spaces: what clients put in keys (UUIDs, ULIDs, their own ids). */
const KEY = new RegExp(`^[\\x21-\\x7E]{1,${IDEMPOTENCY_KEY_MAX_LENGTH}}$`)

/** Headers of an answer kept for replay: those that describe the body. */
const KEPT_HEADERS = ["etag", "content-type", "location"] as const

/** The request a key stands for: method, path (query included) and body. */
export const requestFingerprint = (method: string, url: string, body: unknown): string => {
  const hash = createHash("sha256").update(`${method}\n${url}\n`)
  // JSON with sorted keys: the same body sent with other spacing or key order is the same request. Bytes (a file) hash as they are.
  hash.update(body instanceof Uint8Array ? body : canonicalJson(body))
  return hash.digest("hex")
}

/** What is kept of an answer; `undefined` for the answers a retry should not get back (5xx, 429: a retry may fare better). */
const keptOf = (response: HttpServerResponse.HttpServerResponse): StoredResponse | undefined => {
  if (response.status >= 500 || response.status === 429) return undefined
  const body = response.body
  const text = body._tag === "Uint8Array" ? body.text ?? Buffer.from(body.body).toString("utf8") : body._tag === "Empty" ? null : undefined
  if (text === undefined) return undefined
  const headers: Record<string, string> = {}
  for (const name of KEPT_HEADERS) {
    const value = name === "content-type" && body._tag === "Uint8Array" ? body.contentType : response.headers[name]
    if (value) headers[name] = value
  }
  return { status: response.status, headers, body: text }
}

const replay = (stored: StoredResponse) => {
  const headers = { ...stored.headers, "idempotent-replayed": "true" }
  return stored.body === null
    ? HttpServerResponse.empty({ status: stored.status, headers })
    : HttpServerResponse.text(stored.body, { status: stored.status, headers, contentType: stored.headers["content-type"] ?? "application/json" })
}

/**
 * Runs a POST or PATCH at most once per `Idempotency-Key` (Stripe's semantics): the first
 * answer, success or 4xx, is kept 24 hours per tenant and key; the same request again gets
 * it back with `Idempotent-Replayed: true`; another request with the key is 422
 * `IDEMPOTENCY_KEY_REUSED`; the same one while the first still runs is 409
 * `IDEMPOTENCY_KEY_IN_USE`. A 5xx, a 429 or a crash keeps nothing, so a retry runs again, unless
 * the write had committed: then 409 `IDEMPOTENCY_KEY_COMMITTED` names the record it wrote.
 * Without the header the request simply runs.
 */
export const idempotent = <R>(
  keys: IdempotencyKeys["Service"],
  caller: Pick<Principal, "tenantId">,
  request: Pick<ApiRequest, "method" | "url" | "headers">,
  body: unknown,
  run: Effect.Effect<HttpServerResponse.HttpServerResponse, ApiError, R>
) => {
  const key = request.headers["idempotency-key"]
  return key === undefined ? run : runOnce(keys, caller.tenantId, request, body, run, key)
}

const runOnce = <R>(
  keys: IdempotencyKeys["Service"],
  tenantId: string,
  request: Pick<ApiRequest, "method" | "url" | "headers">,
  body: unknown,
  run: Effect.Effect<HttpServerResponse.HttpServerResponse, ApiError, R>,
  key: string
) =>
  Effect.gen(function* () {
    if (!KEY.test(key)) {
      return yield* Effect.fail(apiError(400, `Idempotency-Key must be 1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} printable ASCII characters without spaces (a UUID is a good key)`, "INVALID_IDEMPOTENCY_KEY"))
    }
    const fingerprint = requestFingerprint(request.method, request.url, body)
    const claim = yield* keys.claim(tenantId, key, fingerprint)
    switch (claim.kind) {
      case "replay":
        return replay(claim.response)
      case "reused":
        return yield* Effect.fail(apiError(422, "This Idempotency-Key was already used for another request (method, path or body differ); use a new key for a new request", "IDEMPOTENCY_KEY_REUSED"))
      case "in_use":
        return yield* Effect.fail(apiError(409, "A request with this Idempotency-Key is still running; retry once it has finished to get its answer", "IDEMPOTENCY_KEY_IN_USE"))
      case "committed":
        return yield* Effect.fail(apiError(
          409,
          `The request with this Idempotency-Key was carried out, but its answer was lost when the host stopped; read ${claim.record ? `${claim.record.resource}/${claim.record.id}` : "the record"} to see the result, and do not send it again with a new key`,
          "IDEMPOTENCY_KEY_COMMITTED"
        ))
    }
    const keep = (response: HttpServerResponse.HttpServerResponse) => {
      const kept = keptOf(response)
      return kept ? keys.complete(tenantId, key, fingerprint, kept) : keys.release(tenantId, key, fingerprint)
    }
    // Interrupted, died or failed past 4xx: the key is given up, so the retry runs the request,
    // unless its write had committed (the unit of work marks the key in the write's transaction).
    return yield* Effect.provideService(run, IdempotentWrite, { tenantId, key, fingerprint }).pipe(
      Effect.onExit((exit) =>
        Exit.match(exit, {
          onSuccess: keep,
          onFailure: (cause) => {
            const failure = Option.getOrUndefined(Cause.findErrorOption(cause))
            // A refusal of the handler is kept as the answer it becomes (the spec's error body).
            return failure && !Cause.hasInterrupts(cause) ? keep(errorResponse(failure)) : keys.release(tenantId, key, fingerprint)
          }
        })
      )
    )
  })
