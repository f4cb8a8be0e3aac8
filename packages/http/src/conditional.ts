import { answerEtag, type AnyResource, matchesAny, type Precondition, parseEntityTags, type Row } from "@erp/core"
import { Effect } from "effect"
import { HttpServerResponse } from "effect/http"
import type { ApiRequest } from "./api-request.js"
import { apiError } from "./errors.js"

/**
 * Conditional requests (RFC 9110 §13) on records: every record answer carries a strong
 * `ETag`; `If-Match` makes a write conditional on it (checked by the engine under the
 * row's lock), `If-None-Match` on a read answers 304 when the client's copy is current.
 */

/** One record (a create that made several answers `{ data }`, which has no tag). */
const isRecord = (body: unknown): body is Row => body !== null && typeof body === "object" && !Array.isArray(body) && "id" in body

/** A JSON answer's text, and its tag when it is one record's: the text is encoded once, for the body and the tag alike. */
const answerOf = (resource: AnyResource, body: unknown) => {
  const text = JSON.stringify(body)
  return { text, etag: isRecord(body) ? answerEtag(resource, body, text) : undefined }
}

const jsonAnswer = (answer: ReturnType<typeof answerOf>, status: number) =>
  HttpServerResponse.text(answer.text, { status, contentType: "application/json", ...(answer.etag ? { headers: { etag: answer.etag } } : {}) })

/** The JSON answer of one record, with its ETag. */
export const recordResponse = (resource: AnyResource, body: unknown, status = 200) => jsonAnswer(answerOf(resource, body), status)

/** The entity tags a conditional header lists (undefined without the header), or the 400 for a malformed one. */
const tagsOf = (request: Pick<ApiRequest, "headers">, header: "if-match" | "if-none-match"): ReadonlyArray<string> | undefined | ReturnType<typeof apiError> => {
  const value = request.headers[header]
  if (value === undefined) return undefined
  const tags = parseEntityTags(value)
  return tags.length === 0
    ? apiError(400, `${header === "if-match" ? "If-Match" : "If-None-Match"} must be * or a list of quoted entity tags (as the ETag header gives them), got ${JSON.stringify(value)}`, "INVALID_HEADER")
    : tags
}

const isTags = (tags: ReturnType<typeof tagsOf>): tags is ReadonlyArray<string> | undefined => tags === undefined || Array.isArray(tags)

/** The precondition `If-Match` states, for the engine to check inside the write. */
export const preconditionOf = (request: Pick<ApiRequest, "headers">): Effect.Effect<Precondition | undefined, ReturnType<typeof apiError>> => {
  const tags = tagsOf(request, "if-match")
  return isTags(tags) ? Effect.succeed(tags ? { ifMatch: tags } : undefined) : Effect.fail(tags)
}

/**
 * The answer to a record read: 304 (no body, the tag repeated) when `If-None-Match` names
 * the current tag (weak comparison, as RFC 9110 asks for GET), else the record; or the 400 of
 * a malformed `If-None-Match`.
 */
export const readResponse = (request: Pick<ApiRequest, "headers">, resource: AnyResource, body: unknown): Effect.Effect<HttpServerResponse.HttpServerResponse, ReturnType<typeof apiError>> => {
  const tags = tagsOf(request, "if-none-match")
  if (!isTags(tags)) return Effect.fail(tags)
  const answer = answerOf(resource, body)
  const etag = answer.etag
  if (etag && tags && matchesAny(tags.map((tag) => tag.replace(/^W\//, "")), etag)) return Effect.succeed(HttpServerResponse.empty({ status: 304, headers: { etag } }))
  return Effect.succeed(jsonAnswer(answer, 200))
}
