import type { HttpServerRequest } from "@effect/platform"
import { HttpServerResponse } from "@effect/platform"
import { type AnyResource, matchesAny, type Precondition, parseEntityTags, recordEtag, type Row } from "@erp/core"
import { Effect } from "effect"
import { apiError } from "./errors.js"

/**
 * Conditional requests (RFC 9110 §13) on records: every record answer carries a strong
 * `ETag`; `If-Match` makes a write conditional on it (checked by the engine under the
 * row's lock), `If-None-Match` on a read answers 304 when the client's copy is current.
 */

/** The record's tag, when the body is one record (a create that made several answers `{ data }` and has none). */
export const etagOfBody = (resource: AnyResource, body: unknown): string | undefined =>
  body !== null && typeof body === "object" && !Array.isArray(body) && "id" in body ? recordEtag(resource, body as Row) : undefined

/** The JSON answer of one record, with its ETag. */
export const recordResponse = (resource: AnyResource, body: unknown, status = 200) => {
  const etag = etagOfBody(resource, body)
  return HttpServerResponse.unsafeJson(body, { status, ...(etag ? { headers: { etag } } : {}) })
}

const tagsOf = (request: HttpServerRequest.HttpServerRequest, header: "if-match" | "if-none-match") => {
  const value = request.headers[header]
  if (value === undefined) return Effect.succeed(undefined)
  const tags = parseEntityTags(value)
  return tags.length === 0
    ? Effect.fail(apiError(400, `${header === "if-match" ? "If-Match" : "If-None-Match"} must be * or a list of quoted entity tags (as the ETag header gives them), got ${JSON.stringify(value)}`, "INVALID_HEADER"))
    : Effect.succeed(tags)
}

/** The precondition `If-Match` states, for the engine to check inside the write. */
export const preconditionOf = (request: HttpServerRequest.HttpServerRequest): Effect.Effect<Precondition | undefined, ReturnType<typeof apiError>> =>
  Effect.map(tagsOf(request, "if-match"), (tags) => (tags ? { ifMatch: tags } : undefined))

/**
 * The answer to a record read: 304 (no body, the tag repeated) when `If-None-Match` names
 * the current tag (weak comparison, as RFC 9110 asks for GET), else the record.
 */
export const readResponse = (request: HttpServerRequest.HttpServerRequest, resource: AnyResource, body: unknown) =>
  Effect.map(tagsOf(request, "if-none-match"), (tags) => {
    const etag = etagOfBody(resource, body)
    if (etag && tags && matchesAny(tags.map((tag) => tag.replace(/^W\//, "")), etag)) {
      return HttpServerResponse.empty({ status: 304, headers: { etag } })
    }
    return recordResponse(resource, body)
  })
