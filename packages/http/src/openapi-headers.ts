import { IDEMPOTENCY_KEY_MAX_LENGTH } from "@erp/core"

/**
 * The headers of idempotency, conditional requests and rate limits in the OpenAPI
 * document. The host applies them to every route generically, so they are added to
 * the generated document in one pass rather than declared per endpoint.
 */

type Json = Readonly<Record<string, unknown>>

/** A response of the generated document, as far as this pass reads it. */
interface Response extends Json {
  readonly headers?: Json
}

/** An operation that needs credentials (a non-empty `security`), as far as this pass reads it. */
interface Operation extends Json {
  readonly security: ReadonlyArray<unknown>
  readonly responses?: Readonly<Record<string, Response>>
  readonly parameters?: ReadonlyArray<unknown>
}

/** The generated document, as far as this pass reads it. */
interface Document extends Json {
  readonly paths?: Readonly<Record<string, Json>>
  readonly components?: { readonly headers?: Json; readonly parameters?: Json }
}

const isAuthenticated = (operation: unknown): operation is Operation =>
  typeof operation === "object" && operation !== null && "security" in operation && Array.isArray(operation.security) && operation.security.length > 0

const header = (description: string, schema: Json = { type: "integer" }) => ({ description, schema })

const HEADERS = {
  RateLimitLimit: header("Requests a minute this credential may send."),
  RateLimitRemaining: header("Requests left in the current minute window."),
  RateLimitReset: header("Seconds until the current minute window ends (on a burst refusal: until a request is allowed again)."),
  RetryAfter: header("Seconds to wait before retrying."),
  ETag: header("Strong entity tag of the record; changes with every write. Send it back in If-Match or If-None-Match.", { type: "string" }),
  IdempotentReplayed: header("`true` when this is the kept answer of an earlier request with the same Idempotency-Key.", { type: "string", enum: ["true"] })
} as const

const PARAMETERS = {
  IdempotencyKey: {
    name: "Idempotency-Key",
    in: "header",
    required: false,
    description: "Makes a retry safe: the first answer is kept 24 hours per tenant and key and replayed for the same request; another request with the key is 422 IDEMPOTENCY_KEY_REUSED, the same one while the first runs 409 IDEMPOTENCY_KEY_IN_USE.",
    schema: { type: "string", minLength: 1, maxLength: IDEMPOTENCY_KEY_MAX_LENGTH }
  },
  IfMatch: {
    name: "If-Match",
    in: "header",
    required: false,
    description: "Write only if the record's current ETag is one of these (or `*`); else 412 PRECONDITION_FAILED and nothing changes.",
    schema: { type: "string" }
  },
  IfNoneMatch: {
    name: "If-None-Match",
    in: "header",
    required: false,
    description: "Answer 304 with no body when the record's current ETag is one of these.",
    schema: { type: "string" }
  }
} as const

const ref = (kind: "headers" | "parameters", name: string) => ({ $ref: `#/components/${kind}/${name}` })

const rateLimitHeaders = {
  "RateLimit-Limit": ref("headers", "RateLimitLimit"),
  "RateLimit-Remaining": ref("headers", "RateLimitRemaining"),
  "RateLimit-Reset": ref("headers", "RateLimitReset")
}

const addHeaders = (response: Response, headers: Json): Response => ({ ...response, headers: { ...response.headers, ...headers } })

/** The document with the headers of every authenticated operation: rate limits everywhere, ETags on records, keys on writes. */
export const withIntegratorHeaders = (spec: Document): Document => {
  const paths: Record<string, Json> = {}
  for (const [path, item] of Object.entries(spec.paths ?? {})) {
    const operations: Record<string, unknown> = {}
    for (const [method, operation] of Object.entries(item)) {
      if (!isAuthenticated(operation)) {
        operations[method] = operation
        continue
      }
      const onRecord = /\/\{id\}$/.test(path)
      const isCreate = method === "post" && !path.includes("{id}")
      const isWrite = method === "post" || method === "patch"
      const conditional = onRecord ? method === "patch" || method === "delete" : (method === "post" || method === "delete") && path.includes("{id}/")
      const responses: Record<string, Response> = {}
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        let out = addHeaders(response, rateLimitHeaders)
        const success = status.startsWith("2")
        if (status === "429") out = addHeaders(out, { "Retry-After": ref("headers", "RetryAfter") })
        if (success && ((onRecord && method !== "delete") || isCreate)) out = addHeaders(out, { ETag: ref("headers", "ETag") })
        if (isWrite) out = addHeaders(out, { "Idempotent-Replayed": ref("headers", "IdempotentReplayed") })
        responses[status] = out
      }
      if (onRecord && method === "get") {
        responses["304"] = { description: "Not modified: If-None-Match names the record's current ETag", headers: { ETag: ref("headers", "ETag"), ...rateLimitHeaders } }
      }
      const parameters = [
        ...(operation.parameters ?? []),
        ...(isWrite ? [ref("parameters", "IdempotencyKey")] : []),
        ...(conditional ? [ref("parameters", "IfMatch")] : []),
        ...(onRecord && method === "get" ? [ref("parameters", "IfNoneMatch")] : [])
      ]
      operations[method] = { ...operation, parameters, responses: Object.fromEntries(Object.entries(responses).sort(([a], [b]) => a.localeCompare(b))) }
    }
    paths[path] = operations
  }
  return {
    ...spec,
    paths,
    components: { ...spec.components, headers: { ...spec.components?.headers, ...HEADERS }, parameters: { ...spec.components?.parameters, ...PARAMETERS } }
  }
}
