import { Authenticator, explainStartupFailure, layerCore, type McpToolset, type StoreLocation, Tenancy, Unauthenticated } from "@erp/core"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import { Cause, Effect, Exit, Layer, Logger, ManagedRuntime, Option, References } from "effect"
import { boundCaller, type McpCaller, userCaller } from "./caller.js"
import { makeMcpServer } from "./server.js"

/**
 * stdout carries JSON-RPC and one stray line breaks the client, so while the
 * server runs every console method writes to stderr, whoever calls it
 * (a dependency, the embedded Postgres).
 */
const routeConsoleToStderr = (): (() => void) => {
  const stderr = new console.Console({ stdout: process.stderr, stderr: process.stderr })
  const saved = { log: console.log, info: console.info, debug: console.debug, dir: console.dir, table: console.table, trace: console.trace }
  Object.assign(console, { log: stderr.log, info: stderr.info, debug: stderr.debug, dir: stderr.dir, table: stderr.table, trace: stderr.trace })
  return () => void Object.assign(console, saved)
}

const layerStderrLogger = Layer.merge(Logger.layer([Logger.consolePretty()]), Layer.succeed(Logger.LogToStderr, true))

/** The underlying error (folder locked, server unreachable, ...), so the CLI can print it as is. */
const asError = (cause: Cause.Cause<unknown>): Error => {
  const error = Cause.squash(cause)
  return error instanceof Error ? error : new Error(String(error))
}

/** Who the stdio server acts for: an API key (its tenant), or a local user (every tenant of theirs, via list_tenants). */
export type StdioCredential = { readonly apiKey: string } | { readonly user: string }

/**
 * Serves the registry's tools over stdin/stdout, until the client closes stdin or the
 * process is told to stop; then closes the store. Rejects when the store cannot be
 * opened, the key is refused or the user is unknown. A local user is trusted as the
 * operator who starts the process (no password: whoever runs this command can open the store anyway).
 */
/** How long calls may still run after the client closed stdin. */
const DRAIN_MS = 30_000

export const runStdio = async (
  options: StdioCredential & { readonly store: StoreLocation; readonly toolsets?: ReadonlyArray<McpToolset> }
): Promise<void> => {
  const restoreConsole = routeConsoleToStderr()
  // Nothing traces the stdio server: no spans, and statements outside a transaction go to the driver directly.
  const runtime = ManagedRuntime.make(layerCore(options.store).pipe(Layer.provideMerge(layerStderrLogger), Layer.provideMerge(Layer.succeed(References.TracerEnabled, false))))
  const signals = ["SIGINT", "SIGTERM"] as const
  let stop = () => {}
  let finishThenStop = () => {}
  try {
    const opened = await runtime.runPromiseExit(Effect.void)
    // A store that cannot be opened reads as one plain line (a StartupError), as for every command.
    if (Exit.isFailure(opened)) throw explainStartupFailure(opened.cause, { store: options.store })

    const caller: Effect.Effect<McpCaller, Unauthenticated, Authenticator | Tenancy> = "apiKey" in options
      // The key is checked again on every call, so one revoked mid-session stops at once.
      ? Effect.flatMap(Authenticator, (authenticator) => authenticator.authenticate(options.apiKey)).pipe(
        Effect.catchTag("InvalidRequest", (error) => Effect.fail(new Unauthenticated({ message: error.message, code: error.code }))),
        Effect.map(boundCaller)
      )
      : Effect.flatMap(Tenancy, (tenancy) => tenancy.getUser(options.user)).pipe(
        Effect.mapError(() => new Unauthenticated({ message: `No user ${options.user}`, code: "USER_NOT_FOUND" })),
        Effect.map((user) => userCaller(user.id))
      )
    const checked = await runtime.runPromiseExit(caller)
    if (Exit.isFailure(checked)) {
      const refused = Option.getOrUndefined(Cause.findErrorOption(checked.cause))
      if (!(refused instanceof Unauthenticated)) throw asError(checked.cause)
      throw new Error("apiKey" in options ? `The API key was refused: ${refused.message}` : `${refused.message}: create it with erp users create`)
    }

    // Calls still running when the client closes stdin: a client may send its requests and close
    // at once (a shell pipe does), and still expects the answers.
    const running = new Set<Promise<unknown>>()
    const server = makeMcpServer({
      caller,
      choosesTenant: checked.value.choosesTenant,
      toolsets: options.toolsets,
      run: (effect, runOptions) => {
        const call = runtime.runPromise(effect, runOptions)
        running.add(call)
        void call.then(() => running.delete(call), () => running.delete(call))
        return call
      }
    })
    const closed = new Promise<void>((resolve) => {
      server.onclose = resolve
    })
    stop = () => void server.close()
    finishThenStop = () => {
      const drained = Promise.allSettled([...running])
      const limit = new Promise((resolve) => setTimeout(resolve, DRAIN_MS).unref())
      // One turn after the last call settles, so the SDK has written its answer.
      void Promise.race([drained, limit]).then(() => setImmediate(stop))
    }
    process.stdin.once("end", finishThenStop)
    // A client that went away makes writes fail with EPIPE; that ends the session rather than the process.
    process.stdout.on("error", stop)
    for (const signal of signals) process.once(signal, stop)
    await server.connect(new StdioServerTransport())
    await closed
  } finally {
    process.stdin.off("end", finishThenStop)
    process.stdout.off("error", stop)
    for (const signal of signals) process.off(signal, stop)
    await runtime.dispose()
    restoreConsole()
  }
}
