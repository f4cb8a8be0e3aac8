import { type Effect, type Option, Schema } from "effect"
import type { Action, Principal } from "../auth/principal.js"
import type { CatalogLookup } from "../catalogs/lookup.js"
import type { MatchCandidates } from "../reconciliation/candidates.js"
import type { TaxEngine } from "../tax/engine.js"
import type { SecretBox } from "../secrets/secret-box.js"
import type { WebhookSettings } from "../webhooks/settings.js"
import type { Conflict, Forbidden, InvalidRequest, NotFound, PreconditionFailed, Unprocessable } from "../errors.js"
import { type AnyField, type AnySchema, type ColumnType, FILTER_TYPE, type Fields, type RecordOf, type ResourceRef } from "./field.js"
import type { FilterField } from "./fields.js"
import type { FilterNode } from "./filter.js"
import type { SortOrder } from "./list-query.js"
import { createInputSchema, hiddenNames, readOnlyNames, recordSchema, storedRecordSchema, updateInputSchema } from "./schemas.js"
import type { NeedsTransaction } from "./unit-of-work.js"


export type { ColumnType } from "./field.js"

/** A record as the store holds it in memory: field name to value. */
export type Row = Readonly<Record<string, unknown>>

/**
 * A row of a declared field map: its keys are the field names, so a misspelt one does not
 * compile. Values stay `unknown`: what a draft holds is the decoded input or the stored form,
 * which differ from the record's type for some fields (decimals, blocks). `RowOf<Fields>` is `Row`.
 */
export type RowOf<F extends Fields> = { readonly [K in keyof F & string]?: unknown }

/** A name a list filters by: a field, a key inside a jsonb block (`br_data.ie`), or one of the declared `filters` (`X`). */
export type FilterName<F extends Fields, X extends string = never> = (keyof F & string) | `${keyof F & string}.${string}` | X

/** What a write rule may know about the caller. */
export interface WriteContext {
  readonly tenantId: string
  readonly tenantCountry: string
  readonly principal: Principal
  /** The tenant's records inside the write's unit of work (rules that read other records: the quote an order copies). */
  readonly store?: ActionStore
}

/**
 * What rules and actions may refuse with: 400, 403 (a write to another resource), 404 (an
 * allocation that is not there), 409, 422; and `NeedsTransaction`, which a write or lock of the
 * store fails with in a unit tried as one statement (the unit of work runs it again in a
 * transaction; no client sees it).
 */
export type WriteError = Unprocessable | InvalidRequest | Conflict | NotFound | Forbidden | PreconditionFailed | NeedsTransaction

/** Services the engine offers to write rules (catalog matching, references, the tax engine; sealing a secret the record keeps; the webhook settings a URL is checked by; reconciliation's reads). */
export type WriteServices = CatalogLookup | TaxEngine | SecretBox | WebhookSettings | MatchCandidates

/** One child of a collection while a write is being prepared. */
export interface ChildDraft {
  /** The child's id when it already exists (kept by an update). */
  readonly id: string | undefined
  /** The child as stored before this write. */
  readonly current: Row | undefined
  /** Its state after the write: the current values with what was sent applied. */
  readonly values: Row
}

/**
 * A write being prepared: the record before it (`current`, absent on create),
 * what was sent (`input`, decoded), and the state the write will store (`values`
 * for the header's stored fields, `children` per collection, in order).
 */
export interface Draft<F extends Fields = Fields> {
  readonly operation: "create" | "update"
  readonly current: RowOf<F> | undefined
  readonly input: RowOf<F>
  readonly values: RowOf<F>
  readonly children: Readonly<Record<string, ReadonlyArray<ChildDraft>>>
}

/** Values a computation sets: header fields, and per collection one partial row per child (by position). */
export interface Computed<F extends Fields = Fields> {
  readonly values?: RowOf<F>
  readonly children?: Readonly<Record<string, ReadonlyArray<Row>>>
}

/** Which fields PATCH may change in a state: all accepted ones, a list, or none (not even `{}`). */
export type Editable<F extends Fields = Fields> = "all" | "none" | ReadonlyArray<keyof F & string>

