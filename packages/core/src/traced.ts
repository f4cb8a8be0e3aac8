import { Effect, References } from "effect"

/**
 * A span named `name` around `effect` when the fiber traces, and nothing otherwise.
 * `Effect.fn(name)` captures a stack trace on every call and `Effect.withSpan` makes a
 * span even for a disabled tracer; on the request path both cost more than the work
 * they wrap. With a tracer installed every span is made.
 */
export const traced = (name: string) => <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.withFiber<A, E, R>((fiber) => (fiber.getRef(References.TracerEnabled) ? Effect.withSpan(effect, name) : effect))
