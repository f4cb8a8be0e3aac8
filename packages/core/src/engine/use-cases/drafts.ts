import { Effect, Option } from "effect"
import type { Principal } from "../../auth/principal.js"
import { type FieldErrors, unprocessable } from "../../errors.js"
import { applyChildren, childPlan, emptyPlan, withComputed } from "../draft.js"
import type { AnyField } from "../field.js"
import { type AnyResource, type ChildDraft, type Draft, present, type Row, type WriteContext } from "../resource.js"
import { type EventAction, UnitOfWork } from "../unit-of-work.js"
import type { CurrentStore, EngineContext } from "./context.js"

/*
 * A write's draft, from its decoded input to the rows it stores: rules, references, computed
 * totals and derived status; its children, stamps and event; the record read back after it.
 */

export const writeContext = (principal: Principal): WriteContext => ({
  tenantId: principal.tenantId,
  tenantCountry: principal.tenantCountry,
  principal
})

/** The resource's `afterWrite` when it has something to do for this draft. */
export const afterWriteOf = (resource: AnyResource, operation: "create" | "update", draft: Draft) =>
  resource.afterWrite && (resource.afterWriteApplies?.(operation, draft) ?? true) ? resource.afterWrite : undefined

export const childrenOf = (record: Row | undefined, name: string): ReadonlyArray<Row> | undefined =>
  record === undefined ? undefined : (record[name] as ReadonlyArray<Row> | undefined) ?? []

export const emit = (resource: AnyResource, action: EventAction, resourceId: string) =>
  resource.events ? Effect.flatMap(UnitOfWork, (unit) => unit.emit({ resource: resource.name, action, resourceId })) : Effect.void

export const draftChildren = (resource: AnyResource, input: Row, current: Row | undefined) =>
  resource.children.length === 0 ? Effect.succeed({}) : Effect.forEach(resource.children.filter((collection) => collection.writable), (collection) =>
    Effect.fromResult(applyChildren(collection, input[collection.name] as ReadonlyArray<Row> | undefined, childrenOf(current, collection.name))).pipe(
      Effect.map((drafts) => [collection.name, drafts] as const)
    )).pipe(Effect.map((pairs): Record<string, ReadonlyArray<ChildDraft>> => Object.fromEntries(pairs)))

export const origin = (principal: Principal) => ({ tenantId: principal.tenantId, actor: principal.actor })

/** The caller's user id for `stamps`: API keys and operators have none. */
const userOf = (principal: Principal) => (principal.actor.kind === "user" ? principal.actor.id : null)

export const stamped = (resource: AnyResource, principal: Principal, which: ReadonlyArray<"created" | "updated" | "deleted">): Row =>
  Object.fromEntries(which.flatMap((name) => {
    const column = resource.stamps?.[name]
    return column ? [[column, userOf(principal)]] : []
  }))

/** The draft's rules, references and computation, and its children's writes; the record read back. */
export const makeDrafts = ({ repo, services }: EngineContext, currentStore: CurrentStore) => {
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
    // Most writes set no reference: no query, and no generator either.
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

  const writeChildren = (resource: AnyResource, principal: Principal, parentId: string, draft: Draft) =>
    Effect.forEach(resource.children.filter((collection) => collection.writable), (collection) => {
      const plan = childPlan(collection, draft.children[collection.name] ?? [], childrenOf(draft.current, collection.name))
      return emptyPlan(plan)
        ? Effect.succeed(false)
        : Effect.as(repo.writeChildren(collection, principal.tenantId, parentId, plan), true)
    }).pipe(Effect.map((written) => written.some(Boolean)))

  const reload = (resource: AnyResource, principal: Principal, id: string) =>
    repo.findById(resource, principal.tenantId, id, { withDeleted: true }).pipe(Effect.map((row) => present(resource, Option.getOrThrow(row))))

  return { prepare, writeChildren, reload }
}