/**
 * The states a status field moves through, `S` their names. Where `S` is inferred (a declaration),
 * it comes from the keys of `states`: `initial`, `transitions` and `derive` must name one of them.
 */
export interface StatusMachine<F extends Fields = Fields, S extends string = string> {
  readonly field: keyof F & string
  readonly initial: NoInfer<S>
  readonly states: Readonly<Record<S, { readonly editable: Editable<F>; readonly description?: string }>>
  /** Where a PATCH may move the status, when clients may write it. */
  readonly transitions?: { readonly [From in S]?: ReadonlyArray<NoInfer<S>> }
  /** Recomputes the status after every write (payables: by their allocations). A method, as the hooks of `ResourceDeclaration` are. */
  derive?(draft: Draft<F>, context: WriteContext): NoInfer<S>
}

/**
 * An operation beyond CRUD on one record: `POST /payables/{id}/allocate`. A `GET` action reads
 * (suggestions for a record): it takes no body, locks nothing, changes nothing and records no event.
 */
export interface ResourceAction {
  /** Endpoint and tool name stem, e.g. `allocate`. */
  readonly name: string
  readonly method: "GET" | "POST" | "DELETE"
  /** Under `/<resource>/{id}/`; `:name` segments are path parameters (UUIDs), e.g. `allocate/:allocationId`. */
  readonly path: string
  readonly permission: Action
  readonly summary: string
  readonly description: string
  /** The request body; absent: the action takes none (or a raw one, below). */
  readonly input?: AnySchema
  /** A valid `input` body, shown in OpenAPI and on the docs page (required with `input`). */
  readonly example?: Row
  /**
   * The body is a file, not JSON (an OFX statement): the action receives its bytes
   * (`Uint8Array`) over HTTP and the CLI, or its text (`string`) from an MCP tool argument.
   */
  readonly raw?: RawBody
  /** Also a CLI command: `erp import <format> FILE --<option> <id> --tenant T` runs this action on the record. */
  readonly importer?: { readonly format: string; readonly option: string }
  /** The answer; absent: 204 with no body. */
  readonly output?: AnySchema
  /** The answer as a page to print, for a client that asks for `text/html` (a boleto). */
  readonly page?: (output: unknown) => string
  readonly successStatus?: 200 | 201
  /** `false`: the action records no `update` of this record (an import whose created records have their own events). */
  readonly emits?: boolean
  readonly run: (context: ActionContext, input: unknown) => Effect.Effect<unknown, WriteError, ActionServices>
}

/** A file body an action takes instead of JSON. */
export interface RawBody {
  /** The media type documented for the request body (any is accepted). */
  readonly contentType: string
  readonly maxBytes: number
  /** Name of the MCP tool argument that carries the content as text. */
  readonly argument: string
  readonly description: string
}

/** What an action sees: the caller, the record (locked for the action's transaction), its path parameters, and the store. */
export interface ActionContext {
  readonly principal: Principal
  readonly resource: AnyResource
  readonly current: Row
  readonly params: Readonly<Record<string, string>>
  /** The caller's tenant's records, read and written inside the action's unit of work. */
  readonly store: ActionStore
}

/**
 * The store as an action uses it: scoped to the caller's tenant, every write joining
 * the action's transaction (and so its event), every refusal typed.
 */
