import { cliSettings, describeStore, ensureDemoTenant, explainStartupFailure, firstStartBanner, layerCore, loadConfigSync, type StartupContext } from "@erp/core"
import { checkPortFree, layerNodeServer } from "@erp/http"
import { Effect, Layer } from "effect"
import { HttpServer } from "effect/http"
import { CliFailure, reportFailure, runUntilStopped, storeFrom, type StoreFlags } from "../runtime.js"
import { dispatcherOptionsFrom, layerWebhooksIf, type WebhookFlags, webhookSettingsFrom } from "./worker.js"

/** The options of `erp serve` (declared in serve.ts, run here). */
export interface ServeOptions {
  readonly port?: string
  readonly host?: string
  readonly publicUrl?: string
  readonly dynamicRegistration: boolean
  readonly trustProxy?: boolean
  readonly json?: boolean
  readonly webhooks: boolean
  readonly panel: boolean
}

const parsePort = (value: string) => {
  const port = Number(value)
  if (!/^\d+$/.test(value.trim()) || port > 65535) throw new CliFailure(`--port must be a number from 0 to 65535, got "${value}"`)
  return port
}

/** `erp serve`: checks the port, opens the core, listens, and runs until SIGINT or SIGTERM. */
export const runServe = async (options: ServeOptions, flags: StoreFlags) => {
  const webhooks = dispatcherOptionsFrom(options as ServeOptions & WebhookFlags)
  const store = storeFrom(flags)
  const listen = {
    host: options.host ?? loadConfigSync(cliSettings.host.config),
    port: options.port !== undefined ? parsePort(options.port) : loadConfigSync(cliSettings.port.config)
  }
  const context: StartupContext = { store, listen }
  // Before the store: a busy port should not cost a migration to find out.
  await checkPortFree(listen.host, listen.port).catch((error) => {
    const explained = explainStartupFailure(error, context)
    throw new CliFailure(explained.message, { cause: explained.cause })
  })
  const oauth = {
    ...(options.publicUrl ? { publicUrl: options.publicUrl } : {}),
    ...(options.dynamicRegistration === false ? { dynamicRegistration: false } : {}),
    ...(options.trustProxy ? { trustProxy: true } : {})
  }
  const program = Effect.gen(function* () {
    const server = yield* HttpServer.HttpServer
    const address = server.address
    const url = address._tag === "UnixPathAddress" ? address.path : HttpServer.formatAddress(address)
    const demo = yield* ensureDemoTenant()
    yield* Effect.sync(() => {
      if (options.json) {
        process.stdout.write(`${JSON.stringify({ url, store: describeStore(store), demo: demo ? { tenant_id: demo.tenant.id, email: demo.email, token: demo.token } : null })}\n`)
        return
      }
      process.stdout.write(`erp listening on ${url} (${describeStore(store)})\n`)
      if (demo) process.stdout.write(firstStartBanner(url, demo) + "\n")
    })
    return yield* Effect.never
  }).pipe(
    Effect.provide(Layer.suspend(() =>
      Layer.merge(layerNodeServer({ ...listen, panel: options.panel }), layerWebhooksIf(options.webhooks, webhooks)).pipe(Layer.provideMerge(layerCore(store, { oauth, webhooks: webhookSettingsFrom(options as ServeOptions & WebhookFlags) })))
    )),
    // A start-up failure is one plain line; SIGINT and SIGTERM interrupt (closing the store), which is no failure.
    Effect.catchCause((cause) => Effect.sync(() => reportFailure(explainStartupFailure(cause, context), flags.verbose === true)))
  )
  runUntilStopped(program)
}
