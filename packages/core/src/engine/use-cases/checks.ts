import { Effect, Option } from "effect"
import { invalid, type InvalidRequest, NotFound } from "../../errors.js"
import { INT4_MAX } from "../fields.js"
import { type FilterNode, isUuid } from "../filter.js"
import { type ListShape, parseBoolean, type QueryParams } from "../list-query.js"
import { type AnyResource, isIntegerId, isSoftDeleted, type Row } from "../resource.js"
import { checkUntrustedParams } from "../untrusted-input.js"

/*
 * What a request is checked for before anything is read or written: ids, parameters, required
 * filters, whether the resource takes writes. Each failure is the 400 the caller reads.
 */

export const listShape = (resource: AnyResource): ListShape => ({
  filters: resource.filters,
  defaultSort: resource.defaultSort,
  searchable: resource.search !== undefined,
  payloadSearchable: resource.search?.payload ?? false
})

export const notFound = (resource: Pick<AnyResource, "title" | "notFoundCode">) =>
  new NotFound({ message: `${resource.title} not found`, code: resource.notFoundCode })

/** The UUID as stored (lower case), or why it is none. */
const checkUuid = (id: string, name = "id"): string | InvalidRequest =>
  isUuid(id) ? id.toLowerCase() : invalid(`${name} must be a UUID, got "${id}"`, "INVALID_ID")

/** The id as stored, or why it is none: the resource's id type decides what a well-formed id is. */
export const checkId = (resource: AnyResource, id: string): string | InvalidRequest =>
  isIntegerId(resource)
    ? /^\d{1,10}$/.test(id) && Number(id) <= INT4_MAX ? String(Number(id)) : invalid(`id must be a positive integer, got "${id}"`, "INVALID_ID")
    : checkUuid(id)

const asEffect = (checked: string | InvalidRequest): Effect.Effect<string, InvalidRequest> =>
  typeof checked === "string" ? Effect.succeed(checked) : Effect.fail(checked)

/** 400 for an id that is not a UUID (before any lookup). */
export const requireUuid = (id: string, name = "id") => asEffect(checkUuid(id, name))

export const requireId = (resource: AnyResource, id: string) => asEffect(checkId(resource, id))

/** NUL or a lone surrogate in any query parameter: 400 before anything reads it. */
export const untrustedParams = (params: QueryParams) => {
  const problem = checkUntrustedParams(params)
  return problem ? Effect.fail(problem) : Effect.void
}

export const and = (...nodes: ReadonlyArray<FilterNode | undefined>): FilterNode | undefined => {
  const present = nodes.filter((node): node is FilterNode => node !== undefined)
  return present.length === 0 ? undefined : present.length === 1 ? present[0] : { kind: "group", logic: "and", conditions: present }
}

/** 400 unless every required parameter is given (`field=v` or `field[eq]=v`) with a non-blank value. */
export const requireFilters = (resource: AnyResource, params: QueryParams, extra: ReadonlyArray<string> = []) => {
  const required = [...new Set([...extra, ...(resource.requiredFilters ?? [])])]
  const missing = required.filter((name) => !params.some(([key, value]) => (key === name || key === `${name}[eq]`) && value.trim() !== ""))
  return missing.length === 0
    ? Effect.void
    : Effect.fail(
      invalid(
        `${missing.join(" and ")} ${missing.length > 1 ? "are" : "is"} required for ${resource.name}`,
        "MISSING_PARAMETER",
        Object.fromEntries(missing.map((name) => [name, ["is required"]]))
      )
    )
}

const onlyParameters = (params: QueryParams, allowed: ReadonlyArray<string>) => {
  const unknown = params.find(([key]) => !allowed.includes(key))
  return unknown ? Effect.fail(invalid(`Unknown query parameter "${unknown[0]}"`, "INVALID_PARAMETER")) : Effect.void
}

export const withDeletedParam = (params: QueryParams) =>
  onlyParameters(params, ["with_deleted"]).pipe(
    Effect.andThen(Effect.fromResult(parseBoolean("with_deleted", params.find(([key]) => key === "with_deleted")?.[1])))
  )

/** Catalogs and the event log take no writes; their routes are never declared, so this guards direct core use. */
export const writable = (resource: AnyResource) =>
  resource.write
    ? Effect.succeed(resource.write)
    : Effect.fail(invalid(`${resource.name} is read-only`, "READ_ONLY"))

/** The record, or the resource's 404. */
export const found = (resource: AnyResource) =>
  Option.match({ onNone: () => Effect.fail(notFound(resource)), onSome: (row: Row) => Effect.succeed(row) })

export const softDeletable = (resource: AnyResource) =>
  isSoftDeleted(resource) ? Effect.void : Effect.fail(invalid(`${resource.name} cannot be deleted`, "READ_ONLY"))

/** Fails with `error` when there is one. */
export const unlessFailed = <E>(error: E | undefined): Effect.Effect<void, E> => (error === undefined ? Effect.void : Effect.fail(error))
