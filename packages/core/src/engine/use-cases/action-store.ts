import { Effect } from "effect"
import type { Principal } from "../../auth/principal.js"
import type { ActionStore, AnyResource, WriteError } from "../resource.js"
import { inTransactionOnly, UnitOfWork } from "../unit-of-work.js"
import type { Repository } from "./context.js"
import type { makeRecordWrites } from "./writes.js"
import { decodeCreate, decodeUpdate } from "./write-input.js"

/** Binds the repository, and whole writes of other resources, to a caller's tenant and unit of work. */
/** Runs a declared action inside the caller's open unit of work (the engine's actions, given once they are built). */
export type ActionWithin = (
  resource: AnyResource,
  name: string,
  principal: Principal,
  id: string,
  params: Readonly<Record<string, string>>,
  body: unknown
) => Effect.Effect<unknown, WriteError, UnitOfWork>

export const makeActionStore = (
  repo: Repository,
  { createRecords, updateWithin, removeWithin }: Pick<ReturnType<typeof makeRecordWrites>, "createRecords" | "updateWithin" | "removeWithin">,
  actionWithin: ActionWithin
) => {
  /**
   * The repository bound to the caller's tenant, as actions and write hooks use it
   * inside their unit of work (`unit`): raw reads and writes, and whole writes of
   * other resources with all their rules.
   */
  const actionStore = (principal: Principal, unit: UnitOfWork["Service"]): ActionStore => ({
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
    removeRecord: (resource, id) => inTransactionOnly(unit, Effect.provideService(removeWithin(resource, principal, id), UnitOfWork, unit)),
    runAction: (resource, action, id, body, params = {}) =>
      inTransactionOnly(unit, Effect.provideService(actionWithin(resource, action, principal, id, params, body), UnitOfWork, unit))
  })

  const lockedOnlyInTransaction = <A>(unit: UnitOfWork["Service"], options: { readonly forUpdate?: boolean } | undefined, read: Effect.Effect<A>) =>
    options?.forUpdate ? inTransactionOnly(unit, read) : read

  return actionStore
}
