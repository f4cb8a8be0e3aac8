import { Context, type Effect, type Option } from "effect"
import type { Conflict, Unprocessable } from "../errors.js"
import type { CursorPosition } from "./cursor.js"
import type { ChildPlan } from "./draft.js"
import type { FilterNode } from "./filter.js"
import type { ListQuery } from "./list-query.js"
import type { AnyResource, ChildCollection, Row } from "./resource.js"
import type { StatementEvent } from "./unit-of-work.js"

/** Ids that should name live records of `resource` (a write's references to it). */
export interface ReferenceLookup {
  readonly resource: AnyResource
  readonly ids: ReadonlyArray<string | number>
  readonly scope?: FilterNode | undefined
}

/** What an `insertReturning` writes beside the record, in its statement. */
export interface InsertOptions {
  readonly event?: StatementEvent
  /** The field set to the next number of the tenant's sequence `sequence` (gapless: it commits with the record). */
  readonly number?: { readonly field: string; readonly sequence: string }
  /** New children of each collection, in their order (their positions set). */
  readonly children?: ReadonlyArray<{ readonly collection: ChildCollection; readonly rows: ReadonlyArray<Row> }>
}

/** What an `updateReturning` writes beside the record, in its statement. */
export interface UpdateOptions {
  readonly event?: StatementEvent
  /** The record's `updated_at` as read: nothing is written when another write moved it since. */
  readonly unchangedSince?: string
  /** The changes of each collection's children (those of an empty plan cost nothing). */
  readonly children?: ReadonlyArray<{ readonly collection: ChildCollection; readonly plan: ChildPlan }>
}

/** A record of a page (decoded, embeds and children in place) with the key that positions it (sort value, id). */
export interface KeyedRecord {
  readonly record: Row
  readonly key: readonly [sortValue: unknown, id: string]
}

/** A record of a page as the client reads it, JSON text built by the store (exports stream it as is). */
export interface KeyedAnswer {
  readonly answer: string
  readonly key: readonly [sortValue: unknown, id: string]
}

/**
 * Records of a page as NDJSON lines, joined by the store (an export writes them as they come):
 * `chunks` in order, each a run of whole lines joined by line breaks, the page being the chunks
 * joined by line breaks. A chunk is about 64 KB: a string past 128 KB is a large object in V8,
 * which the host decodes and collects far more slowly than a young one (bench/README.md).
 */
export interface PageLines {
  readonly chunks: ReadonlyArray<string>
  readonly count: number
}

/** About how much text a chunk of `PageLines` holds (a chunk ends after the line that passes it). */
export const CHUNK_TEXT = 64 * 1024

export interface PageRequest {
  readonly direction: CursorPosition["direction"]
  /** Start strictly after (next) or before (previous) this key; null is the start (next) or the end (previous). */
  readonly key: CursorPosition["key"]
  readonly take: number
  /** Also stop at this key, inclusive (a range of a walk whose next range is read at the same time). */
  readonly until?: CursorPosition["key"]
}

export interface FindOptions {
  readonly withDeleted?: boolean
  /** Lock the row (and its children) for the rest of the unit of work. */
  readonly forUpdate?: boolean
  /** A visibility filter the record must also match. */
  readonly scope?: FilterNode
}

type WriteFailure = Conflict | Unprocessable

/**
 * Storage of records, always scoped by tenant. Records come back decoded by the resource's
 * stored-record schema (`resource.stored`), with embeds and children in place (hidden stored
 * fields included: the engine strips them before answering). Implemented over SQL in `store/`.
 */
