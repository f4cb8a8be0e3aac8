import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { type CoreOptions, describeStore, explainStartupFailure, layerCore, resolveStoreLocation, type StoreLocation } from "@erp/core"
import { Cause, type Effect, Exit, Layer, ManagedRuntime, Option, References } from "effect"

/** Options every command takes to find the store, and `--verbose`. */
export interface StoreFlags {
  readonly databaseUrl?: string
  readonly dataDir?: string
  readonly verbose?: boolean
}

export const storeFrom = (flags: StoreFlags): StoreLocation => resolveStoreLocation(flags)

/** A failure the user can act on: printed as one line (the details only with `--verbose`), exit code 1. */
export class CliFailure extends Error {}

const describeFailure = (cause: Cause.Cause<unknown>): string => {
  const failure = Cause.findErrorOption(cause)
  const error = Option.isSome(failure) ? failure.value : Cause.squash(cause)
  if (typeof error === "object" && error !== null && "message" in error) return String((error as { message: unknown }).message)
  return String(error)
}

/** What `--verbose` adds below the one line: the whole cause, stacks included. */
const details = (error: unknown): string => {
  if (Cause.isCause(error)) return Cause.pretty(error)
  if (error instanceof Error) {
    const inner = error.cause === undefined ? "" : `\nCaused by: ${details(error.cause)}`
    return `${error.stack ?? error.message}${inner}`
  }
  return String(error)
}

/** Prints a failure as the user should see it: `Error: <what failed; what to do>`, the rest only with `--verbose`. */
export const reportFailure = (error: unknown, verbose: boolean) => {
  const message = error instanceof Error ? error.message : String(error)
  process.stderr.write(`Error: ${message}\n`)
  if (verbose) {
    const cause = error instanceof Error && error.cause !== undefined ? error.cause : error
    process.stderr.write(`${details(cause)}\n`)
  }
  process.exitCode = 1
}

/** Opens the core over the store the flags name (a start-up failure becomes one plain line), runs an effect, closes the store. */
export const runWithCore = async <A, E>(
  flags: StoreFlags,
  effect: Effect.Effect<A, E, Layer.Success<ReturnType<typeof layerCore>>>,
  options: CoreOptions = {}
): Promise<A> => {
  const store = storeFrom(flags)
  // No tracer can be installed in the CLI: spans would only be made to be dropped (and a statement
  // outside a transaction goes to the driver directly only when nothing traces it).
  const runtime = ManagedRuntime.make(layerCore(store, options).pipe(Layer.provideMerge(Layer.succeed(References.TracerEnabled, false))))
  try {
    try {
      await runtime.context()
    } catch (error) {
      const explained = explainStartupFailure(error, { store })
      throw new CliFailure(explained.message, { cause: explained.cause })
    }
    const exit = await runtime.runPromiseExit(effect)
    if (Exit.isSuccess(exit)) return exit.value
    throw new CliFailure(describeFailure(exit.cause), { cause: exit.cause })
  } finally {
    await runtime.dispose().catch(() => undefined)
  }
}

export const storeDescription = (flags: StoreFlags) => describeStore(storeFrom(flags))

export const printJson = (value: unknown) => process.stdout.write(JSON.stringify(value, null, 2) + "\n")

export const warn = (message: string) => process.stderr.write(`Warning: ${message}\n`)

/**
 * Runs a command that serves until stopped (`serve`, `worker`): SIGINT and SIGTERM interrupt it,
 * which closes the store and exits 0, a clean stop; a failure it reports itself (exit code 1).
 */
export const runUntilStopped = (program: Effect.Effect<void>) =>
  NodeRuntime.runMain(program, {
    disableErrorReporting: true,
    teardown: (exit, onExit) => onExit(Exit.isFailure(exit) && !Cause.hasInterruptsOnly(exit.cause) ? 1 : 0)
  })
