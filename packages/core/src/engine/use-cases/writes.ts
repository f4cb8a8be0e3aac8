import { Effect, Option } from "effect"
import { authorize, type Principal } from "../../auth/principal.js"
import { Conflict } from "../../errors.js"
import { applyInput, changedValues, childPlan, emptyPlan } from "../draft.js"
import { checkPrecondition, type Precondition } from "../etag.js"
import { type AnyResource, present, type Row } from "../resource.js"
import { checkEditable, checkTransition, stateOf } from "../status.js"
import { traced } from "../../traced.js"
import { eventWritten, inTransactionOnly, NeedsTransaction, statementEvent, UnitOfWork } from "../unit-of-work.js"
import { found, notFound, requireId, softDeletable, unlessFailed, writable } from "./checks.js"
import type { CurrentStore, EngineContext, UnitFailure, WriteOptions } from "./context.js"
import { afterWriteOf, childrenOf, draftChildren, emit, type makeDrafts, origin, stamped, writeContext } from "./drafts.js"
import type { OneStatementAttempts } from "./one-statement-attempts.js"
import { decodeCreate, decodeUpdate, splitRevealed } from "./write-input.js"

/**
 * Writes of records: create, update, soft delete and restore, each as one unit of work, and
 * their forms inside a caller's unit (an action's or a hook's writes of other resources).
 */
export const makeRecordWrites = (
  { repo, units, services }: EngineContext,
  { prepare, writeChildren, reload }: ReturnType<typeof makeDrafts>,
  currentStore: CurrentStore,
  attempts: OneStatementAttempts
) => {
  /** One record from a decoded input, inside the caller's unit of work; `values` are stored fields only the server sets. */
  const createOne = (resource: AnyResource, principal: Principal, input: Row, values: Row, idOnly = false) =>
    Effect.gen(function* () {
      const machine = resource.status
      const applied = { ...applyInput(resource.fields, input, undefined), ...values, ...stamped(resource, principal, ["created", "updated"]) }
      if (machine) {
        const sent = applied[machine.field]
        if (sent !== undefined && sent !== machine.initial) yield* Effect.fromResult(checkTransition(machine, machine.initial, String(sent)))
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
  const createRecords = (resource: AnyResource, principal: Principal, input: Row, values: Row, idOnly = false): Effect.Effect<Row, UnitFailure, UnitOfWork> =>
    Effect.gen(function* () {
      const many = resource.createMany ? yield* resource.createMany(input, writeContext(principal)).pipe(Effect.provide(services)) : undefined
      if (many === undefined) return yield* createOne(resource, principal, input, values, idOnly)
      const data = yield* Effect.forEach(many, (entry) => createOne(resource, principal, entry.input, { ...values, ...entry.values }, idOnly))
      return { data }
    })

  const create = Effect.fnUntraced(function* (resource: AnyResource, principal: Principal, body: unknown) {
    const input = yield* decodeCreate(resource, principal, body)
    const oneStatement = attempts.create(resource)
    const records = createRecords(resource, principal, input, {}).pipe(
      Effect.tapErrorTag("NeedsTransaction", () => Effect.sync(() => attempts.createNeededTransaction(resource)))
    )
    return yield* units.run(origin(principal), records, { oneStatement })
  }, traced("ResourceEngine.create"))

  const locked = (resource: AnyResource, principal: Principal, id: string, options: { withDeleted?: boolean } = {}) =>
    repo.findById(resource, principal.tenantId, id, { forUpdate: true, ...options }).pipe(Effect.flatMap(found(resource)))

  /** An update inside the caller's unit of work; `values` are stored fields only the server sets. */
  const updateWithin = (resource: AnyResource, principal: Principal, checked: string, input: Row, values: Row, precondition?: Precondition): Effect.Effect<Row, UnitFailure, UnitOfWork> =>
    Effect.gen(function* () {
      const unit = yield* UnitOfWork
      // Without a transaction the read takes no lock: the update then checks that no write came since.
      const current = unit.oneStatement
        ? yield* repo.findById(resource, principal.tenantId, checked).pipe(Effect.flatMap(found(resource)))
        : yield* locked(resource, principal, checked)
      yield* unlessFailed(checkPrecondition(resource, current, precondition))
      const machine = resource.status
      if (machine) {
        yield* Effect.fromResult(checkEditable(machine, current, Object.keys(input)))
        const sent = input[machine.field]
        if (sent !== undefined) yield* Effect.fromResult(checkTransition(machine, stateOf(machine, current), String(sent)))
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
          attempts.raced(resource, checked)
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
    const oneStatement = attempts.update(resource, checked)
    const updated = updateWithin(resource, principal, checked, input, {}, options.precondition).pipe(
      Effect.tapErrorTag("NeedsTransaction", () => Effect.sync(() => attempts.updateNeededTransaction(resource, checked)))
    )
    return yield* units.run(origin(principal), updated, { oneStatement })
  }, traced("ResourceEngine.update"))

  /** A soft delete inside the caller's unit of work, through the resource's `beforeRemove`. */
  const removeWithin = (resource: AnyResource, principal: Principal, id: string, precondition?: Precondition): Effect.Effect<void, UnitFailure, UnitOfWork> =>
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
          return yield* Effect.fail(new Conflict({ message: `This ${resource.title.toLowerCase()} is not deleted`, code: "NOT_DELETED" }))
        }
        yield* repo.setDeleted(resource, principal.tenantId, checked, false)
        yield* emit(resource, "restore", checked)
        return yield* reload(resource, principal, checked)
      })
    )
  }, traced("ResourceEngine.restore"))

  return { create, update, remove, restore, createRecords, updateWithin, removeWithin, locked }
}