export interface ActionStore {
  /** With `forUpdate`, the row locked: in a unit tried as one statement, `NeedsTransaction` (locks need one). */
  readonly findById: (resource: AnyResource, id: string, options?: { readonly forUpdate?: boolean; readonly withDeleted?: boolean }) => Effect.Effect<Option.Option<Row>, NeedsTransaction>
  readonly findOne: (resource: AnyResource, filter: FilterNode, options?: { readonly forUpdate?: boolean; readonly withDeleted?: boolean }) => Effect.Effect<Option.Option<Row>, NeedsTransaction>
  /** At most `limit` records matching `filter`, in the resource's default order. */
  readonly findMany: (resource: AnyResource, filter: FilterNode, options: { readonly limit: number; readonly withDeleted?: boolean }) => Effect.Effect<ReadonlyArray<Row>>
  readonly insert: (resource: AnyResource, values: Row) => Effect.Effect<string, WriteError>
  readonly update: (resource: AnyResource, id: string, values: Row) => Effect.Effect<void, WriteError>
  /** Adds one child (an allocation) to a collection of `parentId`. */
  readonly insertChild: (collection: ChildCollection, parentId: string, values: Row) => Effect.Effect<void, WriteError>
  readonly removeChild: (collection: ChildCollection, parentId: string, id: string) => Effect.Effect<void, WriteError>
  /**
   * Creates records of another resource as a client would (its permission, decoding, rules,
   * references, computation, numbering and events), inside this unit of work. `values`
   * are stored fields only the server sets (a payable's `purchase_invoice_id`). Answers
   * the record, or `{ data }` when the body asks for several (`createMany`); with
   * `answer: "id"` only `{ id }` (no read back: bulk imports).
   */
  readonly createRecord: (resource: AnyResource, body: unknown, values?: Row, options?: { readonly answer?: "record" | "id" }) => Effect.Effect<Row, WriteError>
  /** Updates a record as a client would (its permission, status rules, rules, event), inside this unit of work; `values` as for `createRecord`. */
  readonly updateRecord: (resource: AnyResource, id: string, body: unknown, values?: Row) => Effect.Effect<Row, WriteError>
  /** Soft-deletes a record of another resource as a client would (its permission, its `beforeRemove`, its event). */
  readonly removeRecord: (resource: AnyResource, id: string) => Effect.Effect<void, WriteError>
  /**
   * Runs a declared action of a record as a client would (its permission, the record locked, its
   * event), inside this unit of work: a reconciliation allocating to several receivables at once.
   */
  readonly runAction: (resource: AnyResource, action: string, id: string, body: unknown, params?: Readonly<Record<string, string>>) => Effect.Effect<unknown, WriteError>
}

/** A record one create request makes: its input (as decoded), and stored values only the server sets. */
export interface NewRecord {
  readonly input: Row
  readonly values?: Row
}

/** What a write hook sees, inside the write's unit of work. */
export interface WriteHookContext<F extends Fields = Fields> {
  readonly resource: AnyResource
  readonly operation: "create" | "update"
  readonly id: string
  /** The draft as stored (rules, computation and status applied). */
  readonly draft: Draft<F>
  readonly principal: Principal
  readonly store: ActionStore
}

/** What a removal hook sees: the record, locked, and the store. */
export interface RemoveHookContext<F extends Fields = Fields> {
  readonly resource: AnyResource
  readonly current: RowOf<F>
  readonly principal: Principal
  readonly store: ActionStore
}

/** Services an action may use beyond its store. */
export type ActionServices = WriteServices

/** Path parameters of an action's path (`allocate/:allocationId`), beside the record's id. */
export const actionParameters = (action: Pick<ResourceAction, "path">): ReadonlyArray<string> =>
  action.path.split("/").filter((segment) => segment.startsWith(":")).map((segment) => segment.slice(1))

/** Which rows a principal sees, as a filter over the declared fields, and where it applies. */
export interface Visibility {
  filter(principal: Principal): FilterNode | undefined
  /** Lists (banks: the tenant's country; states: no, the country is a selector). */
  readonly list: boolean
  /** Lookups by id (banks: no; payment methods: yes). Named lookups say for themselves. */
  readonly byId: boolean
}

/** `GET /<name>/<lookup>/{value}`: one record by a unique field, e.g. `/banks/swift/{code}`. */
export interface Lookup<Name extends string = string> {
  /** Path segment and tool suffix, e.g. `swift`. */
  readonly name: string
  /** The declared filter field matched with `eq`. */
  readonly field: Name
  /** Path parameter name, e.g. `code`. */
  readonly parameter: string
  readonly description: string
  /** Whether the resource's visibility applies, unless the caller sends one of the `selectors`. */
  readonly scoped: boolean
  /** Query parameters (declared filter fields, `eq`) the caller may add, e.g. a country for a state code. */
  readonly selectors?: ReadonlyArray<Name>
  /** Canonical form of the value (e.g. upper case codes) before matching. */
  readonly normalize?: (value: string) => string
}

