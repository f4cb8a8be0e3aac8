import { Context, type Effect, type Option } from "effect"
import type { Conflict } from "../errors.js"
import type { CursorPosition } from "./cursor.js"
import type { FilterNode } from "./filter.js"
import type { ListQuery } from "./list-query.js"
import type { AnyResource, ColumnValues } from "./resource.js"

/** A row of a page with the key that positions it (sort value, id). */
export interface KeyedRecord {
  readonly record: unknown
  readonly key: readonly [sortValue: unknown, id: string]
}

export interface PageRequest {
  readonly direction: CursorPosition["direction"]
  /** Start strictly after (next) or before (previous) this key; null is the start (next) or the end (previous). */
  readonly key: CursorPosition["key"]
  readonly take: number
}

/** Storage of business records, always scoped by tenant. Implemented over SQL in `store/`. */
export class ResourceRepository extends Context.Tag("erp/core/ResourceRepository")<ResourceRepository, {
  /** Rows in walking order: for `previous`, nearest first. */
  readonly page: (resource: AnyResource, tenantId: string, query: ListQuery, request: PageRequest) => Effect.Effect<ReadonlyArray<KeyedRecord>>
  /** Whether any row lies beyond `key` in `direction`. */
  readonly exists: (
    resource: AnyResource,
    tenantId: string,
    query: ListQuery,
    direction: CursorPosition["direction"],
    key: readonly [unknown, string]
  ) => Effect.Effect<boolean>
  /** The first row matching `filter` (validated against the declared fields). */
  readonly findOne: (
    resource: AnyResource,
    tenantId: string,
    filter: FilterNode,
    options?: { readonly withDeleted?: boolean; readonly forUpdate?: boolean }
  ) => Effect.Effect<Option.Option<unknown>>
  /** By id, optionally within a visibility filter. */
  readonly findById: (
    resource: AnyResource,
    tenantId: string,
    id: string,
    options?: { readonly withDeleted?: boolean; readonly forUpdate?: boolean; readonly scope?: FilterNode }
  ) => Effect.Effect<Option.Option<unknown>>
  readonly insert: (resource: AnyResource, tenantId: string, values: ColumnValues) => Effect.Effect<string, Conflict>
  readonly update: (resource: AnyResource, tenantId: string, id: string, values: ColumnValues) => Effect.Effect<boolean, Conflict>
  readonly softDelete: (resource: AnyResource, tenantId: string, id: string) => Effect.Effect<boolean>
}>() {}

/** Runs an effect in one database transaction (business writes and their outbox rows commit together). */
export class Transactions extends Context.Tag("erp/core/Transactions")<Transactions, {
  readonly run: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}>() {}
