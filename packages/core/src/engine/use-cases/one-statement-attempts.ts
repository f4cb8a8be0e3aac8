import { RecentlyRaced } from "../recently-raced.js"
import type { AnyResource } from "../resource.js"

/**
 * A create or update whose only write is the record's own statement: tried without a
 * transaction, its event in that statement. A create's statement holds its number and
 * children too; a rule or hook that writes, or locks, runs it again in a transaction.
 */
const createIsOneStatement = (resource: AnyResource) => !resource.createMany
const updateIsOneStatement = (resource: AnyResource) =>
  (!resource.afterWrite || resource.afterWriteApplies !== undefined) && resource.fields.updated_at !== undefined

/**
 * Whether a write is tried as one statement, from what recent writes of this process met: the
 * engine's two race caches. An attempt that runs again in a transaction wastes its reads, so
 * records and resources whose attempts failed lately start in one for a while.
 */
export class OneStatementAttempts {
  /** Records whose update without a lock lost a race lately: their next updates take the lock at once. */
  private readonly racedRecords = new RecentlyRaced()
  /**
   * Resources whose create or update tried as one statement lately ran again in a transaction
   * (a rule that writes, as an invoice's tax snapshots; a hook with work to do), keyed by the
   * operation: for a while theirs start in one, rather than repeating reads a second attempt redoes.
   */
  private readonly needsTransaction = new RecentlyRaced()

  create(resource: AnyResource): boolean {
    return createIsOneStatement(resource) && !this.needsTransaction.recently(resource.name, "create")
  }

  update(resource: AnyResource, id: string): boolean {
    return updateIsOneStatement(resource) && !this.racedRecords.recently(resource.name, id) && !this.needsTransaction.recently(resource.name, "update")
  }

  /** Another write came between an update's read and its statement: the record's next updates take the lock. */
  raced(resource: AnyResource, id: string): void {
    this.racedRecords.note(resource.name, id)
  }

  createNeededTransaction(resource: AnyResource): void {
    this.needsTransaction.note(resource.name, "create")
  }

  /** A rule that writes (not a race, noted as such) needs a transaction: later updates start in one for a while. */
  updateNeededTransaction(resource: AnyResource, id: string): void {
    if (!this.racedRecords.recently(resource.name, id)) this.needsTransaction.note(resource.name, "update")
  }
}
