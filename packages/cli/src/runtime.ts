import { DataDirLocked, describeStore, layerCore, operatorPrincipal, resolveStoreLocation, type StoreLocation, Tenancy } from "@erp/core"
import { Cause, Effect, Exit, type Layer, ManagedRuntime, Option } from "effect"

/** Options every command takes to find the store. */
export interface StoreFlags {
  readonly databaseUrl?: string
  readonly dataDir?: string
}

export const storeFrom = (flags: StoreFlags): StoreLocation => resolveStoreLocation(flags)

/** A failure the user can act on: printed as one line, exit code 1. */
export class CliFailure extends Error {}

const describeFailure = (cause: Cause.Cause<unknown>): string => {
  const failure = Cause.failureOption(cause)
  const error = Option.isSome(failure) ? failure.value : Cause.squash(cause)
  if (error instanceof DataDirLocked || error instanceof CliFailure) return error.message
  if (typeof error === "object" && error !== null && "message" in error && "_tag" in error) {
    return String((error as { message: unknown }).message)
  }
  const deep = Cause.squash(cause)
  return deep instanceof Error ? deep.message : String(deep)
}

/** Runs an effect against the core over the store the flags name, then closes the store. */
export const runWithCore = async <A, E>(
  flags: StoreFlags,
  effect: Effect.Effect<A, E, Layer.Layer.Success<ReturnType<typeof layerCore>>>
): Promise<A> => {
  const runtime = ManagedRuntime.make(layerCore(storeFrom(flags)))
  try {
    const exit = await runtime.runPromiseExit(effect)
    if (Exit.isSuccess(exit)) return exit.value
    throw new CliFailure(describeFailure(exit.cause))
  } catch (error) {
    if (error instanceof CliFailure) throw error
    const cause = (error as { cause?: unknown }).cause
    throw new CliFailure(describeFailure(Cause.die(cause ?? error)))
  } finally {
    await runtime.dispose().catch(() => undefined)
  }
}

export const storeDescription = (flags: StoreFlags) => describeStore(storeFrom(flags))

export const printJson = (value: unknown) => process.stdout.write(JSON.stringify(value, null, 2) + "\n")

export const warn = (message: string) => process.stderr.write(`Warning: ${message}\n`)


/** The operator acts as the tenant's admin (exports, restores); events name the CLI as the actor. */
export const operatorFor = (tenantId: string) =>
  Effect.map(Effect.flatMap(Tenancy, (tenancy) => tenancy.getTenant(tenantId)), (tenant) => operatorPrincipal(tenant))