/**
 * What a resource author writes: its fields once, and the rules around them. The names it
 * gives are checked against its fields `F` (inferred from `fields` alone: every other mention
 * is `NoInfer`, so a misspelt name is an error where it is written), the states `S` of its
 * status and the names `X` of its declared filters.
 *
 * Hooks over a draft are methods, each taking the draft keyed by `F`. The compiled definition
 * (`AnyResource`) keeps them over any field map, as `ResourceDefinition<R>` erases its record
 * type: for a concrete `F` a row of any keys is a `RowOf<F>` (its values are `unknown`), but
 * inside the generic `defineResource` TypeScript cannot relate the two, and method parameters,
 * compared both ways, let that erasure compile without a cast.
 */
export interface ResourceDeclaration<F extends Fields, S extends string = string, X extends string = string> {
  /** Path segment and permission `resource_code` (unless `permission` names another), e.g. `products`. */
  readonly name: string
  /** Singular for tool and operation names, e.g. `product`. */
  readonly singular: string
  readonly title: string
  readonly description: string
  /** Stem of the schema identifiers in OpenAPI (`Product`, `ProductCreate`); defaults to the title without spaces. */
  readonly identifier?: string
  /** Machine code of the 404 body, e.g. `PRODUCT_NOT_FOUND`. */
  readonly notFoundCode: string
  readonly adminOnly?: boolean
  /**
   * The permission `resource_code` that governs it, when not its own name: records served
   * under another resource's (an endpoint's deliveries) are read and acted on with its code.
   */
  readonly permission?: string
  /**
   * Written and read through core by the embedding app (the product panel) only: no
   * REST route, no MCP tool (spec "Events": the event is only a signal). Its writes
   * still record events and go through every rule.
   */
  readonly panelOnly?: boolean
  /**
   * Operators manage it from the CLI: `erp <command> import FILE.json --tenant T` (records
   * whose `key` matches a live one update it, others are created) and `erp <command> list`.
   */
  readonly operatorCommand?: { readonly name: string; readonly key: NoInfer<keyof F & string> }
  /** Subscribable: every write records one `<name>.<action>` event (spec "Events"). */
  readonly events?: boolean
  /**
   * Served over HTTP under one record of another resource (`/webhook-endpoints/{parentId}/deliveries`,
   * `…/deliveries/{id}`, its actions below that): `key` is the field naming the parent, which
   * the route fills; a record of another parent is 404. Other transports filter by `key`.
   */
  readonly nestedUnder?: { readonly parent: () => AnyResource; readonly key: NoInfer<keyof F & string>; readonly segment: string }

  readonly table: string
  /** Tenant rows (`tenant_id`, soft delete) or a global catalog. Default `tenant`. */
  readonly storage?: "tenant" | "catalog"
  /** Tenant rows leave with `deleted_at` (default) or are never removed (the event log). */
  readonly softDelete?: boolean

  readonly fields: F
  /** Filters beyond the fields: selectors and sub-selects over alias `r`. */
  readonly filters?: Readonly<Record<X, FilterField>>
  readonly defaultSort: { readonly field: NoInfer<keyof F & string>; readonly order: SortOrder }
  /** The table has `search_vector` (and with `payload`, `payload_vector` over metadata). */
  readonly search?: { readonly payload: boolean }
  /** Filters a list cannot do without (`/cities` needs `state_id`). */
  readonly requiredFilters?: ReadonlyArray<NoInfer<FilterName<F, X>>>
  /** `GET /<name>/search?q=`: a list whose `q` is the search, with these filters required too. */
  readonly searchRoute?: { readonly required: ReadonlyArray<NoInfer<FilterName<F, X>>> }
  readonly lookups?: ReadonlyArray<Lookup<NoInfer<FilterName<F, X>>>>
  readonly visibility?: Visibility

