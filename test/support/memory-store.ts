import {
  builtInTaxEngine,
  type AnyResource,
  CatalogLookup,
  type ChildCollection,
  CursorSecret,
  SecretBox,
  type DomainEvent,
  ResourceEngine,
  ResourceRepository,
  type Row,
  UnitOfWork,
  UnitsOfWork,
  WebhookSettings,
  MatchCandidates
} from "@erp/core"
import { Effect, Layer, Option } from "effect"
import { randomUUID } from "node:crypto"

/**
 * The engine over stub layers: records in memory, units of work that roll the
 * memory back on failure and keep the events of those that succeed. For the
 * engine's rules (drafts, status, computation, events) without a database.
 */
export const makeMemoryStore = () => {
  const tables = new Map<string, Map<string, Record<string, unknown>>>()
  const sequences = new Map<string, number>()
  const events: Array<DomainEvent & { readonly tenantId: string }> = []
  const tableOf = (name: string) => {
    let table = tables.get(name)
    if (!table) tables.set(name, (table = new Map()))
    return table
  }
  const now = () => new Date().toISOString()
  const clone = <A>(value: A): A => structuredClone(value)

  const assemble = (resource: AnyResource, row: Record<string, unknown>): Row => {
    const record: Record<string, unknown> = { ...row }
    for (const collection of resource.children) {
      record[collection.name] = [...tableOf(collection.table).values()]
        .filter((child) => child[collection.parentKey] === row.id && child.tenant_id === row.tenant_id && !child.deleted_at)
        .sort((a, b) => Number(a.position) - Number(b.position))
        .map(({ tenant_id: _tenant, ...child }) => child)
    }
    const { tenant_id: _tenant, ...rest } = record
    return clone(rest)
  }

  const find = (resource: AnyResource, tenantId: string, id: string, withDeleted = false) => {
    const row = tableOf(resource.table).get(id)
    return row && row.tenant_id === tenantId && (withDeleted || !row.deleted_at) ? row : undefined
  }

  const insertRow = (resource: AnyResource, tenantId: string, values: Row) => {
    const id = randomUUID()
    const defaults = Object.fromEntries(resource.writable.map((name) => [name, resource.columns[name] === "jsonb" ? {} : null]))
    tableOf(resource.table).set(id, { ...defaults, ...clone(values), id, tenant_id: tenantId, created_at: now(), updated_at: now(), deleted_at: null })
    return id
  }

  const insertChildren = (collection: ChildCollection, tenantId: string, parentId: string, rows: ReadonlyArray<Row>) => {
    const table = tableOf(collection.table)
    for (const values of rows) {
      const id = randomUUID()
      table.set(id, { ...clone(values), id, tenant_id: tenantId, [collection.parentKey]: parentId, created_at: now(), updated_at: now() })
    }
  }

  const nextNumberOf = (tenantId: string, sequence: string) => {
    const key = `${tenantId}:${sequence}`
    const next = (sequences.get(key) ?? 0) + 1
    sequences.set(key, next)
    return next
  }

  const unsupported = () => Effect.die(new Error("the memory store does not page"))

  const repository = ResourceRepository.of({
    page: unsupported,
    pageAnswers: unsupported,
    pageLines: unsupported,
    rangeEnd: unsupported,
    count: unsupported,
    findOne: unsupported,
    findMany: unsupported,
    findById: (resource, tenantId, id, options = {}) =>
      Effect.sync(() => Option.map(Option.fromNullishOr(find(resource, tenantId, id, options.withDeleted)), (row) => assemble(resource, row))),
    findByIds: (resource, tenantId, ids) =>
      Effect.sync(() => ids.flatMap((id) => {
        const row = find(resource, tenantId, id, true)
        return row ? [assemble(resource, row)] : []
      })),
    missing: (tenantId, lookups) => Effect.sync(() => lookups.map(({ resource, ids }) => ids.map(String).filter((id) => !find(resource, tenantId, id)))),
    insert: (resource, tenantId, values) => Effect.sync(() => insertRow(resource, tenantId, values)),
    insertReturning: (resource, tenantId, values, options = {}) =>
      Effect.sync(() => {
        const number = options.number ? { [options.number.field]: nextNumberOf(tenantId, options.number.sequence) } : {}
        const id = insertRow(resource, tenantId, { ...values, ...number })
        for (const { collection, rows } of options.children ?? []) insertChildren(collection, tenantId, id, rows)
        return assemble(resource, find(resource, tenantId, id)!)
      }),
    update: (resource, tenantId, id, values) =>
      Effect.sync(() => {
        const row = find(resource, tenantId, id, true)!
        Object.assign(row, clone(values), { updated_at: now() })
      }),
    updateReturning: (resource, tenantId, id, values) =>
      Effect.sync(() => {
        const row = find(resource, tenantId, id, true)!
        Object.assign(row, clone(values), { updated_at: now() })
        return Option.some(assemble(resource, row))
      }),
    setDeleted: (resource, tenantId, id, deleted, values = {}) =>
      Effect.sync(() => {
        const row = find(resource, tenantId, id, true)
        if (!row || Boolean(row.deleted_at) === deleted) return false
        Object.assign(row, clone(values))
        row.deleted_at = deleted ? now() : null
        return true
      }),
    writeChildren: (collection, tenantId, parentId, plan) =>
      Effect.sync(() => {
        const table = tableOf(collection.table)
        for (const id of plan.remove) table.delete(id)
        for (const change of plan.update) Object.assign(table.get(change.id)!, clone(change.values), { updated_at: now() })
        insertChildren(collection, tenantId, parentId, plan.insert)
      }),
    nextNumber: (tenantId, sequence) => Effect.sync(() => nextNumberOf(tenantId, sequence))
  })

  const units = UnitsOfWork.of({
    run: (origin, effect) =>
      Effect.suspend(() => {
        const saved = new Map([...tables].map(([name, table]) => [name, clone(table)]))
        const savedSequences = new Map(sequences)
        const emitted: Array<DomainEvent> = []
        const unit = UnitOfWork.of({
          emit: (event) => Effect.sync(() => void (emitted.some((seen) => seen.resource === event.resource && seen.resourceId === event.resourceId) || emitted.push(event)))
        })
        return Effect.provideService(effect, UnitOfWork, unit).pipe(
          Effect.tap(() => Effect.sync(() => events.push(...emitted.map((event) => ({ ...event, tenantId: origin.tenantId }))))),
          Effect.tapCause(() =>
            Effect.sync(() => {
              tables.clear()
              for (const [name, table] of saved) tables.set(name, table)
              sequences.clear()
              for (const [key, value] of savedSequences) sequences.set(key, value)
            })
          )
        )
      }) as never
  })

  const layer = ResourceEngine.layer.pipe(
    Layer.provide(Layer.mergeAll(
      Layer.succeed(ResourceRepository, repository),
      Layer.succeed(UnitsOfWork, units),
      Layer.succeed(CursorSecret, { key: Buffer.alloc(32) }),
      Layer.succeed(CatalogLookup, CatalogLookup.of({} as never)),
      builtInTaxEngine,
      Layer.succeed(SecretBox, SecretBox.of({} as never)),
      Layer.succeed(WebhookSettings, { allowPrivate: false, leaseSeconds: 60 }),
      Layer.succeed(MatchCandidates, MatchCandidates.of({} as never))
    ))
  )
  return { layer, events, tables }
}
