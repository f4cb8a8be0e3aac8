import { Context, Effect, Layer, Option } from "effect"
import { authorize, type Principal } from "../auth/principal.js"
import type { CatalogLookup } from "../catalogs/lookup.js"
import { type Conflict, type Forbidden, type InvalidRequest, NotFound, type Unprocessable, invalid } from "../errors.js"
import { CursorSecret, encodeCursor } from "./cursor.js"
import { decodeBody } from "./decode.js"
import { type FilterNode, isUuid, makeCondition, parseBracketFilters } from "./filter.js"
import { type ListShape, parseBoolean, parseListQuery, type QueryParams } from "./list-query.js"
import type { Page } from "./page.js"
import { ResourceRepository, Transactions } from "./repository.js"
import type { AnyResource, WriteContext } from "./resource.js"

export const listShape = (resource: AnyResource): ListShape => ({
  filters: resource.filters,
  defaultSort: resource.defaultSort,
  searchable: resource.search !== undefined,
  payloadSearchable: resource.search?.payload ?? false
})

export const notFound = (resource: AnyResource) =>
  new NotFound({ message: `${resource.title} not found`, code: resource.notFoundCode })

/** 400 for an id that is not a UUID (before any lookup). */
export const requireUuid = (id: string, name = "id") =>
  isUuid(id) ? Effect.succeed(id.toLowerCase()) : Effect.fail(invalid(`${name} must be a UUID, got "${id}"`, "INVALID_ID"))

const MAX_INTEGER_ID = 2_147_483_647

/** The resource's id type decides what a well-formed id is. */
export const requireId = (resource: AnyResource, id: string) =>
  resource.idType === "integer"
    ? /^\d{1,10}$/.test(id) && Number(id) <= MAX_INTEGER_ID
      ? Effect.succeed(String(Number(id)))
      : Effect.fail(invalid(`id must be a positive integer, got "${id}"`, "INVALID_ID"))
    : requireUuid(id)

const and = (...nodes: ReadonlyArray<FilterNode | undefined>): FilterNode | undefined => {
  const present = nodes.filter((node): node is FilterNode => node !== undefined)
  return present.length === 0 ? undefined : present.length === 1 ? present[0] : { kind: "group", logic: "and", conditions: present }
}

