import { Deferred, Duration, Effect, Exit, Fiber } from "effect"
import { describe, expect, it } from "vitest"
import { TenantGate } from "../src/index.js"

/** The gate alone: turns per tenant, the wait, and turns given back however the work ends. */
const withGate = <A, E>(use: (gate: TenantGate["Service"]) => Effect.Effect<A, E>, waitMs = 1_000) =>
  Effect.runPromise(Effect.provide(Effect.flatMap(TenantGate, use), TenantGate.layer({ defaultConcurrency: 1, waitMs })))

describe("tenant gate", () => {
  it("lets a tenant's requests in one turn at a time, by arrival, while another tenant goes straight in", async () => {
    const order = await withGate((gate) =>
      Effect.gen(function* () {
        const seen: Array<string> = []
        const hold = yield* Deferred.make<void>()
        const first = yield* Effect.forkChild(gate.run("a", Effect.andThen(Deferred.await(hold), Effect.sync(() => seen.push("a1")))))
        yield* Effect.sleep("5 millis")
        const rest = yield* Effect.forkChild(Effect.all(["a2", "a3"].map((name) => gate.run("a", Effect.sync(() => seen.push(name)))), { concurrency: "unbounded" }))
        yield* gate.run("b", Effect.sync(() => seen.push("b1")))
        yield* Deferred.succeed(hold, undefined)
        yield* Fiber.join(first)
        yield* Fiber.join(rest)
        return seen
      }))
    expect(order).toEqual(["b1", "a1", "a2", "a3"])
  })

  it("refuses with TenantBusy when the wait runs out, and gives the turn back when the work fails or is interrupted", async () => {
    const outcome = await withGate((gate) =>
      Effect.gen(function* () {
        const hold = yield* Deferred.make<void>()
        const holder = yield* Effect.forkChild(gate.run("a", Deferred.await(hold)))
        yield* Effect.sleep("5 millis")
        const refused = yield* Effect.exit(gate.run("a", Effect.void))
        // A waiting request whose client went away leaves the queue; the turn is not lost with it.
        const waiting = yield* Effect.forkChild(gate.run("a", Effect.void))
        yield* Effect.sleep("5 millis")
        yield* Fiber.interrupt(waiting)
        yield* Fiber.interrupt(holder)
        const failed = yield* Effect.exit(gate.run("a", Effect.fail("boom")))
        const after = yield* gate.run("a", Effect.succeed("in"))
        return { refused, failed, after }
      }), 20)
    expect(Exit.isFailure(outcome.refused) && JSON.stringify(outcome.refused.cause)).toMatch(/TenantBusy/)
    expect(Exit.isFailure(outcome.failed) && JSON.stringify(outcome.failed.cause)).toMatch(/boom/)
    expect(outcome.after).toBe("in")
  })

  it("refuses each waiting request at its own deadline, not the first one's, and lets in one that a turn reaches in time", async () => {
    const outcome = await withGate((gate) =>
      Effect.gen(function* () {
        const hold = yield* Deferred.make<void>()
        const holder = yield* Effect.forkChild(gate.run("a", Deferred.await(hold)))
        yield* Effect.sleep("5 millis")
        const timed = (name: string) => Effect.timed(Effect.exit(gate.run("a", Effect.succeed(name))))
        const early = yield* Effect.forkChild(timed("early"))
        yield* Effect.sleep("40 millis")
        const late = yield* Effect.forkChild(timed("late"))
        const [earlyTook, earlyExit] = yield* Fiber.join(early)
        // The first waiter's refusal came at 60 ms; the one that came 40 ms later is still waiting, and gets the turn.
        yield* Deferred.succeed(hold, undefined)
        yield* Fiber.join(holder)
        const [lateTook, lateExit] = yield* Fiber.join(late)
        return { earlyMs: Duration.toMillis(earlyTook), earlyExit, lateMs: Duration.toMillis(lateTook), lateExit }
      }), 60)
    expect(Exit.isFailure(outcome.earlyExit) && JSON.stringify(outcome.earlyExit.cause)).toMatch(/TenantBusy/)
    expect(outcome.earlyMs).toBeGreaterThanOrEqual(55)
    expect(outcome.lateExit).toEqual(Exit.succeed("late"))
    expect(outcome.lateMs).toBeLessThan(55)
  })
})
