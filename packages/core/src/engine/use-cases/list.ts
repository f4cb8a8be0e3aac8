import { Effect } from "effect"
import { authorize, type Principal } from "../../auth/principal.js"
import type { Forbidden, InvalidRequest } from "../../errors.js"
import { encodeCursor } from "../cursor.js"
import { applyExpansions, parseExpand, withoutExpand } from "../expand.js"
import { type ListQuery, parseListQuery, type QueryParams } from "../list-query.js"
import type { Page } from "../page.js"
import type { KeyedAnswer, KeyedRecord, PageRequest } from "../repository.js"
import { type AnyResource, type Expansion, present } from "../resource.js"
import { traced } from "../../traced.js"
import { listShape, requireFilters, untrustedParams } from "./checks.js"
import type { EngineContext } from "./context.js"

/** Lists: a page of a list query (filters, sort, search, the caller's visibility) with its keyset cursors, and the search route. */
export const makeLists = ({ repo, secret }: EngineContext) => {
  /**
   * A list page: the query, the keyset read (`fetch`, one row more than the limit tells whether
   * there is more), the cursors; `finish` makes the answered records of the rows.
   */
  const listing = <Keyed extends { readonly key: readonly [unknown, string] }, A>(
    resource: AnyResource,
    principal: Principal,
    given: QueryParams,
    fetch: (query: ListQuery, request: PageRequest, expansions: ReadonlyArray<Expansion>) => Effect.Effect<ReadonlyArray<Keyed>>,
    finish: (rows: ReadonlyArray<Keyed>, expansions: ReadonlyArray<Expansion>) => Effect.Effect<ReadonlyArray<A>, InvalidRequest | Forbidden>
  ) =>
    Effect.gen(function* () {
      yield* untrustedParams(given)
      yield* authorize(principal, resource.permission, "read", resource.adminOnly)
      const expansions = yield* parseExpand(resource, given)
      const params = withoutExpand(given)
      yield* requireFilters(resource, params)
      // The caller's visibility narrows the filter, and is part of the query a cursor is bound to.
      const scope = resource.visibility?.list ? resource.visibility.filter(principal) : undefined
      const query = yield* Effect.fromResult(parseListQuery(listShape(resource), params, secret, scope))
      const direction = query.position?.direction ?? "next"
      const key = query.position?.key ?? null
      const rows = yield* fetch(query, { direction, key, take: query.limit + 1 }, expansions)
      const more = rows.length > query.limit
      const page = rows.slice(0, query.limit)
      if (direction === "previous") page.reverse()
      const first = page[0]
      const last = page[page.length - 1]

      // The far side of the walk needs no query: a cursor with a key was made from a page that
      // held that row, so there is a page behind it (rows deleted since may leave it empty,
      // as any keyset walk over changing data). The query's start has nothing behind it.
      const hasBehind = key !== null
      const hasNext = direction === "next" ? more : hasBehind
      const hasPrevious = direction === "previous" ? more : hasBehind

      const cursor = (position: Parameters<typeof encodeCursor>[1]) => encodeCursor(secret, position)
      const start = cursor({ direction: "next", key: null, query: query.queryHash })
      const nextCursor = !hasNext ? null : last ? cursor({ direction: "next", key: last.key, query: query.queryHash }) : start
      const previousCursor = !hasPrevious
        ? null
        : first
        ? cursor({ direction: "previous", key: first.key, query: query.queryHash })
        : cursor({ direction: "previous", key: null, query: query.queryHash })

      return {
        data: yield* finish(page, expansions),
        pagination: {
          limit: query.limit,
          has_next_page: hasNext,
          has_previous_page: hasPrevious,
          current_query_cursor: start,
          current_page_cursor: query.position ? cursor(query.position) : start,
          next_cursor: nextCursor,
          previous_cursor: previousCursor
        },
        meta: { filters: query.filtersEcho, search: query.search ?? null, sort: query.sort }
      } satisfies Page<A>
    })

  const records = (resource: AnyResource, principal: Principal) => (rows: ReadonlyArray<KeyedRecord>, expansions: ReadonlyArray<Expansion>) =>
    Effect.map(applyExpansions(repo, principal, rows.map((row) => row.record), expansions), (expanded) => expanded.map((record) => present(resource, record)))

  const list = Effect.fnUntraced(function* (resource: AnyResource, principal: Principal, given: QueryParams) {
    return yield* listing(resource, principal, given, (query, request) => repo.page(resource, principal.tenantId, query, request), records(resource, principal))
  }, traced("ResourceEngine.list"))

  /** `list` with each record as JSON text: as the store built it, or (expanded records) as encoded here. */
  const listAnswers = Effect.fnUntraced(function* (resource: AnyResource, principal: Principal, given: QueryParams) {
    return yield* listing<KeyedAnswer | KeyedRecord, string>(
      resource,
      principal,
      given,
      (query, request, expansions) =>
        expansions.length === 0 ? repo.pageAnswers(resource, principal.tenantId, query, request) : repo.page(resource, principal.tenantId, query, request),
      (rows, expansions) =>
        rows.every((row): row is KeyedAnswer => "answer" in row)
          ? Effect.succeed(rows.map((row) => row.answer))
          : Effect.map(records(resource, principal)(rows as ReadonlyArray<KeyedRecord>, expansions), (answered) => answered.map((record) => JSON.stringify(record)))
    )
  }, traced("ResourceEngine.listAnswers"))

  /** `search?q=…`: a list where `q` is the (required) search text. */
  const search = (resource: AnyResource, principal: Principal, params: QueryParams) =>
    Effect.gen(function* () {
      yield* requireFilters(resource, params, ["q", ...(resource.searchRoute?.required ?? [])])
      const rest = params.filter(([key]) => key !== "q" && key !== "search")
      const q = params.find(([key]) => key === "q")![1]
      return yield* list(resource, principal, [...rest, ["search", q]])
    })

  return { list, listAnswers, search }
}
