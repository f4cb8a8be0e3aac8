import { Context, Effect, Fiber, Layer, Option } from "effect"
import { authorize, can, forbidden, type Principal } from "../auth/principal.js"
import { traced } from "../traced.js"
import { type Conflict, type FieldErrors, type PreconditionFailed, type Forbidden, invalid, type InvalidRequest, NotFound, type Unprocessable, unprocessable } from "../errors.js"
import { Conflict as ConflictError } from "../errors.js"
import { CursorSecret, encodeCursor } from "./cursor.js"
import { renameAliases } from "./aliases.js"
import { decodeBody } from "./decode.js"
import { checkUntrustedParams } from "./untrusted-input.js"
import { applyExpansions, parseExpand, withoutExpand } from "./expand.js"
import { applyChildren, applyInput, changedValues, childPlan, emptyPlan, withComputed } from "./draft.js"
import { INT4_MAX } from "./fields.js"
import type { AnyField } from "./field.js"
import { type FilterNode, isUuid, makeCondition, parseBracketFilters } from "./filter.js"
import { type ListQuery, type ListShape, parseBoolean, parseListQuery, type QueryParams } from "./list-query.js"
import type { Page } from "./page.js"
import { CHUNK_TEXT, type KeyedAnswer, type KeyedRecord, type PageLines, type PageRequest, ResourceRepository } from "./repository.js"
import {
  type ActionStore,
  type AnyResource,
  type ChildDraft,
  type Expansion,
  type Draft,
  isIntegerId,
  isSoftDeleted,
  present,
  type ResourceAction,
  type Row,
  type WriteContext,
  type WriteServices
} from "./resource.js"
import { checkEditable, checkTransition, stateOf } from "./status.js"
import { checkPrecondition, type Precondition } from "./etag.js"
import { RecentlyRaced } from "./recently-raced.js"
import { type EventAction, eventWritten, inTransactionOnly, NeedsTransaction, statementEvent, UnitOfWork, UnitsOfWork } from "./unit-of-work.js"

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
const checkId = (resource: AnyResource, id: string): string | InvalidRequest =>
  isIntegerId(resource)
    ? /^\d{1,10}$/.test(id) && Number(id) <= INT4_MAX ? String(Number(id)) : invalid(`id must be a positive integer, got "${id}"`, "INVALID_ID")
    : checkUuid(id)

const asEffect = (checked: string | InvalidRequest): Effect.Effect<string, InvalidRequest> =>
  typeof checked === "string" ? Effect.succeed(checked) : Effect.fail(checked)

/** 400 for an id that is not a UUID (before any lookup). */
export const requireUuid = (id: string, name = "id") => asEffect(checkUuid(id, name))

export const requireId = (resource: AnyResource, id: string) => asEffect(checkId(resource, id))

/** NUL or a lone surrogate in any query parameter: 400 before anything reads it. */
const untrustedParams = (params: QueryParams) => {
  const problem = checkUntrustedParams(params)
  return problem ? Effect.fail(problem) : Effect.void
}

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

/** Catalogs and the event log take no writes; their routes are never declared, so this guards direct core use. */
const writable = (resource: AnyResource) =>
  resource.write
    ? Effect.succeed(resource.write)
    : Effect.fail(invalid(`${resource.name} is read-only`, "READ_ONLY"))

const writeContext = (principal: Principal): WriteContext => ({
  tenantId: principal.tenantId,
  tenantCountry: principal.tenantCountry,
  principal
})

const isObject = (value: unknown): value is Row => typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * Fields the server computes, sent by a client: refused by name before anything
 * else (400), children included (`items.0.total`).
 */
const refuseReadOnly = (resource: AnyResource, body: unknown, operation: "create" | "update"): Effect.Effect<void, InvalidRequest> => {
  if (!isObject(body)) return Effect.void
  const fields: Record<string, Array<string>> = {}
  for (const name of resource.readOnly) {
    if (Object.prototype.hasOwnProperty.call(body, name)) fields[name] = ["is read-only: the server sets it"]
  }
  if (operation === "update") {
    for (const [name, field] of Object.entries(resource.fields)) {
      if (field.input?.on === "create" && field.output && Object.prototype.hasOwnProperty.call(body, name)) fields[name] = ["is set when the record is created and cannot change"]
    }
  }
  for (const collection of resource.children) {
    const items = body[collection.name]
    if (!collection.writable || !Array.isArray(items)) continue
    const readOnly = Object.entries(collection.fields).filter(([, field]) => field.output && !field.input).map(([name]) => name)
    items.forEach((item, index) => {
      if (!isObject(item)) return
      for (const name of readOnly) {
        if (name !== "id" && Object.prototype.hasOwnProperty.call(item, name)) fields[`${collection.name}.${index}.${name}`] = ["is read-only: the server sets it"]
      }
    })
  }
  const names = Object.keys(fields)
  return names.length === 0
    ? Effect.void
    : Effect.fail(invalid(`Invalid request body: ${names.join(", ")} ${names.length > 1 ? "are" : "is"} read-only`, "READ_ONLY_FIELD", fields as FieldErrors))
}

/** Values of `revealed` fields leave the draft before it is stored; the create's answer shows them. */
const splitRevealed = (resource: AnyResource, values: Row): { readonly stored: Row; readonly shown: Row } => {
  const names = Object.entries(resource.fields).filter(([, field]) => field.revealed).map(([name]) => name)
  if (names.length === 0) return { stored: values, shown: {} }
  const stored: Record<string, unknown> = {}
  const shown: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(values)) (names.includes(name) ? shown : stored)[name] = value
  return { stored, shown }
}

