import { Config, Context, Data, Effect, Layer, Option } from "effect"
import { loadConfig } from "../config/load.js"
import { storeSettings } from "../config/variables.js"
import { SessionOwner } from "./session-turns.js"

/** Too many of one tenant's requests are in the store at once, and the wait for a turn ran out. */
export class TenantBusy extends Data.TaggedError("TenantBusy")<{ readonly concurrency: number; readonly waitMs: number }> {}

export interface TenantGateSettings {
  /** Requests of one tenant in the store at once (`ERP_TENANT_CONCURRENCY`). */
  readonly concurrency: number
  /** Longest a request waits for its tenant's turn before 429 (`ERP_TENANT_QUEUE_MS`). */
  readonly waitMs: number
}

const fromConfig = Config.all({ concurrency: storeSettings.tenantConcurrency.config, waitMs: storeSettings.tenantQueueMs.config })

/** A request waiting for a turn: handed one when a turn ends (`granted`), or refused once `deadline` passes. */
interface Waiter {
  granted: boolean
  readonly deadline: number
  readonly resume: () => void
  readonly refuse: () => void
}

interface Gate {
  /** Turns in use. */
  inUse: number
  /** Requests waiting, first come first served (so their deadlines are in order too). */
  readonly waiting: Array<Waiter>
  /** Refuses the waiters whose deadline passed: one timer per gate, set for the first waiter's deadline. */
  timer: ReturnType<typeof setTimeout> | undefined
}

/**
 * Keeps one tenant from taking the whole pool: each tenant has a few turns in the
 * store at once, the others wait (holding no connection) up to a bound, then 429.
 * Other tenants' requests never queue behind it. Turns are per host process.
 */
export class TenantGate extends Context.Service<TenantGate, {
  readonly settings: TenantGateSettings
  readonly run: <A, E, R>(tenantId: string, effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | TenantBusy, R>
}>()("erp/core/TenantGate") {
  /**
   * Defaults: 4 turns per tenant on PostgreSQL (pool of 10), 1 on the embedded store (one session).
   * `oneSession`: the store runs one statement at a time (the embedded store) and hands its session
   * to tenants in rotation (session-turns.ts): the work in a turn runs as its tenant's
   * (`SessionOwner`), so its statements queue behind its own tenant's, not behind everyone's.
   */
  static readonly layer = (options: Partial<TenantGateSettings> & { readonly defaultConcurrency: number; readonly oneSession?: boolean }) =>
    Layer.effect(TenantGate, Effect.map(loadConfig(fromConfig), (configured) => {
      const settings: TenantGateSettings = {
        concurrency: options.concurrency ?? Option.getOrElse(configured.concurrency, () => options.defaultConcurrency),
        waitMs: options.waitMs ?? configured.waitMs
      }
      const gates = new Map<string, Gate>()
      const busy = new TenantBusy({ concurrency: settings.concurrency, waitMs: settings.waitMs })
      /** A turn ends: the next waiting request takes it over, else it is free (and an idle tenant's gate goes). */
      const release = (tenantId: string, gate: Gate) => {
        const next = gate.waiting.shift()
        if (next) {
          next.granted = true
          return next.resume()
        }
        if (--gate.inUse === 0) {
          if (gate.timer !== undefined) clearTimeout(gate.timer)
          gates.delete(tenantId)
        }
      }
      /**
       * Refuses the waiters whose deadline passed, then sleeps until the next one's. A waiter
       * handed a turn meanwhile has left the queue, so the timer only ever looks at its front:
       * one timer per busy tenant, not one set and cleared for every request that waits.
       */
      const expire = (gate: Gate) => {
        gate.timer = undefined
        const now = Date.now()
        while (gate.waiting.length > 0 && gate.waiting[0].deadline <= now) gate.waiting.shift()!.refuse()
        if (gate.waiting.length > 0) arm(gate)
      }
      const arm = (gate: Gate) => {
        if (gate.timer !== undefined) return
        // Kept referenced: a waiter's refusal is due even when nothing else holds the process.
        gate.timer = setTimeout(expire, Math.max(0, gate.waiting[0].deadline - Date.now()), gate)
      }
      /** A request queued for `gate`'s next turn: `resume` once handed it, `refuse` once its wait runs out; answers the leave. */
      const queue = (tenantId: string, gate: Gate, resume: () => void, refuse: () => void) => {
        const waiter: Waiter = { granted: false, deadline: Date.now() + settings.waitMs, resume, refuse }
        gate.waiting.push(waiter)
        arm(gate)
        return () => {
          // Gone (the client went away): a turn handed over meanwhile passes on.
          if (waiter.granted) return release(tenantId, gate)
          const at = gate.waiting.indexOf(waiter)
          if (at >= 0) gate.waiting.splice(at, 1)
        }
      }
      const waitForTurn = (tenantId: string, gate: Gate) =>
        Effect.callback<void, TenantBusy>((resume) => {
          const leave = queue(tenantId, gate, () => resume(Effect.void), () => resume(Effect.fail(busy)))
          return Effect.sync(leave)
        })
      const gateOf = (tenantId: string) => {
        let gate = gates.get(tenantId)
        if (!gate) {
          gate = { inUse: 0, waiting: [], timer: undefined }
          gates.set(tenantId, gate)
        }
        return gate
      }
      const free = (gate: Gate) => gate.inUse < settings.concurrency && gate.waiting.length === 0
      /**
       * A free turn is taken at once, a busy tenant's request queues (first come first served)
       * up to `waitMs`; the turn ends with the work, however it ends. A handful of the runtime's
       * steps on every request, where a semaphore with a timed wait would take many times more.
       */
      const inTurn = <A, E, R>(tenantId: string, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | TenantBusy, R> =>
        Effect.uninterruptibleMask((restore) =>
          Effect.suspend(() => {
            const held = gateOf(tenantId)
            const work = Effect.matchCauseEffect(restore(effect), {
              onFailure: (cause) => {
                release(tenantId, held)
                return Effect.failCause(cause)
              },
              onSuccess: (value) => {
                release(tenantId, held)
                return Effect.succeed(value)
              }
            })
            if (free(held)) {
              held.inUse++
              return work
            }
            return Effect.andThen(restore(waitForTurn(tenantId, held)), work)
          })
        )
      const run = options.oneSession
        ? <A, E, R>(tenantId: string, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | TenantBusy, R> => inTurn(tenantId, Effect.provideService(effect, SessionOwner, tenantId))
        : inTurn
      return { settings, run }
    }))
}