export class ResourceRepository extends Context.Service<ResourceRepository, {
  /** Rows in walking order: for `previous`, nearest first. */
  readonly page: (resource: AnyResource, tenantId: string, query: ListQuery, request: PageRequest) => Effect.Effect<ReadonlyArray<KeyedRecord>>
  /** A page in the same order as `page`, each record as answered (hidden fields left out), as JSON text. */
  readonly pageAnswers: (resource: AnyResource, tenantId: string, query: ListQuery, request: PageRequest) => Effect.Effect<ReadonlyArray<KeyedAnswer>>
  /** A page's answers in the same order, as NDJSON lines built by the store: one text (no line break after the last) and how many records it holds. */
  readonly pageLines: (resource: AnyResource, tenantId: string, query: ListQuery, request: PageRequest) => Effect.Effect<PageLines>
  /** The key of the `size`-th row after `after` in the list's order (not by a nullable field), `null` when fewer rows remain. */
  readonly rangeEnd: (resource: AnyResource, tenantId: string, query: ListQuery, after: CursorPosition["key"], size: number) => Effect.Effect<CursorPosition["key"]>
  /** How many rows a list query matches (for an export's progress; never on a request's path). */
  readonly count: (resource: AnyResource, tenantId: string, query: ListQuery) => Effect.Effect<number>
  /** The first row matching `filter` (validated against the declared fields). */
  readonly findOne: (resource: AnyResource, tenantId: string, filter: FilterNode, options?: FindOptions) => Effect.Effect<Option.Option<Row>>
  readonly findById: (resource: AnyResource, tenantId: string, id: string, options?: FindOptions) => Effect.Effect<Option.Option<Row>>
  /** Live or deleted records among `ids`, in one query (an expansion of a whole page). */
  readonly findByIds: (resource: AnyResource, tenantId: string, ids: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<Row>>
  /** The first `limit` rows matching `filter`, in the default order (live ones unless `withDeleted`). */
  readonly findMany: (resource: AnyResource, tenantId: string, filter: FilterNode, options: FindOptions & { readonly limit: number }) => Effect.Effect<ReadonlyArray<Row>>
  /**
   * For each lookup, those of its `ids` that name no live record of its resource the tenant can
   * see (within `scope`, a catalog's scope rules): every lookup in one query.
   */
  readonly missing: (tenantId: string, lookups: ReadonlyArray<ReferenceLookup>) => Effect.Effect<ReadonlyArray<ReadonlyArray<string>>>

  readonly insert: (resource: AnyResource, tenantId: string, values: Row) => Effect.Effect<string, WriteFailure>
  /**
   * Inserts and answers the stored record as `findById` would, in the same statement: with
   * `event`, the event's rows too; with `number`, the record's next number of the tenant's
   * sequence; with `children`, its new children.
   */
  readonly insertReturning: (resource: AnyResource, tenantId: string, values: Row, options?: InsertOptions) => Effect.Effect<Row, WriteFailure>
  readonly update: (resource: AnyResource, tenantId: string, id: string, values: Row) => Effect.Effect<void, WriteFailure>
  /**
   * Updates and answers the record's new state as `findById` would, in the same statement (with
   * `event`, the event's rows too; with `children`, their changes). With `unchangedSince` (the
   * `updated_at` read), nothing is written and none answered when another write came since.
   */
  readonly updateReturning: (
    resource: AnyResource,
    tenantId: string,
    id: string,
    values: Row,
    options?: UpdateOptions
  ) => Effect.Effect<Option.Option<Row>, WriteFailure>
  /** Sets or clears `deleted_at` (and writes `values` with it); false when the record was not in the opposite state. */
  readonly setDeleted: (resource: AnyResource, tenantId: string, id: string, deleted: boolean, values?: Row) => Effect.Effect<boolean, WriteFailure>
  readonly writeChildren: (collection: ChildCollection, tenantId: string, parentId: string, plan: ChildPlan) => Effect.Effect<void, WriteFailure>
  /** The next number of a per-tenant sequence (`record_number`): gapless, since it commits or rolls back with the write. */
  readonly nextNumber: (tenantId: string, sequence: string) => Effect.Effect<number>
}>()("erp/core/ResourceRepository") {}