  /**
   * Present for resources that take create, update and delete: a valid create body for docs
   * and contract tests, and which of its fields must name a record of another resource.
   */
  readonly writes?: {
    readonly example: RowOf<NoInfer<F>>
    readonly references?: Readonly<Record<string, () => AnyResource>>
    /** UUID fields of the example that must differ from record to record (a unique key): tests give each create a fresh one. */
    readonly unique?: ReadonlyArray<NoInfer<keyof F & string>>
  }
  /**
   * Embeds a client may ask in full with `expand[]=<path>` on get and list (Stripe's expand):
   * `customer` (an `embedOne` field of the record) or `items.product` (one of a child
   * collection's). The engine loads each with one query for the whole page.
   */
  readonly expandable?: ReadonlyArray<NoInfer<(keyof F & string) | `${keyof F & string}.${string}`>>
  /** A per-tenant sequence, gapless under concurrency, set on create. */
  readonly numbering?: { readonly field: NoInfer<keyof F & string> }
  readonly status?: StatusMachine<NoInfer<F>, S>
  /** Rules over the draft after input is applied: resolve references, refuse with 422, fill derived stored values. */
  rules?(draft: Draft<NoInfer<F>>, context: WriteContext): Effect.Effect<Draft<NoInfer<F>>, WriteError, WriteServices>
  /** Pure computation over header and children (totals with bignumber.js); its fields are read-only to clients. */
  compute?(draft: Draft<NoInfer<F>>): Computed<NoInfer<F>>
  readonly actions?: ReadonlyArray<ResourceAction>
  /**
   * One create request that makes several records (a group of installments): the records
   * to create, or `undefined` for the usual one. They are created in one unit of work and
   * answered as `{ data: [...] }` (`manyOutput` in OpenAPI).
   */
  createMany?(input: RowOf<NoInfer<F>>, context: WriteContext): Effect.Effect<ReadonlyArray<NewRecord> | undefined, WriteError, WriteServices>
  /**
   * Runs after a create or update has written the record, in its unit of work: writes to
   * other resources (a purchase invoice's payables) and checks over what was stored. A
   * failure rolls the whole write back. `true`: it changed the record's related records,
   * so an update that changed nothing else still counts as one.
   */
  afterWrite?(context: WriteHookContext<NoInfer<F>>): Effect.Effect<boolean | void, WriteError, WriteServices>
  /**
   * Whether `afterWrite` has anything to do for this write (absent: always). A create whose hook
   * has nothing to do is one statement (record, number, children, event); one whose hook runs
   * needs a transaction around the record and what the hook writes.
   */
  afterWriteApplies?(operation: "create" | "update", draft: Draft<NoInfer<F>>): boolean
  /** Runs before a soft delete, in its unit of work, with the record locked: refuse (422) or take related records along. */
  beforeRemove?(context: RemoveHookContext<NoInfer<F>>): Effect.Effect<void, WriteError, WriteServices>
  /**
   * Stored fields the engine fills with the caller's user id (null for API keys and
   * operators): on create (`created`, and `updated`), on every update that changes
   * something (`updated`), on soft delete (`deleted`).
   */
  readonly stamps?: { readonly created?: NoInfer<keyof F & string>; readonly updated?: NoInfer<keyof F & string>; readonly deleted?: NoInfer<keyof F & string> }
}

/** A declared expansion, compiled: which embed (of the record or of each child) it fills with the full record. */
export interface Expansion {
  /** As the client writes it: `customer`, `items.product`. */
  readonly path: string
  /** The child collection holding the embed, for `items.product`. */
  readonly collection?: string
  /** The embed field that receives the full record. */
  readonly field: string
  /** The field holding the other record's id. */
  readonly key: string
  readonly resource: () => AnyResource
}

/** A child collection, compiled. */
export interface ChildCollection {
  readonly name: string
  readonly table: string
  readonly parentKey: string
  readonly fields: Fields
  readonly columns: Readonly<Record<string, ColumnType>>
  readonly maxItems: number
  readonly required: boolean
  readonly softDelete: boolean
  readonly writable: boolean
  /** Stored fields of a child that are not answered (an invoice item's computed taxes). */
  readonly hidden: ReadonlyArray<string>
}

/**
 * One resource, compiled from its declaration: the engine, the SQL repository,
 * HTTP routes, OpenAPI, MCP tools and CLI export are all derived from this value.
 */