/** 400 unless every required parameter is given (`field=v` or `field[eq]=v`) with a non-blank value. */
const requireFilters = (resource: AnyResource, params: QueryParams, extra: ReadonlyArray<string> = []) => {
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

const withDeletedParam = (params: QueryParams) =>
  onlyParameters(params, ["with_deleted"]).pipe(
    Effect.zipRight(parseBoolean("with_deleted", params.find(([key]) => key === "with_deleted")?.[1]))
  )

/** Catalogs take no writes; their routes are never declared, so this guards direct core use. */
const writable = (resource: AnyResource) =>
  resource.write
    ? Effect.succeed(resource.write)
    : Effect.fail(invalid(`${resource.name} is read-only`, "READ_ONLY"))

const writeContext = (principal: Principal): WriteContext => ({
  tenantId: principal.tenantId,
  tenantCountry: principal.tenantCountry
})

type ReadError = InvalidRequest | Forbidden | NotFound
type WriteError = ReadError | Unprocessable | Conflict

/** The generic use cases of every declared resource: list, get, create, update, soft delete. */
export class ResourceEngine extends Context.Tag("erp/core/ResourceEngine")<ResourceEngine, {
  readonly list: (resource: AnyResource, principal: Principal, params: QueryParams) => Effect.Effect<Page, InvalidRequest | Forbidden>
  readonly get: (resource: AnyResource, principal: Principal, id: string, params: QueryParams) => Effect.Effect<unknown, ReadError>
  /** One record by a declared lookup (`code`, `swift`, `iso2`, …). */
  readonly lookup: (resource: AnyResource, principal: Principal, lookup: string, value: string, params?: QueryParams) => Effect.Effect<unknown, ReadError>
  /** The search route: `q` required, mapped to `search`. */
  readonly search: (resource: AnyResource, principal: Principal, params: QueryParams) => Effect.Effect<Page, InvalidRequest | Forbidden>
  readonly create: (resource: AnyResource, principal: Principal, body: unknown) => Effect.Effect<unknown, WriteError>
  readonly update: (resource: AnyResource, principal: Principal, id: string, body: unknown) => Effect.Effect<unknown, WriteError>
  readonly remove: (resource: AnyResource, principal: Principal, id: string) => Effect.Effect<void, ReadError>
}>() {
  static readonly layer: Layer.Layer<ResourceEngine, never, ResourceRepository | Transactions | CursorSecret | CatalogLookup> =
    Layer.effect(
      ResourceEngine,
      Effect.gen(function* () {
        const repo = yield* ResourceRepository
        const transactions = yield* Transactions
        const secret = (yield* CursorSecret).key
        const lookups = yield* Effect.context<CatalogLookup>()

        const list = Effect.fn("ResourceEngine.list")(function* (resource: AnyResource, principal: Principal, params: QueryParams) {
          yield* authorize(principal, resource.name, "read", resource.adminOnly)
          yield* requireFilters(resource, params)
          // The caller's visibility narrows the filter, and is part of the query a cursor is bound to.
          const scope = resource.visibility?.list ? resource.visibility.filter(principal) : undefined
          const query = yield* parseListQuery(listShape(resource), params, secret, scope)
          const direction = query.position?.direction ?? "next"
          const key = query.position?.key ?? null
          const rows = yield* repo.page(resource, principal.tenantId, query, { direction, key, take: query.limit + 1 })
          const more = rows.length > query.limit
          const page = rows.slice(0, query.limit)
          if (direction === "previous") page.reverse()
          const first = page[0]
          const last = page[page.length - 1]

          // The far side of the walk: rows beyond the page opposite to the way we came.
          const behind = direction === "next" ? "previous" : "next"
          const edge = direction === "next" ? first : last
          const hasBehind = key === null
            ? false
            : edge
            ? yield* repo.exists(resource, principal.tenantId, query, behind, edge.key)
            : yield* repo.exists(resource, principal.tenantId, query, behind, key).pipe(
              Effect.zipWith(
                repo.findById(resource, principal.tenantId, key[1], { withDeleted: query.withDeleted }),
                (beyond, self) => beyond || Option.isSome(self)
              )
            )
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
            data: page.map((row) => row.record),
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
          } satisfies Page
        })

        const get = Effect.fn("ResourceEngine.get")(function* (resource: AnyResource, principal: Principal, id: string, params: QueryParams) {
          yield* authorize(principal, resource.name, "read", resource.adminOnly)
          const withDeleted = yield* withDeletedParam(params)
          const checked = yield* requireId(resource, id)
          const scope = resource.visibility?.byId ? resource.visibility.filter(principal) : undefined
          const found = yield* repo.findById(resource, principal.tenantId, checked, { withDeleted, ...(scope ? { scope } : {}) })
          return yield* Option.match(found, { onNone: () => Effect.fail(notFound(resource)), onSome: Effect.succeed })
        })

        const lookup = Effect.fn("ResourceEngine.lookup")(function* (resource: AnyResource, principal: Principal, name: string, value: string, params: QueryParams = []) {
          yield* authorize(principal, resource.name, "read", resource.adminOnly)
          const declared = resource.lookups?.find((candidate) => candidate.name === name)
          if (!declared) return yield* Effect.fail(notFound(resource))
          const match = yield* makeCondition(resource.filters, declared.field, "eq", declared.normalize ? declared.normalize(value) : value, declared.parameter)
          // A declared selector (e.g. `?country_iso2=US` on a state code) replaces the default scope.
          const allowed = declared.selectors ?? []
          const unknown = params.find(([key]) => !allowed.includes(key))
          if (unknown) {
            return yield* Effect.fail(invalid(`Unknown query parameter "${unknown[0]}"${allowed.length ? `; this lookup takes ${allowed.join(", ")}` : ""}`, "INVALID_PARAMETER"))
          }
          const selectors = yield* parseBracketFilters(resource.filters, params)
          const scope = declared.scoped && selectors.length === 0 ? resource.visibility?.filter(principal) : undefined
          const filter = and(match, scope, ...selectors)!
          const found = yield* repo.findOne(resource, principal.tenantId, filter)
          return yield* Option.match(found, { onNone: () => Effect.fail(notFound(resource)), onSome: Effect.succeed })
        })

        /** `search?q=…`: a list where `q` is the (required) search text. */
        const search = (resource: AnyResource, principal: Principal, params: QueryParams) =>
          Effect.gen(function* () {
            yield* requireFilters(resource, params, ["q", ...(resource.searchRoute?.required ?? [])])
            const rest = params.filter(([key]) => key !== "q" && key !== "search")
            const q = params.find(([key]) => key === "q")![1]
            return yield* list(resource, principal, [...rest, ["search", q]])
          })

        const create = Effect.fn("ResourceEngine.create")(function* (resource: AnyResource, principal: Principal, body: unknown) {
          yield* authorize(principal, resource.name, "create", resource.adminOnly)
          const write = yield* writable(resource)
          const input = yield* decodeBody(write.createInput, body)
          const values = yield* write.fromCreate(input as never, writeContext(principal)).pipe(Effect.provide(lookups))
          return yield* transactions.run(
            Effect.gen(function* () {
              const id = yield* repo.insert(resource, principal.tenantId, values)
              return yield* repo.findById(resource, principal.tenantId, id).pipe(Effect.map(Option.getOrThrow))
            })
          )
        })

        const update = Effect.fn("ResourceEngine.update")(function* (resource: AnyResource, principal: Principal, id: string, body: unknown) {
          yield* authorize(principal, resource.name, "update", resource.adminOnly)
          const write = yield* writable(resource)
          const uuid = yield* requireId(resource, id)
          const input = yield* decodeBody(write.updateInput, body)
          return yield* transactions.run(
            Effect.gen(function* () {
              const current = yield* repo.findById(resource, principal.tenantId, uuid, { forUpdate: true }).pipe(
                Effect.flatMap(Option.match({ onNone: () => Effect.fail(notFound(resource)), onSome: Effect.succeed }))
              )
              const values = yield* write.fromUpdate(input as never, current, writeContext(principal)).pipe(
                Effect.provide(lookups)
              )
              if (Object.keys(values).length > 0) yield* repo.update(resource, principal.tenantId, uuid, values)
              return yield* repo.findById(resource, principal.tenantId, uuid).pipe(Effect.map(Option.getOrThrow))
            })
          )
        })

        const remove = Effect.fn("ResourceEngine.remove")(function* (resource: AnyResource, principal: Principal, id: string) {
          yield* authorize(principal, resource.name, "delete", resource.adminOnly)
          yield* writable(resource)
          const uuid = yield* requireId(resource, id)
          const removed = yield* repo.softDelete(resource, principal.tenantId, uuid)
          if (!removed) return yield* Effect.fail(notFound(resource))
        })

        return { list, get, lookup, search, create, update, remove }
      })
    )
}

