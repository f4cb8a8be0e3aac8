import { Context, Data, Effect, Layer, Option } from "effect"

/** Too many of one tenant's requests are in the store at once, and the wait for a turn ran out. */
export class TenantBusy extends Data.TaggedError("TenantBusy")<{ readonly concurrency: number; readonly waitMs: number }> {}

export interface TenantGateSettings {
  /** Requests of one tenant in the store at once (`ERP_TENANT_CONCURRENCY`). */
  readonly concurrency: number
  /** Longest a request waits for its tenant's turn before 429 (`ERP_TENANT_QUEUE_MS`, default 10,000). */
  readonly waitMs: number
}

const fromEnv = (name: string, fallback: number): number => {
  const text = process.env[name]
  if (text === undefined || text.trim() === "") return fallback
  const value = Number(text)
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive whole number, got "${text}"`)
  return value
}

/** Resumes after the I/O already waiting is handled (`setImmediate`: no timer, no 1 ms clamp). */
const nextTurnOfTheEventLoop = Effect.async<void>((resume) => {
  const handle = setImmediate(() => resume(Effect.void))
  return Effect.sync(() => clearImmediate(handle))
})

interface Gate {
  readonly semaphore: Effect.Semaphore
  users: number
}

/**
 * Keeps one tenant from taking the whole pool: each tenant has a few turns in the
 * store at once, the others wait (holding no connection) up to a bound, then 429.
 * Other tenants' requests never queue behind it. Turns are per host process.
 */
export class TenantGate extends Context.Tag("erp/core/TenantGate")<TenantGate, {
  readonly settings: TenantGateSettings
  readonly run: <A, E, R>(tenantId: string, effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | TenantBusy, R>
}>() {
  /** Defaults: 4 turns per tenant on PostgreSQL (pool of 10), 1 on the embedded store (one session). */
  static readonly layer = (options: Partial<TenantGateSettings> & { readonly defaultConcurrency: number }) =>
    Layer.sync(TenantGate, () => {
      const settings: TenantGateSettings = {
        concurrency: options.concurrency ?? fromEnv("ERP_TENANT_CONCURRENCY", options.defaultConcurrency),
        waitMs: options.waitMs ?? fromEnv("ERP_TENANT_QUEUE_MS", 10_000)
      }
      const gates = new Map<string, Gate>()
      const enter = (tenantId: string) => {
        let gate = gates.get(tenantId)
        if (!gate) {
          gate = { semaphore: Effect.unsafeMakeSemaphore(settings.concurrency), users: 0 }
          gates.set(tenantId, gate)
        }
        gate.users++
        return gate
      }
      const leave = (tenantId: string) => {
        const gate = gates.get(tenantId)
        if (gate && --gate.users === 0) gates.delete(tenantId)
      }
      const busy = new TenantBusy({ concurrency: settings.concurrency, waitMs: settings.waitMs })
      const waitForTurn = (gate: Gate) => gate.semaphore.take(1).pipe(Effect.timeoutFail({ duration: settings.waitMs, onTimeout: () => busy }))
      const run = <A, E, R>(tenantId: string, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | TenantBusy, R> =>
        // A turn of the event loop first lets requests that arrived together reach the gate, so turns go by
        // arrival (on the embedded store one request's statements would otherwise run ahead). A free turn is
        // taken at once; the timed wait (a timer and a racing fiber) only when the tenant's turns are all in use.
        Effect.zipRight(
          nextTurnOfTheEventLoop,
          Effect.uninterruptibleMask((restore) => {
            const gate = enter(tenantId)
            const waiting = Effect.zipRight(restore(waitForTurn(gate)), Effect.ensuring(restore(effect), gate.semaphore.release(1)))
            return Effect.ensuring(
              Effect.flatMap(gate.semaphore.withPermitsIfAvailable(1)(restore(effect)), Option.match({ onNone: () => waiting, onSome: Effect.succeed })),
              Effect.sync(() => leave(tenantId))
            )
          })
        )
      return { settings, run }
    })
}