/** Fails with `error` when there is one. */
const unlessFailed = <E>(error: E | undefined): Effect.Effect<void, E> => (error === undefined ? Effect.void : Effect.fail(error))


/** The resource's `afterWrite` when it has something to do for this draft. */
const afterWriteOf = (resource: AnyResource, operation: "create" | "update", draft: Draft) =>
  resource.afterWrite && (resource.afterWriteApplies?.(operation, draft) ?? true) ? resource.afterWrite : undefined

/**
 * A create or update whose only write is the record's own statement: tried without a
 * transaction, its event in that statement. A create's statement holds its number and
 * children too; a rule or hook that writes, or locks, runs it again in a transaction.
 */
const createIsOneStatement = (resource: AnyResource) => !resource.createMany
const updateIsOneStatement = (resource: AnyResource) =>
  (!resource.afterWrite || resource.afterWriteApplies !== undefined) && resource.fields.updated_at !== undefined

const childrenOf = (record: Row | undefined, name: string): ReadonlyArray<Row> | undefined =>
  record === undefined ? undefined : (record[name] as ReadonlyArray<Row> | undefined) ?? []

type ReadError = InvalidRequest | Forbidden | NotFound
type WriteError = ReadError | Unprocessable | Conflict | PreconditionFailed
/** A write inside a unit of work: `NeedsTransaction` too, which the unit catches. */
type UnitError = WriteError | NeedsTransaction

/** What a write may require beyond its input: the record's current version (`If-Match`). */
export interface WriteOptions {
  readonly precondition?: Precondition
}

/** `Walk` with each page as NDJSON lines in chunks (`PageLines`: joined by line breaks, none after the last) and its number of records. */
export type LinesWalk = <E>(
  resource: AnyResource,
  principal: Principal,
  params: QueryParams,
  size: number,
  onPage: (chunks: ReadonlyArray<string>, count: number) => Effect.Effect<void, E>,
  onTotal?: (total: number) => void
) => Effect.Effect<number, InvalidRequest | Forbidden | E>

/** A walk over every record a list query matches, in pages of `size`, each record as an `A`; answers how many. */
export type Walk<A> = <E>(
  resource: AnyResource,
  principal: Principal,
  params: QueryParams,
  size: number,
  onPage: (records: ReadonlyArray<A>) => Effect.Effect<void, E>,
  /** Told first how many records the walk will meet (one count query), for a progress bar. */
  onTotal?: (total: number) => void
) => Effect.Effect<number, InvalidRequest | Forbidden | E>

