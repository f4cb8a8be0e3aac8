import { Context, Effect, Layer } from "effect"
import type { Principal } from "../auth/principal.js"
import type { Forbidden, InvalidRequest } from "../errors.js"
import type { CursorSecret } from "./cursor.js"
import type { QueryParams } from "./list-query.js"
import type { Page } from "./page.js"
import { ReadPlacement, type ReadPlacementShape, readerOf } from "./read-placement.js"
import type { ResourceRepository } from "./repository.js"
import type { AnyResource, ResourceAction, Row, WriteServices } from "./resource.js"
import { UnitOfWork, type UnitsOfWork } from "./unit-of-work.js"
import { makeActionStore } from "./use-cases/action-store.js"
import { makeActions } from "./use-cases/actions.js"
import { type CurrentStore, makeEngineContext, type ReadFailure, type WriteFailure, type WriteOptions } from "./use-cases/context.js"
import { makeDrafts } from "./use-cases/drafts.js"
import { type LinesWalk, makeExports, type Walk } from "./use-cases/export.js"
import { makeGets } from "./use-cases/get.js"
import { makeLists } from "./use-cases/list.js"
import { OneStatementAttempts } from "./use-cases/one-statement-attempts.js"
import { makeRecordWrites } from "./use-cases/writes.js"

export type { ReadFailure, WriteFailure, WriteOptions } from "./use-cases/context.js"
export type { LinesWalk, Walk } from "./use-cases/export.js"

/**
 * The engine's use cases, each built by its module of `use-cases/` and assembled into one
 * service: lists, reads of one record, exports, writes and actions. Writes and the store that
 * actions and hooks are handed build on each other: the store runs whole writes of other
 * resources, and a write hands its hooks the store.
 */
const make = Effect.gen(function* () {
  const context = yield* makeEngineContext
  const currentStore: CurrentStore = (principal) => Effect.map(UnitOfWork, (unit) => storeOf(principal, unit))
  const writes = makeRecordWrites(context, makeDrafts(context, currentStore), currentStore, new OneStatementAttempts())
  // The store runs other records' actions, and actions are handed the store: bound once both exist.
  const storeOf = makeActionStore(context.repo, writes, (...args) => actions.within(...args))
  const { list, listAnswers, search } = makeLists(context)
  const { get, lookup } = makeGets(context)
  const { walk, walkAnswers } = makeExports(context)
  const actions = makeActions(context, writes, currentStore)
  const action = actions.action
  const { create, update, remove, restore } = writes
  const uses: ResourceEngine["Service"] = { list, listAnswers, walk, walkAnswers, get, lookup, search, create, update, remove, restore, action }
  const placement = yield* ReadPlacement
  return placement === undefined ? uses : placed(uses, placement)
})

/**
 * The use cases on a store with read replicas: reads may be answered by a replica, and each write
 * tells the store whose reads must now see it.
 */
const placed = (uses: ResourceEngine["Service"], placement: ReadPlacementShape): ResourceEngine["Service"] => {
  const read = <Args extends ReadonlyArray<unknown>, A, E>(use: (resource: AnyResource, principal: Principal, ...rest: Args) => Effect.Effect<A, E>) =>
    (resource: AnyResource, principal: Principal, ...rest: Args) => placement.read(readerOf(principal), use(resource, principal, ...rest))
  const write = <Args extends ReadonlyArray<unknown>, A, E>(use: (resource: AnyResource, principal: Principal, ...rest: Args) => Effect.Effect<A, E>) =>
    (resource: AnyResource, principal: Principal, ...rest: Args) => placement.write(readerOf(principal), use(resource, principal, ...rest))
  return {
    list: read(uses.list),
    listAnswers: read(uses.listAnswers),
    get: read(uses.get),
    lookup: read(uses.lookup),
    search: read(uses.search),
    walk: (resource, principal, params, size, onPage, onTotal) => placement.read(readerOf(principal), uses.walk(resource, principal, params, size, onPage, onTotal)),
    walkAnswers: (resource, principal, params, size, onPage, onTotal) =>
      placement.read(readerOf(principal), uses.walkAnswers(resource, principal, params, size, onPage, onTotal)),
    create: write(uses.create),
    update: write(uses.update),
    remove: write(uses.remove),
    restore: write(uses.restore),
    action: (resource, action, principal, id, params, body, options) =>
      placement.write(readerOf(principal), uses.action(resource, action, principal, id, params, body, options))
  }
}

/** The generic use cases of every declared resource. */
export class ResourceEngine extends Context.Service<ResourceEngine, {
  readonly list: (resource: AnyResource, principal: Principal, params: QueryParams) => Effect.Effect<Page<Row>, InvalidRequest | Forbidden>
  /** `list` with each record as its JSON text (what the REST list answers, spliced into the page as is). */
  readonly listAnswers: (resource: AnyResource, principal: Principal, params: QueryParams) => Effect.Effect<Page<string>, InvalidRequest | Forbidden>
  readonly get: (resource: AnyResource, principal: Principal, id: string, params: QueryParams) => Effect.Effect<Row, ReadFailure>
  /**
   * Every record a list query matches, page after page of `size` (beyond the API's 100:
   * exports), with the list's authorization, filters, visibility and keyset walk; `onPage`
   * receives each page as answered. Answers how many records were walked.
   */
  readonly walk: Walk<Row>
  /**
   * `walk` with each record as JSON text, built by the store and never parsed here: what an
   * export writes. `onPage` receives a page as NDJSON lines (no line break after the last) and
   * how many records they are; pages hold at most `size` records, fewer where records are large.
   */
  readonly walkAnswers: LinesWalk
  /** One record by a declared lookup (`code`, `swift`, `iso2`, `tax-id`, …). */
  readonly lookup: (resource: AnyResource, principal: Principal, lookup: string, value: string, params?: QueryParams) => Effect.Effect<Row, ReadFailure>
  /** The search route: `q` required, mapped to `search`. */
  readonly search: (resource: AnyResource, principal: Principal, params: QueryParams) => Effect.Effect<Page<Row>, InvalidRequest | Forbidden>
  readonly create: (resource: AnyResource, principal: Principal, body: unknown) => Effect.Effect<Row, WriteFailure>
  readonly update: (resource: AnyResource, principal: Principal, id: string, body: unknown, options?: WriteOptions) => Effect.Effect<Row, WriteFailure>
  readonly remove: (resource: AnyResource, principal: Principal, id: string, options?: WriteOptions) => Effect.Effect<void, WriteFailure>
  /** Brings a soft-deleted record back (the panel's restore; no REST route, spec "Soft-delete lifecycle"). */
  readonly restore: (resource: AnyResource, principal: Principal, id: string) => Effect.Effect<Row, WriteFailure>
  /** Runs a declared action on one record; `undefined` for actions that answer no body. */
  readonly action: (
    resource: AnyResource,
    action: ResourceAction,
    principal: Principal,
    id: string,
    params: Readonly<Record<string, string>>,
    body: unknown,
    options?: WriteOptions
  ) => Effect.Effect<unknown, WriteFailure>
}>()("erp/core/ResourceEngine") {
  static readonly layer: Layer.Layer<ResourceEngine, never, ResourceRepository | UnitsOfWork | CursorSecret | WriteServices> = Layer.effect(ResourceEngine, make)
}
