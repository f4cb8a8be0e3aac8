import { Context, Effect, Either, Layer, Option } from "effect"
import { authorize, type Principal } from "../auth/principal.js"
import type { CatalogLookup } from "../catalogs/lookup.js"
import { type Conflict, type Forbidden, type InvalidRequest, NotFound, type Unprocessable, invalid } from "../errors.js"
import { CursorSecret, encodeCursor } from "./cursor.js"
import { decodeBody } from "./decode.js"
import { isUuid } from "./filter.js"
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

const onlyParameters = (params: QueryParams, allowed: ReadonlyArray<string>) => {
  const unknown = params.find(([key]) => !allowed.includes(key))
  return unknown ? Effect.fail(invalid(`Unknown query parameter "${unknown[0]}"`, "INVALID_PARAMETER")) : Effect.void
}

const withDeletedParam = (params: QueryParams) =>
  onlyParameters(params, ["with_deleted"]).pipe(
    Effect.zipRight(parseBoolean("with_deleted", params.find(([key]) => key === "with_deleted")?.[1]))
  )

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
          const query = yield* parseListQuery(listShape(resource), params, secret)
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
          const uuid = yield* requireUuid(id)
          const found = yield* repo.findById(resource, principal.tenantId, uuid, { withDeleted })
          return yield* Option.match(found, { onNone: () => Effect.fail(notFound(resource)), onSome: Effect.succeed })
        })

        const create = Effect.fn("ResourceEngine.create")(function* (resource: AnyResource, principal: Principal, body: unknown) {
          yield* authorize(principal, resource.name, "create", resource.adminOnly)
          const input = yield* decodeBody(resource.createInput, body)
          const values = yield* resource.fromCreate(input as never, writeContext(principal)).pipe(Effect.provide(lookups))
          return yield* transactions.run(
            Effect.gen(function* () {
              const id = yield* repo.insert(resource, principal.tenantId, values)
              return yield* repo.findById(resource, principal.tenantId, id).pipe(Effect.map(Option.getOrThrow))
            })
          )
        })

        const update = Effect.fn("ResourceEngine.update")(function* (resource: AnyResource, principal: Principal, id: string, body: unknown) {
          yield* authorize(principal, resource.name, "update", resource.adminOnly)
          const uuid = yield* requireUuid(id)
          const input = yield* decodeBody(resource.updateInput, body)
          return yield* transactions.run(
            Effect.gen(function* () {
              const current = yield* repo.findById(resource, principal.tenantId, uuid, { forUpdate: true }).pipe(
                Effect.flatMap(Option.match({ onNone: () => Effect.fail(notFound(resource)), onSome: Effect.succeed }))
              )
              const values = yield* resource.fromUpdate(input as never, current, writeContext(principal)).pipe(
                Effect.provide(lookups)
              )
              if (Object.keys(values).length > 0) yield* repo.update(resource, principal.tenantId, uuid, values)
              return yield* repo.findById(resource, principal.tenantId, uuid).pipe(Effect.map(Option.getOrThrow))
            })
          )
        })

        const remove = Effect.fn("ResourceEngine.remove")(function* (resource: AnyResource, principal: Principal, id: string) {
          yield* authorize(principal, resource.name, "delete", resource.adminOnly)
          const uuid = yield* requireUuid(id)
          const removed = yield* repo.softDelete(resource, principal.tenantId, uuid)
          if (!removed) return yield* Effect.fail(notFound(resource))
        })

        return { list, get, create, update, remove }
      })
    )
}

export const eitherToEffect = <A, E>(either: Either.Either<A, E>): Effect.Effect<A, E> =>
  Either.match(either, { onLeft: Effect.fail, onRight: Effect.succeed })
