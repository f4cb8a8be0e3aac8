import { Result } from "effect"
import { type InvalidRequest, invalid } from "../errors.js"
import { type CursorPosition, decodeCursor, hashQuery } from "./cursor.js"
import { checkFilterLimits, type FilterNode, parseBracketFilters, parseJsonFilter } from "./filter.js"
import { textProblem } from "./untrusted-input.js"
import type { FilterField } from "./fields.js"

export type SortOrder = "asc" | "desc"

/** Query string as ordered pairs: repeated keys stay repeated. */
export type QueryParams = ReadonlyArray<readonly [string, string]>

export const DEFAULT_LIMIT = 20
export const MAX_LIMIT = 100
export const MAX_SEARCH_LENGTH = 200
/** Each word is a prefix match over the search index; more words only cost the store. */
export const MAX_SEARCH_WORDS = 16

/** The parameters every list takes (spec "Common list parameters"). */
export const COMMON_LIST_PARAMETERS = ["cursor", "limit", "search", "with_deleted", "include_payload_search", "sort", "filter"] as const

export interface ListQuery {
  readonly limit: number
  readonly sort: { readonly field: string; readonly order: SortOrder }
  readonly filter: FilterNode | undefined
  /** Echo for `meta.filters`. */
  readonly filtersEcho: Readonly<Record<string, unknown>>
  readonly search: string | undefined
  readonly includePayloadSearch: boolean
  readonly withDeleted: boolean
  readonly position: CursorPosition | undefined
  /** Hash binding cursors to this query. */
  readonly queryHash: string
}

/** What a list is allowed to do: its fields, sort, and (for some catalogs) parameters it takes besides filters. */
export interface ListShape {
  readonly filters: Readonly<Record<string, FilterField>>
  readonly defaultSort: { readonly field: string; readonly order: SortOrder }
  readonly searchable: boolean
  readonly payloadSearchable: boolean
  /** Extra parameters the caller handles itself (e.g. `state_id` on cities); not filters. */
  readonly extraParameters?: ReadonlyArray<string>
}

export const parseBoolean = (name: string, value: string | undefined): Result.Result<boolean, InvalidRequest> => {
  if (value === undefined) return Result.succeed(false)
  if (value === "true") return Result.succeed(true)
  if (value === "false") return Result.succeed(false)
  return Result.fail(invalid(`${name} must be true or false, got "${value}"`, "INVALID_PARAMETER"))
}

const single = (params: QueryParams, name: string): Result.Result<string | undefined, InvalidRequest> => {
  const values = params.filter(([key]) => key === name).map(([, value]) => value)
  if (values.length > 1) return Result.fail(invalid(`${name} may be given only once`, "INVALID_PARAMETER"))
  return Result.succeed(values[0])
}

const parseLimit = (value: string | undefined): Result.Result<number, InvalidRequest> => {
  if (value === undefined) return Result.succeed(DEFAULT_LIMIT)
  const limit = /^\d+$/.test(value) ? Number(value) : Number.NaN
  return Number.isInteger(limit) && limit >= 1 && limit <= MAX_LIMIT
    ? Result.succeed(limit)
    : Result.fail(invalid(`limit must be an integer from 1 to ${MAX_LIMIT}, got "${value}"`, "INVALID_PARAMETER"))
}

const parseSort = (shape: ListShape, value: string | undefined): Result.Result<ListQuery["sort"], InvalidRequest> => {
  if (value === undefined) return Result.succeed(shape.defaultSort)
  const [field, order = "asc", extra] = value.split(":")
  const sortable = Object.entries(shape.filters).filter(([, spec]) => spec.sortable).map(([name]) => name)
  if (extra !== undefined || (order !== "asc" && order !== "desc")) {
    return Result.fail(invalid(`sort must look like field:asc or field:desc, got "${value}"`, "INVALID_SORT"))
  }
  if (!sortable.includes(field)) {
    return Result.fail(invalid(`Cannot sort by "${field}". Sortable fields: ${sortable.sort().join(", ")}`, "INVALID_SORT"))
  }
  return Result.succeed({ field, order })
}

/** Reads and validates a list request; the cursor is checked against the query it claims to continue. */
export const parseListQuery = (
  shape: ListShape,
  params: QueryParams,
  cursorSecret: Buffer,
  /** The caller's visibility: ANDed into the filter, not echoed, part of the cursor's query. */
  scope?: FilterNode
): Result.Result<ListQuery, InvalidRequest> =>
  Result.gen(function* () {
    const reserved = new Set<string>([...COMMON_LIST_PARAMETERS, ...(shape.extraParameters ?? [])])
    const limit = yield* parseLimit(yield* single(params, "limit"))
    const sort = yield* parseSort(shape, yield* single(params, "sort"))
    const withDeleted = yield* parseBoolean("with_deleted", yield* single(params, "with_deleted"))
    const includePayloadSearch = yield* parseBoolean("include_payload_search", yield* single(params, "include_payload_search"))
    const rawSearch = yield* single(params, "search")
    const search = rawSearch?.trim() ? rawSearch.trim() : undefined
    if (search && search.length > MAX_SEARCH_LENGTH) {
      return yield* Result.fail(invalid(`search must be at most ${MAX_SEARCH_LENGTH} characters`, "INVALID_PARAMETER"))
    }
    if (search && search.split(/\s+/).length > MAX_SEARCH_WORDS) {
      return yield* Result.fail(invalid(`search must be at most ${MAX_SEARCH_WORDS} words`, "INVALID_PARAMETER"))
    }
    if (search) {
      const problem = textProblem(search)
      if (problem) return yield* Result.fail(invalid(`search ${problem}`, "INVALID_PARAMETER", { search: [problem] }))
    }
    if (search && !shape.searchable) {
      return yield* Result.fail(invalid("This list does not support search", "INVALID_PARAMETER"))
    }
    const bracketPairs = params.filter(([key]) => !reserved.has(key))
    const bracket = yield* parseBracketFilters(shape.filters, bracketPairs)
    const jsonText = yield* single(params, "filter")
    const json = jsonText === undefined ? undefined : yield* parseJsonFilter(shape.filters, jsonText)
    yield* checkFilterLimits([...bracket, ...(json ? [json] : [])])
    const conditions = [...(scope ? [scope] : []), ...bracket, ...(json ? [json] : [])]
    const filter: FilterNode | undefined = conditions.length === 0
      ? undefined
      : { kind: "group", logic: "and", conditions }

    const filtersEcho: Record<string, unknown> = {}
    for (const node of bracket) {
      if (node.kind !== "condition") continue
      const ops = (filtersEcho[node.field] ??= {}) as Record<string, unknown>
      const previous = ops[node.op]
      ops[node.op] = previous === undefined ? node.value : ([] as Array<unknown>).concat(previous, node.value)
    }
    if (jsonText !== undefined) filtersEcho.filter = JSON.parse(jsonText)

    const queryHash = hashQuery({
      filter: filter ?? null,
      sort,
      search: search ?? null,
      withDeleted,
      includePayloadSearch
    })
    const cursorText = yield* single(params, "cursor")
    const position = cursorText === undefined || cursorText === ""
      ? undefined
      : yield* decodeCursor(cursorSecret, cursorText, queryHash)
    return { limit, sort, filter, filtersEcho, search, includePayloadSearch, withDeleted, position, queryHash }
  })
