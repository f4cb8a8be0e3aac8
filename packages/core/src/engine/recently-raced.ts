/** How long a record stays "contended" after an update without a lock found it changed. */
const RACED_FOR_MS = 2_000

/** Memory bound: past it the oldest entries go first. */
const MAX_ENTRIES = 1_000

/**
 * Records another write raced lately, in this process. An update without a lock that finds
 * its record changed runs again under the lock (its read and check wasted); a record written
 * by many clients at once would pay that on most updates, so for a while its updates take
 * the lock at once.
 */
export class RecentlyRaced {
  private readonly until = new Map<string, number>()

  constructor(private readonly now: () => number = Date.now) {}

  note(resource: string, id: string): void {
    const key = `${resource}\u0000${id}`
    this.until.delete(key)
    if (this.until.size >= MAX_ENTRIES) {
      const oldest = this.until.keys().next()
      if (!oldest.done) this.until.delete(oldest.value)
    }
    this.until.set(key, this.now() + RACED_FOR_MS)
  }

  recently(resource: string, id: string): boolean {
    if (this.until.size === 0) return false
    const key = `${resource}\u0000${id}`
    const until = this.until.get(key)
    if (until === undefined) return false
    if (until > this.now()) return true
    this.until.delete(key)
    return false
  }
}