export interface ResourceDefinition<R = unknown> extends Omit<ResourceDeclaration<Fields>, "writes" | "permission"> {
  /** The permission `resource_code` every check on it names: the declared one, else its name. */
  readonly permission: string
  readonly identifier: string
  readonly idType: "uuid" | "integer"
  /** The record as answered (JSON shape); `R` is its type (see `RecordType`). */
  readonly record: AnySchema
  readonly _record?: R
  /** The record as the store answers it, hidden stored fields included (`storedRecordSchema`): what the repository decodes rows with. */
  readonly stored: Schema.Codec<Row, unknown>
  readonly filters: Readonly<Record<string, FilterField>>
  /** Stored columns and their types (`id` and timestamps included). */
  readonly columns: Readonly<Record<string, ColumnType>>
  /** Stored fields the engine may write (inputs and computed ones; not ids, timestamps or expressions). */
  readonly writable: ReadonlyArray<string>
  readonly readOnly: ReadonlyArray<string>
  readonly hidden: ReadonlyArray<string>
  readonly children: ReadonlyArray<ChildCollection>
  /** `expand[]` paths and what each fills (from `expandable`). */
  readonly expansions: ReadonlyArray<Expansion>
  readonly write?: {
    readonly createInput: AnySchema
    readonly updateInput: AnySchema
    /** With `createMany`, the other answer of a create: `{ data: [...] }` (else always the record). */
    readonly createGroup?: AnySchema
    /** A valid create body: shown in OpenAPI and tool descriptions, used by the generic contract tests. */
    readonly example: Row
    /** Fields of the example that name a record of another resource: tests create one from its own example first. */
    readonly exampleReferences?: Readonly<Record<string, () => AnyResource>>
    /** UUID fields of the example tests vary per create (unique keys). */
    readonly exampleUnique?: ReadonlyArray<string>
  }
}

/** Erases a definition's type parameter for registries. */
export type AnyResource = ResourceDefinition<unknown>

/** The record type of a compiled resource: `RecordType<typeof products>`. */
export type RecordType<D> = D extends ResourceDefinition<infer R> ? R : never

const entries = (fields: Fields) => Object.entries(fields)

/** Stored columns of a field map (its table's own, embeds and children excluded). */
const columnsOf = (fields: Fields): Record<string, ColumnType> =>
  Object.fromEntries(entries(fields).filter(([, field]) => field.column && !field.column.virtual).map(([name, field]) => [name, field.column!.type]))

/** Fields the engine writes: clients' inputs and computed stored fields, never generated or derived ones. */
const writableOf = (fields: Fields): ReadonlyArray<string> =>
  entries(fields).filter(([, field]) => field.column && !field.column.generated && !field.column.virtual).map(([name]) => name)

/**
 * An embed that answers one value of the other record (a supplier's `country_code`, the
 * country's `iso2`) filters as that value does: the other record's filter, read through
 * the key in a sub-select.
 */
const embeddedValueFilter = (owner: string, name: string, field: AnyField): FilterField | undefined => {
  const embed = field.embed
  if (!embed || embed.kind !== "one" || typeof embed.pick !== "string") return undefined
  const target = embed.resource() as AnyResource | undefined
  if (!target) throw new Error(`${owner}.${name}: the resource it embeds is not defined yet; import it before ${owner}`)
  const inner = target.filters[embed.pick]
  if (!inner) return undefined
  const value = (inner.sql ?? `r.${embed.pick}`).replace(/\br\./g, "e.")
  const sameTenant = isTenantOwned(target) ? " AND e.tenant_id = r.tenant_id" : ""
  return {
    type: inner.type,
    nullable: true,
    ...(inner.caseInsensitive ? { caseInsensitive: true } : {}),
    ...(inner.operators ? { operators: inner.operators } : {}),
    sql: `(SELECT ${value} FROM ${target.table} e WHERE e.id = r.${embed.key}${sameTenant})`
  }
}

