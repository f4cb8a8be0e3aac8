import { Effect, Layer, References } from "effect"

/** The tracer every Effect program has until one is installed: it keeps spans nobody reads. */
const builtInTracer = Effect.runSync(Effect.tracer)

/**
 * Spans only when someone reads them. Left on, every request makes an HTTP span, a span per
 * statement and one per `Effect.fn`, each capturing a stack trace, for the built-in tracer
 * that exports nothing: measurable per request (bench/README.md). A tracer installed around
 * the host (`Layer.succeed(Tracer.Tracer, …)`, an OpenTelemetry layer) keeps every span.
 */
export const layerSpansOnlyForInstalledTracer = Layer.unwrap(
  Effect.map(Effect.tracer, (tracer) => (tracer === builtInTracer ? Layer.succeed(References.TracerEnabled, false) : Layer.empty))
)

/** Whether a tracer was installed around the host (one that is not the built-in tracer). */
export const tracerInstalled = Effect.map(Effect.tracer, (tracer) => tracer !== builtInTracer)
