import { Context } from "effect"

/**
 * Whose work a fiber's statements are, for the turns on the embedded store's one session: the
 * tenant a request is for (the tenant gate sets it), `""` for the host's own work (sign-in,
 * rate counters, webhooks). Statements of one owner queue behind each other; owners take turns.
 */
export const SessionOwner = Context.Reference<string>("erp/core/SessionOwner", { defaultValue: () => "" })

/** Work waiting for the session: called with the turn's end once it is its turn. */
interface Waiter {
  granted: boolean
  readonly work: (release: () => void) => void
}

/**
 * The embedded store's one session, handed out in rotation between owners with waiting work:
 * after a turn ends, the next owner in the rotation gets the session for one piece of its work
 * (a statement, a transaction, a socket client's exchange), then goes to the back if it has
 * more. One tenant sending many costly statements at once waits for its own, while every other
 * owner's next statement waits for at most one of them.
 */
export interface SessionTurns {
  /**
   * Calls `work` in `owner`'s turn (at once when the session is free) with the turn's end, to
   * call however the work ends (a second call does nothing). Answers the leave: work gone before
   * its turn leaves the queue; once its turn came, the work ends it itself.
   */
  readonly enter: (owner: string, work: (release: () => void) => void) => () => void
  /** `enter` as a promise of the turn's end, for work that holds the session across awaits. */
  readonly take: (owner: string) => Promise<() => void>
  /** True while no one has the session. */
  readonly idle: () => boolean
}

export const makeSessionTurns = (): SessionTurns => {
  let busy = false
  /** The owner of the turn under way (or the last one). */
  let current = ""
  /**
   * Waiting work by owner, owners in rotation order: a Map keeps insertion order, so the first
   * key is next, and an owner served with more left is deleted and set again (to the back).
   */
  const waiting = new Map<string, Array<Waiter>>()

  const grant = (owner: string, waiter: Waiter) => {
    current = owner
    waiter.granted = true
    let ended = false
    waiter.work(() => {
      if (ended) return
      ended = true
      next()
    })
  }

  /**
   * The session passes to the next owner in the rotation, or is free. The owner whose turn just
   * ended goes behind the others even when it queued more work before they came.
   */
  const next = () => {
    let first = waiting.entries().next()
    if (first.done) {
      busy = false
      return
    }
    if (first.value[0] === current && waiting.size > 1) {
      waiting.delete(current)
      waiting.set(current, first.value[1])
      first = waiting.entries().next()
    }
    const [owner, queue] = first.value!
    const waiter = queue.shift()!
    waiting.delete(owner)
    if (queue.length > 0) waiting.set(owner, queue)
    grant(owner, waiter)
  }

  const enter = (owner: string, work: (release: () => void) => void) => {
    const waiter: Waiter = { granted: false, work }
    if (!busy) {
      busy = true
      grant(owner, waiter)
      return () => undefined
    }
    const queue = waiting.get(owner)
    if (queue) queue.push(waiter)
    else waiting.set(owner, [waiter])
    return () => {
      if (waiter.granted) return
      const own = waiting.get(owner)
      const at = own ? own.indexOf(waiter) : -1
      if (at < 0) return
      own!.splice(at, 1)
      if (own!.length === 0) waiting.delete(owner)
    }
  }

  return {
    enter,
    take: (owner) => new Promise((resolve) => void enter(owner, resolve)),
    idle: () => !busy
  }
}
