import { describeStore, type DispatcherOptions, explainStartupFailure, layerCore, layerWebhookDispatcher, type StartupContext, type WebhookSettingsShape } from "@erp/core"
import { type Command } from "commander"
import { Effect, Layer } from "effect"
import { CliFailure, reportFailure, runUntilStopped, storeFrom, type StoreFlags } from "../runtime.js"

export interface WebhookFlags {
  readonly allowPrivateWebhooks?: boolean
  readonly concurrency?: string
}

const positive = (name: string, value: string | undefined): number | undefined => {
  if (value === undefined || value === "") return undefined
  const number = Number(value)
  if (!/^\d+$/.test(value.trim()) || number < 1) throw new CliFailure(`${name} must be a whole number above 0, got "${value}"`)
  return number
}

/** The dispatcher's settings from the flags; the rest it reads from the configuration (ERP_WEBHOOKS_LEASE_SECONDS). */
export const dispatcherOptionsFrom = (flags: WebhookFlags): DispatcherOptions => {
  const concurrency = positive("--concurrency", flags.concurrency)
  return concurrency ? { concurrency } : {}
}

/** `--allow-private-webhooks` wins over ERP_WEBHOOKS_ALLOW_PRIVATE, for the endpoint rules and the dispatcher alike. */
export const webhookSettingsFrom = (flags: WebhookFlags): Partial<WebhookSettingsShape> => (flags.allowPrivateWebhooks ? { allowPrivate: true } : {})

export const layerWebhooksIf = (enabled: boolean, options: DispatcherOptions) => (enabled ? layerWebhookDispatcher(options) : Layer.empty)

export const registerWorker = (program: Command) =>
  program
    .command("worker")
    .description("Send webhooks, without serving HTTP: any number of workers and hosts share one PostgreSQL")
    .option("--concurrency <n>", "Attempts in flight in this worker (default 16; at most 4 per endpoint across all workers)")
    .option("--allow-private-webhooks", "Webhook URLs may be http and private or loopback addresses: development and tests only (ERP_WEBHOOKS_ALLOW_PRIVATE=true)")
    .addHelpText("after", `
Environment: DATABASE_URL, ERP_SECRET_KEY, ERP_WEBHOOKS_ALLOW_PRIVATE=true, ERP_WEBHOOKS_LEASE_SECONDS (default 60:
how long a claimed delivery stays with a worker that stopped answering); docs/configuration.md lists every variable.

Examples:
  erp worker --database-url postgres://user:pw@db/erp     # beside "erp serve --no-webhooks" hosts
  erp worker --concurrency 32
`)
    .action((options: WebhookFlags, command: Command) => {
      const flags = command.optsWithGlobals<StoreFlags>()
      const store = storeFrom(flags)
      const context: StartupContext = { store }
      const dispatcher = dispatcherOptionsFrom(options)
      const program = Effect.gen(function* () {
        yield* Effect.sync(() => process.stdout.write(`erp worker sending webhooks (${describeStore(store)})\n`))
        return yield* Effect.never
      }).pipe(
        Effect.provide(Layer.suspend(() => layerWebhookDispatcher(dispatcher).pipe(Layer.provideMerge(layerCore(store, { webhooks: webhookSettingsFrom(options) }))))),
        // SIGINT and SIGTERM interrupt: attempts in flight finish (or are released) and the store closes.
        Effect.catchCause((cause) => Effect.sync(() => reportFailure(explainStartupFailure(cause, context), flags.verbose === true)))
      )
      runUntilStopped(program)
    })