/** The generic use cases of every declared resource. */
export class ResourceEngine extends Context.Tag("erp/core/ResourceEngine")<ResourceEngine, {
  readonly list: (resource: AnyResource, principal: Principal, params: QueryParams) => Effect.Effect<Page, InvalidRequest | Forbidden>
  /** `list` with each record as its JSON text (what the REST list answers, spliced into the page as is). */
  readonly listAnswers: (resource: AnyResource, principal: Principal, params: QueryParams) => Effect.Effect<Page<string>, InvalidRequest | Forbidden>
  readonly get: (resource: AnyResource, principal: Principal, id: string, params: QueryParams) => Effect.Effect<Row, ReadError>
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
  readonly lookup: (resource: AnyResource, principal: Principal, lookup: string, value: string, params?: QueryParams) => Effect.Effect<Row, ReadError>
  /** The search route: `q` required, mapped to `search`. */
  readonly search: (resource: AnyResource, principal: Principal, params: QueryParams) => Effect.Effect<Page, InvalidRequest | Forbidden>
  readonly create: (resource: AnyResource, principal: Principal, body: unknown) => Effect.Effect<Row, WriteError>
  readonly update: (resource: AnyResource, principal: Principal, id: string, body: unknown, options?: WriteOptions) => Effect.Effect<Row, WriteError>
  readonly remove: (resource: AnyResource, principal: Principal, id: string, options?: WriteOptions) => Effect.Effect<void, WriteError>
  /** Brings a soft-deleted record back (the panel's restore; no REST route, spec "Soft-delete lifecycle"). */
  readonly restore: (resource: AnyResource, principal: Principal, id: string) => Effect.Effect<Row, WriteError>
  /** Runs a declared action on one record; `undefined` for actions that answer no body. */
  readonly action: (
    resource: AnyResource,
    action: ResourceAction,
    principal: Principal,
    id: string,
    params: Readonly<Record<string, string>>,
    body: unknown,
    options?: WriteOptions
  ) => Effect.Effect<unknown, WriteError>
}>() {
  static readonly layer: Layer.Layer<ResourceEngine, never, ResourceRepository | UnitsOfWork | CursorSecret | WriteServices> =
    Layer.effect(
      ResourceEngine,
      Effect.gen(function* () {
        const repo = yield* ResourceRepository
        const units = yield* UnitsOfWork
        const secret = (yield* CursorSecret).key
        /** Records whose update without a lock lost a race lately: their next updates take the lock at once. */
        const racedRecords = new RecentlyRaced()
        /**
         * Resources whose create or update tried as one statement lately ran again in a transaction
         * (a rule that writes, as an invoice's tax snapshots; a hook with work to do), keyed by the
         * operation: for a while theirs start in one, rather than repeating reads a second attempt redoes.
         */
        const needsTransaction = new RecentlyRaced()
        const services = yield* Effect.context<WriteServices>()

        /**
         * A list page: the query, the keyset read (`fetch`, one row more than the limit tells whether
         * there is more), the cursors; `finish` makes the answered records of the rows.
         */
        const listing = <Rows extends ReadonlyArray<{ readonly key: readonly [unknown, string] }>, A>(
          resource: AnyResource,
          principal: Principal,
          given: QueryParams,
          fetch: (query: ListQuery, request: PageRequest, expansions: ReadonlyArray<Expansion>) => Effect.Effect<Rows>,
          finish: (rows: Rows, expansions: ReadonlyArray<Expansion>) => Effect.Effect<ReadonlyArray<A>, InvalidRequest | Forbidden>
        ) =>
          Effect.gen(function* () {
            yield* untrustedParams(given)
            yield* authorize(principal, resource.permission, "read", resource.adminOnly)
            const expansions = yield* parseExpand(resource, given)
            const params = withoutExpand(given)
            yield* requireFilters(resource, params)
            // The caller's visibility narrows the filter, and is part of the query a cursor is bound to.
            const scope = resource.visibility?.list ? resource.visibility.filter(principal) : undefined
            const query = yield* parseListQuery(listShape(resource), params, secret, scope)
            const direction = query.position?.direction ?? "next"
            const key = query.position?.key ?? null
            const rows = yield* fetch(query, { direction, key, take: query.limit + 1 }, expansions)
            const more = rows.length > query.limit
            const page = rows.slice(0, query.limit) as unknown as Rows & Array<Rows[number]>
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
          return yield* listing<ReadonlyArray<KeyedAnswer | KeyedRecord>, string>(
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

        /** What every walk checks first: the caller's right to read, the filters, the query (the caller's visibility included). */
        const walkQuery = (resource: AnyResource, principal: Principal, params: QueryParams) =>
          Effect.gen(function* () {
            yield* authorize(principal, resource.permission, "read", resource.adminOnly)
            yield* requireFilters(resource, params)
            const scope = resource.visibility?.list ? resource.visibility.filter(principal) : undefined
            return yield* parseListQuery(listShape(resource), params, secret, scope)
          })

        /** Pages of `size` one after another from the keyset, the next read while this one is handed on. */
        const walkPages = <T extends { readonly key: readonly [unknown, string] }, E>(
          fetchPage: (key: readonly [unknown, string] | null) => Effect.Effect<ReadonlyArray<T>>,
          size: number,
          onPage: (rows: ReadonlyArray<T>) => Effect.Effect<void, E>
        ) =>
          Effect.gen(function* () {
            let rows = yield* fetchPage(null)
            let count = 0
            while (true) {
              // The next page is read while this one is written: the store and the writer work at once.
              const next = rows.length < size ? undefined : yield* Effect.fork(fetchPage(rows[rows.length - 1].key))
              if (rows.length > 0) yield* onPage(rows).pipe(Effect.onError(() => next ? Fiber.interrupt(next) : Effect.void))
              count += rows.length
              if (!next) return count
              rows = yield* Fiber.join(next)
            }
          })

        const walk = <E>(resource: AnyResource, principal: Principal, params: QueryParams, size: number, onPage: (records: ReadonlyArray<Row>) => Effect.Effect<void, E>, onTotal?: (total: number) => void) =>
          Effect.gen(function* () {
            const query = yield* walkQuery(resource, principal, params)
            if (onTotal) onTotal(yield* repo.count(resource, principal.tenantId, query))
            return yield* walkPages((key) => repo.page(resource, principal.tenantId, query, { direction: "next", key, take: size }), size,
              (rows) => onPage(rows.map((row) => present(resource, row.record))))
          })

        /** Answers joined into chunks of about `CHUNK_TEXT` characters (`PageLines`). */
        const chunked = (answers: ReadonlyArray<string>): ReadonlyArray<string> => {
          const chunks: Array<string> = []
          let start = 0
          let size = 0
          answers.forEach((answer, index) => {
            size += answer.length + 1
            if (size < CHUNK_TEXT && index < answers.length - 1) return
            chunks.push(answers.slice(start, index + 1).join("\n"))
            start = index + 1
            size = 0
          })
          return chunks
        }

        /** Ranges of a walk built at once, ahead of the one being written. */
        const RANGES_AHEAD = 2

        /**
         * About how much text a range holds once the first has shown how large the records are
         * (within the caller's most): products (~750 bytes) come ~2,800 a range, orders with items
         * (~3.5 KB) ~600. Each range costs the store two statements to plan and run, which at 256 KB
         * a range was a tenth of its work; the host holds three ranges at a time, in 64 KB chunks
         * that die young, so the peak memory barely follows the size (bench/README.md).
         */
        const RANGE_TEXT = 2 * 1024 * 1024
        const FIRST_RANGE = 100

        /**
         * Building answers is the costliest part of an export, and the store's: where the sort bounds
         * ranges (not a nullable field), the next ranges are found by their keys alone and built on
         * other connections while this one is written, in order. Each range comes as a few chunks of
         * lines the store joined (`PageLines`), so the host handles a few strings per range, not one
         * per record.
         */
        const walkAnswers = <E>(resource: AnyResource, principal: Principal, params: QueryParams, most: number, onPage: (chunks: ReadonlyArray<string>, count: number) => Effect.Effect<void, E>, onTotal?: (total: number) => void) =>
          Effect.gen(function* () {
            const query = yield* walkQuery(resource, principal, params)
            const tenantId = principal.tenantId
            if (onTotal) onTotal(yield* repo.count(resource, tenantId, query))
            if (query.sort.field !== "id" && resource.filters[query.sort.field]?.nullable) {
              // No range ends on a nullable key: pages one after another, each positioned by the last one's key.
              return yield* walkPages((key) => repo.pageAnswers(resource, tenantId, query, { direction: "next", key, take: most }), most,
                (rows) => onPage(chunked(rows.map((row) => row.answer)), rows.length))
            }
            return yield* Effect.scoped(Effect.gen(function* () {
              const pending: Array<Fiber.RuntimeFiber<PageLines>> = []
              let after: readonly [unknown, string] | null = null
              let ended = false
              let count = 0
              // The first ranges are few records, whose text sizes the next.
              let size = Math.min(most, FIRST_RANGE)
              while (true) {
                while (!ended && pending.length < RANGES_AHEAD) {
                  // (after, end]: a range the next cannot overlap, whatever is written meanwhile.
                  const end: readonly [unknown, string] | null = yield* repo.rangeEnd(resource, tenantId, query, after, size)
                  pending.push(yield* Effect.forkScoped(repo.pageLines(resource, tenantId, query, { direction: "next", key: after, take: size, ...(end ? { until: end } : {}) })))
                  if (end) after = end
                  else ended = true
                }
                const next = pending.shift()
                if (!next) return count
                const range = yield* Fiber.join(next)
                if (range.count > 0) {
                  // Growing by at most four times a range: a short export is not two large ranges one after the other.
                  const text = range.chunks.reduce((sum, chunk) => sum + chunk.length, 0)
                  size = Math.max(1, Math.min(most, size * 4, Math.round((RANGE_TEXT * range.count) / text)))
                  yield* onPage(range.chunks, range.count)
                }
                count += range.count
              }
            }))
          })

        const found = (resource: AnyResource) =>
          Option.match({ onNone: () => Effect.fail(notFound(resource)), onSome: (row: Row) => Effect.succeed(row) })

        /** The caller's visibility of a resource that limits reads by id too (else none). */
        const byIdScope = (resource: AnyResource, principal: Principal) =>
          resource.visibility?.byId ? resource.visibility.filter(principal) : undefined

        /**
         * A read naming no parameter, the most frequent request: the same checks and statement as
         * `getWith`, its permission checked before any effect runs and the rest one chain rather
         * than a generator (fewer steps of the runtime on every read by id).
         */
        const getPlain = (resource: AnyResource, principal: Principal, id: string): Effect.Effect<Row, ReadError> => {
          const checked = plainRead(resource, principal, id)
          if (typeof checked !== "string") return Effect.fail(checked)
          const scope = byIdScope(resource, principal)
          return Effect.flatMap(repo.findById(resource, principal.tenantId, checked, scope ? { scope } : {}), (row) =>
            Option.isSome(row) ? Effect.succeed(present(resource, row.value)) : Effect.fail(notFound(resource)))
        }
        /** A plain read's checks, before any statement: its permission, then its id (as stored). */
        const plainRead = (resource: AnyResource, principal: Principal, id: string): string | ReadError =>
          can(principal, resource.permission, "read", resource.adminOnly) ? checkId(resource, id) : forbidden(principal, resource.permission, "read", resource.adminOnly)

        /** A read naming parameters (`expand[]`, `with_deleted`), checked before anything is read. */
        const getWith = Effect.fnUntraced(function* (resource: AnyResource, principal: Principal, id: string, params: QueryParams) {
          yield* untrustedParams(params)
          yield* authorize(principal, resource.permission, "read", resource.adminOnly)
          const expansions = yield* parseExpand(resource, params)
          const withDeleted = yield* withDeletedParam(withoutExpand(params))
          const checked = yield* requireId(resource, id)
          const scope = byIdScope(resource, principal)
          const row = yield* repo.findById(resource, principal.tenantId, checked, { withDeleted, ...(scope ? { scope } : {}) }).pipe(Effect.flatMap(found(resource)))
          if (expansions.length === 0) return present(resource, row)
          const [expanded] = yield* applyExpansions(repo, principal, [row], expansions)
          return present(resource, expanded)
        })
        const tracedGet = traced("ResourceEngine.get")
        const get = (resource: AnyResource, principal: Principal, id: string, params: QueryParams): Effect.Effect<Row, ReadError> =>
          tracedGet(params.length === 0 ? getPlain(resource, principal, id) : getWith(resource, principal, id, params))

        const lookup = Effect.fnUntraced(function* (resource: AnyResource, principal: Principal, name: string, value: string, params: QueryParams = []) {
          yield* untrustedParams(params)
          yield* authorize(principal, resource.permission, "read", resource.adminOnly)
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
          const row = yield* repo.findOne(resource, principal.tenantId, filter).pipe(Effect.flatMap(found(resource)))
          return present(resource, row)
        }, traced("ResourceEngine.lookup"))

        /** `search?q=…`: a list where `q` is the (required) search text. */
        const search = (resource: AnyResource, principal: Principal, params: QueryParams) =>
          Effect.gen(function* () {
            yield* requireFilters(resource, params, ["q", ...(resource.searchRoute?.required ?? [])])
            const rest = params.filter(([key]) => key !== "q" && key !== "search")
            const q = params.find(([key]) => key === "q")![1]
            return yield* list(resource, principal, [...rest, ["search", q]])
          })

        /** Every reference the draft sets must name a live record the tenant can see (422 naming the field); one query for them all. */
        const checkReferences = (resource: AnyResource, principal: Principal, draft: Draft) => {
          const wanted: Array<{ readonly at: string; readonly target: AnyResource; readonly value: string }> = []
          const collect = (fields: Readonly<Record<string, AnyField>>, values: Row, current: Row | undefined, at: string) => {
            for (const [name, field] of Object.entries(fields)) {
              const value = values[name]
              if (!field.reference || value === null || value === undefined) continue
              if (current !== undefined && current[name] === value) continue
              wanted.push({ at: `${at}${name}`, target: field.reference.resource() as AnyResource, value: String(value) })
            }
          }
          collect(resource.fields, draft.values, draft.current, "")
          for (const collection of resource.children) {
            ;(draft.children[collection.name] ?? []).forEach((child, index) => collect(collection.fields, child.values, child.current, `${collection.name}.${index}.`))
          }
          // Most writes set no reference: no query, and no step of the runtime either.
          if (wanted.length === 0) return Effect.void
          return Effect.gen(function* () {
            const targets = [...new Set(wanted.map((reference) => reference.target))]
            // A catalog's scope rules hold for references too: a bank of another country is not the tenant's to use.
            const missing = yield* repo.missing(principal.tenantId, targets.map((target) => ({
              resource: target,
              ids: [...new Set(wanted.filter((reference) => reference.target === target).map((reference) => reference.value))],
              scope: target.visibility?.filter(principal)
            })))
            const absent = new Map(targets.map((target, index) => [target, new Set(missing[index])]))
            const problems: Record<string, Array<string>> = {}
            for (const reference of wanted) {
              if (absent.get(reference.target)?.has(reference.value)) problems[reference.at] = [`does not match any ${reference.target.title.toLowerCase()}`]
            }
            if (Object.keys(problems).length > 0) {
              return yield* Effect.fail(unprocessable("A referenced record does not exist", problems as FieldErrors, "REFERENCE_NOT_FOUND"))
            }
          })
        }

        /** Rules, references, computation and status derivation: the draft as it will be stored. */
        const prepare = (resource: AnyResource, principal: Principal, draft: Draft) => {
          const machine = resource.status
          const finish = (ruled: Draft) =>
            Effect.map(checkReferences(resource, principal, ruled), () => resource.compute ? withComputed(ruled, resource.compute(ruled)) : ruled)
          // A resource without rules or a derived status needs no store context: its draft is checked and computed as is.
          if (!resource.rules && !machine?.derive) return finish(draft)
          return Effect.gen(function* () {
            const context = { ...writeContext(principal), store: yield* currentStore(principal) }
            const ruled = resource.rules ? yield* resource.rules(draft, context).pipe(Effect.provide(services)) : draft
            const computed = yield* finish(ruled)
            if (!machine?.derive) return computed
            return { ...computed, values: { ...computed.values, [machine.field]: machine.derive(computed, context) } }
          })
        }

        const emit = (resource: AnyResource, action: EventAction, resourceId: string) =>
          resource.events ? Effect.flatMap(UnitOfWork, (unit) => unit.emit({ resource: resource.name, action, resourceId })) : Effect.void

        const draftChildren = (resource: AnyResource, input: Row, current: Row | undefined) =>
          resource.children.length === 0 ? Effect.succeed({}) : Effect.forEach(resource.children.filter((collection) => collection.writable), (collection) =>
            applyChildren(collection, input[collection.name] as ReadonlyArray<Row> | undefined, childrenOf(current, collection.name)).pipe(
              Effect.map((drafts) => [collection.name, drafts] as const)
            )).pipe(Effect.map((pairs): Record<string, ReadonlyArray<ChildDraft>> => Object.fromEntries(pairs)))

        const writeChildren = (resource: AnyResource, principal: Principal, parentId: string, draft: Draft) =>
          Effect.forEach(resource.children.filter((collection) => collection.writable), (collection) => {
            const plan = childPlan(collection, draft.children[collection.name] ?? [], childrenOf(draft.current, collection.name))
            return emptyPlan(plan)
              ? Effect.succeed(false)
              : Effect.as(repo.writeChildren(collection, principal.tenantId, parentId, plan), true)
          }).pipe(Effect.map((written) => written.some(Boolean)))

        const reload = (resource: AnyResource, principal: Principal, id: string) =>
          repo.findById(resource, principal.tenantId, id, { withDeleted: true }).pipe(Effect.map((row) => present(resource, Option.getOrThrow(row))))

        const origin = (principal: Principal) => ({ tenantId: principal.tenantId, actor: principal.actor })

        /** The caller's user id for `stamps`: API keys and operators have none. */
        const userOf = (principal: Principal) => (principal.actor.kind === "user" ? principal.actor.id : null)

        const stamped = (resource: AnyResource, principal: Principal, which: ReadonlyArray<"created" | "updated" | "deleted">): Row =>
          Object.fromEntries(which.flatMap((name) => {
            const column = resource.stamps?.[name]
            return column ? [[column, userOf(principal)]] : []
          }))

        /**
         * The repository bound to the caller's tenant, as actions and write hooks use it
         * inside their unit of work (`unit`): raw reads and writes, and whole writes of
         * other resources with all their rules.
         */
        const actionStore = (principal: Principal, unit: UnitOfWork["Type"]): ActionStore => ({
          // A lock outside a transaction ends with its statement and guards nothing: a locking read runs the unit in one.
          findById: (resource, id, options) => lockedOnlyInTransaction(unit, options, repo.findById(resource, principal.tenantId, id, options)),
          findOne: (resource, filter, options) => lockedOnlyInTransaction(unit, options, repo.findOne(resource, principal.tenantId, filter, options)),
          findMany: (resource, filter, options) => repo.findMany(resource, principal.tenantId, filter, options),
          // A write of a rule or hook is never a unit's one statement: it runs in a transaction.
          insert: (resource, values) => inTransactionOnly(unit, repo.insert(resource, principal.tenantId, values)),
          update: (resource, id, values) => inTransactionOnly(unit, repo.update(resource, principal.tenantId, id, values)),
          insertChild: (collection, parentId, values) => inTransactionOnly(unit, repo.writeChildren(collection, principal.tenantId, parentId, { insert: [values], update: [], remove: [] })),
          removeChild: (collection, parentId, id) => inTransactionOnly(unit, repo.writeChildren(collection, principal.tenantId, parentId, { insert: [], update: [], remove: [id] })),
          createRecord: (resource, body, values, options) =>
            inTransactionOnly(unit, Effect.provideService(
              decodeCreate(resource, principal, body).pipe(Effect.flatMap((input) => createRecords(resource, principal, input, values ?? {}, options?.answer === "id"))),
              UnitOfWork,
              unit
            )),
          updateRecord: (resource, id, body, values) =>
            inTransactionOnly(unit, Effect.provideService(
              decodeUpdate(resource, principal, id, body).pipe(Effect.flatMap((decoded) => updateWithin(resource, principal, decoded.id, decoded.input, values ?? {}))),
              UnitOfWork,
              unit
            )),
          removeRecord: (resource, id) => inTransactionOnly(unit, Effect.provideService(removeWithin(resource, principal, id), UnitOfWork, unit))
        })

        const lockedOnlyInTransaction = <A>(unit: UnitOfWork["Type"], options: { readonly forUpdate?: boolean } | undefined, read: Effect.Effect<A>) =>
          options?.forUpdate ? inTransactionOnly(unit, read) : read

        const currentStore = (principal: Principal) => Effect.map(UnitOfWork, (unit) => actionStore(principal, unit))

        /** Authorization, read-only fields and decoding: everything a create checks before its unit of work. */
        const decodeCreate = (resource: AnyResource, principal: Principal, body: unknown) =>
          Effect.gen(function* () {
            yield* authorize(principal, resource.permission, "create", resource.adminOnly)
            const write = yield* writable(resource)
            const named = yield* renameAliases(resource, body)
            yield* refuseReadOnly(resource, named, "create")
            return (yield* decodeBody(write.createInput, named)) as Row
          })

        /** One record from a decoded input, inside the caller's unit of work; `values` are stored fields only the server sets. */
        const createOne = (resource: AnyResource, principal: Principal, input: Row, values: Row, idOnly = false) =>
          Effect.gen(function* () {
            const machine = resource.status
            const applied = { ...applyInput(resource.fields, input, undefined), ...values, ...stamped(resource, principal, ["created", "updated"]) }
            if (machine) {
              const sent = applied[machine.field]
              if (sent !== undefined && sent !== machine.initial) yield* checkTransition(machine, machine.initial, String(sent))
            }
            const draft = yield* prepare(resource, principal, {
              operation: "create",
              current: undefined,
              input,
              values: machine && applied[machine.field] === undefined ? { ...applied, [machine.field]: machine.initial } : applied,
              children: yield* draftChildren(resource, input, undefined)
            })
            const { stored, shown } = splitRevealed(resource, draft.values)
            const unit = yield* UnitOfWork
            const hook = afterWriteOf(resource, "create", draft)
            // A record nothing writes to after its insert (no hook to run) is answered by its insert: with
            // its number, its children and (when the unit allows) its event, one statement, atomic alone.
            if (!idOnly && !hook) {
              const event = statementEvent(unit, resource, "create")
              const record = yield* repo.insertReturning(resource, principal.tenantId, stored, {
                ...(event ? { event } : {}),
                ...(resource.numbering ? { number: { field: resource.numbering.field, sequence: resource.name } } : {}),
                children: resource.children.filter((collection) => collection.writable).map((collection) => ({
                  collection,
                  rows: childPlan(collection, draft.children[collection.name] ?? [], undefined).insert
                }))
              })
              yield* (event ? eventWritten(unit, event, String(record.id)) : emit(resource, "create", String(record.id)))
              return { ...present(resource, record), ...shown }
            }
            const numbered = resource.numbering
              ? { ...stored, [resource.numbering.field]: yield* inTransactionOnly(unit, repo.nextNumber(principal.tenantId, resource.name)) }
              : stored
            const id = yield* inTransactionOnly(unit, repo.insert(resource, principal.tenantId, numbered))
            yield* writeChildren(resource, principal, id, draft)
            // The record's own event first: what its hook writes follows it in the feed.
            yield* emit(resource, "create", id)
            if (hook) {
              const store = yield* currentStore(principal)
              yield* hook({ resource, operation: "create", id, draft, principal, store }).pipe(Effect.provide(services))
            }
            return idOnly ? { id } : { ...(yield* reload(resource, principal, id)), ...shown }
          })

        /** The record a create body asks for, or the several of `createMany`, answered as `{ data }`. */
        const createRecords = (resource: AnyResource, principal: Principal, input: Row, values: Row, idOnly = false): Effect.Effect<Row, UnitError, UnitOfWork> =>
          Effect.gen(function* () {
            const many = resource.createMany ? yield* resource.createMany(input, writeContext(principal)).pipe(Effect.provide(services)) : undefined
            if (many === undefined) return yield* createOne(resource, principal, input, values, idOnly)
            const data = yield* Effect.forEach(many, (entry) => createOne(resource, principal, entry.input, { ...values, ...entry.values }, idOnly))
            return { data }
          })

        const create = Effect.fnUntraced(function* (resource: AnyResource, principal: Principal, body: unknown) {
          const input = yield* decodeCreate(resource, principal, body)
          const oneStatement = createIsOneStatement(resource) && !needsTransaction.recently(resource.name, "create")
          const records = createRecords(resource, principal, input, {}).pipe(
            Effect.tapErrorTag("NeedsTransaction", () => Effect.sync(() => needsTransaction.note(resource.name, "create")))
          )
          return yield* units.run(origin(principal), records, { oneStatement })
        }, traced("ResourceEngine.create"))

        const locked = (resource: AnyResource, principal: Principal, id: string, options: { withDeleted?: boolean } = {}) =>
          repo.findById(resource, principal.tenantId, id, { forUpdate: true, ...options }).pipe(Effect.flatMap(found(resource)))

        /** Authorization, read-only fields and decoding: everything an update checks before its unit of work. */
        const decodeUpdate = (resource: AnyResource, principal: Principal, id: string, body: unknown) =>
          Effect.gen(function* () {
            yield* authorize(principal, resource.permission, "update", resource.adminOnly)
            const write = yield* writable(resource)
            const checked = yield* requireId(resource, id)
            const named = yield* renameAliases(resource, body)
            yield* refuseReadOnly(resource, named, "update")
            return { id: checked, input: (yield* decodeBody(write.updateInput, named)) as Row }
          })

        /** An update inside the caller's unit of work; `values` are stored fields only the server sets. */
        const updateWithin = (resource: AnyResource, principal: Principal, checked: string, input: Row, values: Row, precondition?: Precondition): Effect.Effect<Row, UnitError, UnitOfWork> =>
          Effect.gen(function* () {
            const unit = yield* UnitOfWork
            // Without a transaction the read takes no lock: the update then checks that no write came since.
            const current = unit.oneStatement
              ? yield* repo.findById(resource, principal.tenantId, checked).pipe(Effect.flatMap(found(resource)))
              : yield* locked(resource, principal, checked)
            yield* unlessFailed(checkPrecondition(resource, current, precondition))
            const machine = resource.status
            if (machine) {
              yield* checkEditable(machine, current, Object.keys(input))
              const sent = input[machine.field]
              if (sent !== undefined) yield* checkTransition(machine, stateOf(machine, current), String(sent))
            }
            const draft = yield* prepare(resource, principal, {
              operation: "update",
              current,
              input,
              values: { ...applyInput(resource.fields, input, current), ...values },
              children: yield* draftChildren(resource, input, current)
            })
            const diff = changedValues(draft.values, current, resource.fields)
            const changed = Object.keys(diff).length > 0 ? { ...diff, ...stamped(resource, principal, ["updated"]) } : diff
            const children = resource.children.filter((collection) => collection.writable).flatMap((collection) => {
              const plan = childPlan(collection, draft.children[collection.name] ?? [], childrenOf(current, collection.name))
              return emptyPlan(plan) ? [] : [{ collection, plan }]
            })
            const hook = afterWriteOf(resource, "update", draft)
            // Nothing writes to a record after its update when no hook has work to do: the update (with its
            // children's changes) answers it. A child change touches the parent: `updated_at` and the feed say so.
            if ((Object.keys(changed).length > 0 || children.length > 0) && !hook) {
              const event = statementEvent(unit, resource, "update")
              const readAt = current.updated_at
              if (unit.oneStatement && typeof readAt !== "string") return yield* Effect.fail(new NeedsTransaction())
              const record = yield* repo.updateReturning(resource, principal.tenantId, checked, Object.keys(changed).length > 0 ? changed : stamped(resource, principal, ["updated"]), {
                ...(event ? { event } : {}),
                ...(unit.oneStatement ? { unchangedSince: readAt as string } : {}),
                children
              })
              // Another write came between the read and this update: the unit runs again, under the row's lock.
              if (Option.isNone(record)) {
                racedRecords.note(resource.name, checked)
                return yield* Effect.fail(new NeedsTransaction())
              }
              yield* (event ? eventWritten(unit, event, checked) : emit(resource, "update", checked))
              return present(resource, record.value)
            }
            // A write that changed nothing records nothing: no event without a write.
            if (!hook) return present(resource, current)
            if (unit.oneStatement) return yield* Effect.fail(new NeedsTransaction())
            if (Object.keys(changed).length > 0) yield* repo.update(resource, principal.tenantId, checked, changed)
            const childrenChanged = yield* writeChildren(resource, principal, checked, draft)
            const relatedChanged = hook
              ? (yield* hook({ resource, operation: "update", id: checked, draft, principal, store: yield* currentStore(principal) }).pipe(Effect.provide(services))) === true
              : false
            // A write that changed nothing records nothing: no event without a write.
            if (Object.keys(changed).length === 0 && !childrenChanged && !relatedChanged) return present(resource, current)
            // A child change touches the parent, so `updated_at` and the feed say the record changed.
            if (Object.keys(changed).length === 0) yield* repo.update(resource, principal.tenantId, checked, stamped(resource, principal, ["updated"]))
            yield* emit(resource, "update", checked)
            return yield* reload(resource, principal, checked)
          })

        const update = Effect.fnUntraced(function* (resource: AnyResource, principal: Principal, id: string, body: unknown, options: WriteOptions = {}) {
          const { id: checked, input } = yield* decodeUpdate(resource, principal, id, body)
          const oneStatement = updateIsOneStatement(resource) && !racedRecords.recently(resource.name, checked) && !needsTransaction.recently(resource.name, "update")
          const updated = updateWithin(resource, principal, checked, input, {}, options.precondition).pipe(
            // A rule that writes (not a race, noted as such) needs a transaction: later updates start in one for a while.
            Effect.tapErrorTag("NeedsTransaction", () =>
              racedRecords.recently(resource.name, checked) ? Effect.void : Effect.sync(() => needsTransaction.note(resource.name, "update")))
          )
          return yield* units.run(origin(principal), updated, { oneStatement })
        }, traced("ResourceEngine.update"))

        const softDeletable = (resource: AnyResource) =>
          isSoftDeleted(resource) ? Effect.void : Effect.fail(invalid(`${resource.name} cannot be deleted`, "READ_ONLY"))

        /** A soft delete inside the caller's unit of work, through the resource's `beforeRemove`. */
        const removeWithin = (resource: AnyResource, principal: Principal, id: string, precondition?: Precondition): Effect.Effect<void, UnitError, UnitOfWork> =>
          Effect.gen(function* () {
            yield* authorize(principal, resource.permission, "delete", resource.adminOnly)
            yield* writable(resource)
            yield* softDeletable(resource)
            const checked = yield* requireId(resource, id)
            if (precondition) yield* unlessFailed(checkPrecondition(resource, yield* locked(resource, principal, checked), precondition))
            if (resource.beforeRemove) {
              const current = yield* locked(resource, principal, checked)
              yield* resource.beforeRemove({ resource, current, principal, store: yield* currentStore(principal) }).pipe(Effect.provide(services))
            }
            const removed = yield* repo.setDeleted(resource, principal.tenantId, checked, true, stamped(resource, principal, ["deleted"]))
            if (!removed) return yield* Effect.fail(notFound(resource))
            yield* emit(resource, "delete", checked)
          })

        const remove = Effect.fnUntraced(function* (resource: AnyResource, principal: Principal, id: string, options: WriteOptions = {}) {
          yield* authorize(principal, resource.permission, "delete", resource.adminOnly)
          yield* writable(resource)
          yield* softDeletable(resource)
          const checked = yield* requireId(resource, id)
          yield* units.run(origin(principal), removeWithin(resource, principal, checked, options.precondition))
        }, traced("ResourceEngine.remove"))

        const restore = Effect.fnUntraced(function* (resource: AnyResource, principal: Principal, id: string) {
          yield* authorize(principal, resource.permission, "update", resource.adminOnly)
          yield* writable(resource)
          yield* softDeletable(resource)
          const checked = yield* requireId(resource, id)
          return yield* units.run(
            origin(principal),
            Effect.gen(function* () {
              const current = yield* locked(resource, principal, checked, { withDeleted: true })
              if (current.deleted_at === null) {
                return yield* Effect.fail(new ConflictError({ message: `This ${resource.title.toLowerCase()} is not deleted`, code: "NOT_DELETED" }))
              }
              yield* repo.setDeleted(resource, principal.tenantId, checked, false)
              yield* emit(resource, "restore", checked)
              return yield* reload(resource, principal, checked)
            })
          )
        }, traced("ResourceEngine.restore"))

        /** A raw body (a file) as the action receives it: bytes or text, never empty, within its size. */
        const rawInput = (declared: ResourceAction, body: unknown): Effect.Effect<Uint8Array | string, InvalidRequest> => {
          const raw = declared.raw!
          const size = body instanceof Uint8Array ? body.byteLength : typeof body === "string" ? Buffer.byteLength(body) : -1
          if (size < 0) return Effect.fail(invalid(`The request body must be the file (${raw.contentType})`, "INVALID_BODY"))
          if (size === 0) return Effect.fail(invalid(`The request body is empty: send the file (${raw.contentType})`, "INVALID_BODY"))
          if (size > raw.maxBytes) return Effect.fail(invalid(`The file exceeds ${raw.maxBytes} bytes`, "PAYLOAD_TOO_LARGE"))
          return Effect.succeed(body as Uint8Array | string)
        }

        const action = Effect.fnUntraced(function* (
          resource: AnyResource,
          declared: ResourceAction,
          principal: Principal,
          id: string,
          params: Readonly<Record<string, string>>,
          body: unknown,
          options: WriteOptions = {}
        ) {
          yield* authorize(principal, resource.permission, declared.permission, resource.adminOnly)
          const checked = yield* requireId(resource, id)
          const checkedParams: Record<string, string> = {}
          for (const [name, value] of Object.entries(params)) checkedParams[name] = yield* requireUuid(value, name)
          const input = declared.raw ? yield* rawInput(declared, body) : declared.input ? yield* decodeBody(declared.input, body) : undefined
          return yield* units.run(
            origin(principal),
            Effect.gen(function* () {
              const current = yield* locked(resource, principal, checked)
              yield* unlessFailed(checkPrecondition(resource, current, options.precondition))
              const store = yield* currentStore(principal)
              const output = yield* declared.run({ principal, resource, current, params: checkedParams, store }, input).pipe(
                Effect.provide(services)
              )
              if (declared.emits !== false) yield* emit(resource, "update", checked)
              return output
            })
          )
        }, traced("ResourceEngine.action"))

        return { list, listAnswers, walk, walkAnswers, get, lookup, search, create, update, remove, restore, action }
      })
    )
}