/** Filters of the fields, plus the keys inside jsonb blocks that declare them. */
const filtersOf = (owner: string, fields: Fields): Record<string, FilterField> => {
  const filters: Record<string, FilterField> = {}
  for (const [name, field] of entries(fields)) {
    const embedded = field.filter ? undefined : embeddedValueFilter(owner, name, field)
    if (embedded) filters[name] = embedded
    if (field.filter) filters[name] = field.column?.sql && !field.filter.sql ? { ...field.filter, sql: field.column.sql } : field.filter
    for (const [key, type] of Object.entries(field.blockFilters ?? {})) {
      const text = `(r.${name}->>'${key}')`
      filters[`${name}.${key}`] = { type, nullable: true, sql: type === "boolean" ? `${text}::boolean` : text }
    }
  }
  return filters
}

const pascal = (text: string) => text.split(/[^A-Za-z0-9]+/).filter(Boolean).map((word) => word[0].toUpperCase() + word.slice(1)).join("")

const compileChildren = (fields: Fields): ReadonlyArray<ChildCollection> =>
  entries(fields).flatMap(([name, field]) => {
    const spec = field.children
    if (!spec) return []
    // The parent key is the engine's to set: never written from a body, never changed.
    const declared = resolveSelf(spec.fields)
    const parentKey = declared[spec.parentKey]
    const childFields: Fields = parentKey?.column
      ? { ...declared, [spec.parentKey]: { ...parentKey, column: { ...parentKey.column, generated: true } } }
      : declared
    return [{
      name,
      table: spec.table,
      parentKey: spec.parentKey,
      fields: childFields,
      columns: columnsOf(childFields),
      maxItems: spec.maxItems,
      required: spec.required,
      softDelete: spec.softDelete,
      writable: spec.writable,
      hidden: hiddenNames(childFields)
    }]
  })

/** `{self}` in a field's SQL names its own column (`r.<name>`): a constructor does not know the name it is given. */
const resolveSelf = (fields: Fields): Fields =>
  Object.fromEntries(
    entries(fields).map(([name, field]) => [
      name,
      field.column?.sql?.includes("{self}") ? { ...field, column: { ...field.column, sql: field.column.sql.replaceAll("{self}", `r.${name}`) } } : field
    ])
  )

/** Each `expandable` path checked against the fields: it must name a one-record embed, of the record or of a child collection. */
const compileExpansions = (name: string, fields: Fields, children: ReadonlyArray<ChildCollection>, paths: ReadonlyArray<string>): ReadonlyArray<Expansion> =>
  paths.map((path) => {
    const [first, second, ...rest] = path.split(".")
    const collection = second === undefined ? undefined : children.find((candidate) => candidate.name === first)
    const field = second === undefined ? fields[first] : collection?.fields[second]
    const embed = field?.embed
    if (rest.length > 0 || !embed || embed.kind !== "one" || (second !== undefined && !collection)) {
      throw new Error(`${name}: expandable "${path}" must name an embedOne field of the record or of a child collection`)
    }
    return {
      path,
      ...(collection ? { collection: collection.name } : {}),
      field: second ?? first,
      key: embed.key,
      resource: () => embed.resource() as AnyResource
    }
  })

/** An embed that `expand[]` may answer in full: the embed as declared, or the full record (`read` keeps decoding rows as before). */
const expandableField = (field: AnyField, path: string): AnyField => {
  const embed = field.embed
  if (!embed || embed.kind !== "one" || !field.output) return field
  const full = Schema.suspend((): AnySchema => (embed.resource() as AnyResource).record)
  return {
    ...field,
    read: field.read ?? field.output,
    output: Schema.Union([field.output, full]).annotate({
      description: `${field.description ? `${field.description}. ` : ""}The full ${embed.resource().title.toLowerCase()} with \`expand[]=${path}\`, else the embed.`
    })
  }
}

/** The fields with each expandable embed's answer widened to "the embed, or the full record" (OpenAPI, MCP output schemas). */
const widenExpandable = (fields: Fields, paths: ReadonlyArray<string>): Fields => {
  const out: Record<string, AnyField> = { ...fields }
  for (const path of paths) {
    const [first, second] = path.split(".")
    const field = out[first]
    if (!field) continue
    if (second === undefined) {
      out[first] = expandableField(field, path)
      continue
    }
    const spec = field.children
    if (!spec || !spec.fields[second]) continue
    const childFields = { ...spec.fields, [second]: expandableField(spec.fields[second], path) }
    const item = recordSchema(childFields, { identifier: spec.identifier })
    out[first] = { ...field, output: Schema.Array(item), children: { ...spec, fields: childFields } }
  }
  return out
}

