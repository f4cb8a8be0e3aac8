import type { Effect, Schema } from "effect"
import type { InvalidRequest, Unprocessable } from "../errors.js"
import type { CatalogLookup } from "../catalogs/lookup.js"
import type { Principal } from "../auth/principal.js"
import type { FilterField } from "./fields.js"
import type { FilterNode } from "./filter.js"

export type Action = "read" | "create" | "update" | "delete"
export const ACTIONS: ReadonlyArray<Action> = ["read", "create", "update", "delete"]

export type SortOrder = "asc" | "desc"

/** How a value is cast when written: column names and casts come only from declarations. */
export type ColumnType = "text" | "uuid" | "numeric" | "date" | "timestamptz" | "boolean" | "jsonb" | "integer"

export type ColumnValues = Readonly<Record<string, unknown>>

/** What a write rule may know about the caller. */
export interface WriteContext {
  readonly tenantId: string
  readonly tenantCountry: string
}

export type WriteError = Unprocessable | InvalidRequest

/** How a resource is written, for the resources that take writes (catalogs do not). */
export interface ResourceWrites<Rec, Create, Update> {
  readonly createInput: Schema.Schema.AnyNoContext
  readonly updateInput: Schema.Schema.AnyNoContext
  /** A valid create body: shown in OpenAPI and tool descriptions, used by the generic contract tests. */
  readonly example: Readonly<Record<string, unknown>>
  /** Column values for a new row, from decoded input; may look up catalogs and refuse with 422. */
  fromCreate(input: Create, context: WriteContext): Effect.Effect<ColumnValues, WriteError, CatalogLookup>
  /** Column values to change, from decoded input and the current record. */
  fromUpdate(input: Update, current: Rec, context: WriteContext): Effect.Effect<ColumnValues, WriteError, CatalogLookup>
}

/** Which rows a principal sees, as a filter over the declared fields, and where it applies. */
export interface Visibility {
  filter(principal: Principal): FilterNode | undefined
  /** Lists (banks: the tenant's country; states: no, the country is a selector). */
  readonly list: boolean
  /** Lookups by id (banks: no; payment methods: yes). Named lookups say for themselves. */
  readonly byId: boolean
}

/** `GET /<name>/<lookup>/{value}`: one record by a unique field, e.g. `/banks/swift/{code}`. */
export interface Lookup {
  /** Path segment and tool suffix, e.g. `swift`. */
  readonly name: string
  /** The declared filter field matched with `eq`. */
  readonly field: string
  /** Path parameter name, e.g. `code`. */
  readonly parameter: string
  readonly description: string
  /** Whether the resource's visibility applies, unless the caller sends one of the `selectors`. */
  readonly scoped: boolean
  /** Query parameters (declared filter fields, `eq`) the caller may add, e.g. a country for a state code. */
  readonly selectors?: ReadonlyArray<string>
  /** Canonical form of the value (e.g. upper case codes) before matching. */
  readonly normalize?: (value: string) => string
}

/**
 * One resource, declared once. The engine, the SQL repository, HTTP routes,
 * OpenAPI, MCP tools and CLI export are all derived from this value.
 */
export interface ResourceDefinition<Rec = unknown, Create = unknown, Update = unknown> {
  /** Path segment and permission `resource_code`, e.g. `products`. */
  readonly name: string
  /** Singular for tool and operation names, e.g. `product`. */
  readonly singular: string
  readonly title: string
  readonly description: string
  /** Machine code of the 404 body, e.g. `PRODUCT_NOT_FOUND`. */
  readonly notFoundCode: string
  readonly adminOnly?: boolean
  /** Write operations emit `<name>.<action>` events. */
  readonly emitsEvents?: boolean

  /** The record as answered (JSON shape). */
  readonly record: Schema.Schema.AnyNoContext

  readonly filters: Readonly<Record<string, FilterField>>
  readonly defaultSort: { readonly field: string; readonly order: SortOrder }
  /** The table has `search_vector` (and with `payload`, `payload_vector` over metadata). */
  readonly search?: { readonly payload: boolean }
  /** Filters a list cannot do without (`/cities` needs `state_id`). */
  readonly requiredFilters?: ReadonlyArray<string>
  /** `GET /<name>/search?q=`: a list whose `q` is the search, with these filters required too. */
  readonly searchRoute?: { readonly required: ReadonlyArray<string> }
  readonly lookups?: ReadonlyArray<Lookup>
  readonly visibility?: Visibility

  readonly table: string
  /** Tenant rows (`tenant_id`, soft delete) or a global catalog. Default `tenant`. */
  readonly storage?: "tenant" | "catalog"
  /** Default `uuid`; geography catalogs keep integer ids. */
  readonly idType?: "uuid" | "integer"
  /** Stored columns and their SQL types; `id` and timestamps are implicit. */
  readonly columns: Readonly<Record<string, ColumnType>>
  /** Joins over alias `r` for embedded objects, and the joined columns they add to the select list. */
  readonly joins?: { readonly sql: string; readonly select: string }
  toRecord(row: Readonly<Record<string, unknown>>): Rec

  /** Present for resources that take create, update and delete. */
  readonly write?: ResourceWrites<Rec, Create, Update>
}

/** Erases a definition's type parameters for registries; method parameters stay checked where defined. */
export type AnyResource = ResourceDefinition<unknown, never, never>

export const defineResource = <Rec, Create, Update>(
  definition: ResourceDefinition<Rec, Create, Update>
): ResourceDefinition<Rec, Create, Update> => definition

export const isTenantOwned = (resource: AnyResource): boolean => (resource.storage ?? "tenant") === "tenant"

export type Operation = "list" | "get" | "create" | "update" | "delete"

export const operationsOf = (resource: AnyResource): ReadonlyArray<Operation> =>
  resource.write ? ["list", "get", "create", "update", "delete"] : ["list", "get"]