/** Compiles a declaration: every schema, column list and filter derived from its fields. */
export const defineResource = <F extends Fields, S extends string = never, X extends string = never>(
  declaration: ResourceDeclaration<F, S, X>
): ResourceDefinition<RecordOf<F>> => {
  const identifier = declaration.identifier ?? pascal(declaration.title)
  const { writes, ...rest } = declaration
  const fields = widenExpandable(resolveSelf(declaration.fields), declaration.expandable ?? [])
  const record = recordSchema(fields, { identifier, description: declaration.description })
  for (const [name, field] of entries(fields)) {
    if (field.filter && !field.column && !field.embed) throw new Error(`${declaration.name}.${name}: only stored or derived fields filter`)
    if (field.column && FILTER_TYPE[field.column.type] === undefined && field.filter && !field.filter.array) {
      throw new Error(`${declaration.name}.${name}: a jsonb field filters only as an array`)
    }
  }
  return {
    ...rest,
    permission: declaration.permission ?? declaration.name,
    fields,
    identifier,
    idType: fields.id?.column?.type === "integer" ? "integer" : "uuid",
    record,
    stored: storedRecordSchema(fields),
    filters: { ...filtersOf(declaration.name, fields), ...declaration.filters },
    columns: columnsOf(fields),
    writable: writableOf(fields),
    readOnly: readOnlyNames(fields),
    hidden: hiddenNames(fields),
    children: compileChildren(fields),
    expansions: compileExpansions(declaration.name, fields, compileChildren(fields), declaration.expandable ?? []),
    ...(writes
      ? {
        write: {
          createInput: createInputSchema(fields, identifier),
          updateInput: updateInputSchema(fields, identifier),
          ...(declaration.createMany ? { createGroup: manyOutput(record, identifier) } : {}),
          example: writes.example,
          ...(writes.references ? { exampleReferences: writes.references } : {}),
          ...(writes.unique ? { exampleUnique: writes.unique } : {})
        }
      }
      : {})
  }
}

/** The answer of a create that made several records: `{ data: [...] }` in creation order. */
export const manyOutput = (record: AnySchema, identifier: string) =>
  Schema.Struct({ data: Schema.Array(record) }).annotate({
    identifier: `${identifier}Group`,
    description: "The records one request created, in order (a group of installments)."
  })

export const isTenantOwned = (resource: Pick<AnyResource, "storage">): boolean => (resource.storage ?? "tenant") === "tenant"

export const isSoftDeleted = (resource: Pick<AnyResource, "storage" | "softDelete">): boolean =>
  isTenantOwned(resource) && resource.softDelete !== false

/** The id column's SQL type. */
export const idColumnType = (resource: Pick<AnyResource, "fields">): ColumnType => resource.fields.id?.column?.type ?? "uuid"

export const isIntegerId = (resource: Pick<AnyResource, "fields">): boolean => idColumnType(resource) === "integer"

export type Operation = "list" | "get" | "create" | "update" | "delete"

export const operationsOf = (resource: AnyResource): ReadonlyArray<Operation> =>
  resource.write ? ["list", "get", "create", "update", "delete"] : ["list", "get"]

/** The record as answered: stored keys whose records are embedded stay inside. */
export const present = (resource: Pick<AnyResource, "hidden"> & { readonly children?: ReadonlyArray<ChildCollection> }, record: Row): Row => {
  const collections = (resource.children ?? []).filter((collection) => collection.hidden.length > 0)
  if (resource.hidden.length === 0 && collections.length === 0) return record
  const copy: Record<string, unknown> = { ...record }
  for (const name of resource.hidden) delete copy[name]
  for (const collection of collections) {
    const items = copy[collection.name]
    if (!Array.isArray(items)) continue
    copy[collection.name] = items.map((item: Row) => {
      const child: Record<string, unknown> = { ...item }
      for (const name of collection.hidden) delete child[name]
      return child
    })
  }
  return copy
}

/** A definition as the embeds of other resources see it. */
export const asRef = (resource: AnyResource): ResourceRef => resource
