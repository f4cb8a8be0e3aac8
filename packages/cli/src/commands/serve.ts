import { HttpServer } from "@effect/platform"
import { NodeRuntime } from "@effect/platform-node"
import { describeStore, ensureDemoTenant, explainStartupFailure, firstStartBanner, layerCore, type StartupContext } from "@erp/core"
import { dispatcherOptionsFrom, layerWebhooksIf, type WebhookFlags } from "./worker.js"
import { checkPortFree, layerNodeServer } from "@erp/http"
import { type Command, Option } from "commander"
import { Effect, Layer } from "effect"
import { CliFailure, reportFailure, storeFrom, type StoreFlags } from "../runtime.js"

const parsePort = (value: string) => {
  const port = Number(value)
  if (!/^\d+$/.test(value.trim()) || port > 65535) throw new CliFailure(`--port must be a number from 0 to 65535, got "${value}"`)
  return port
}

interface ServeOptions {
  readonly port: string
  readonly host: string
  readonly publicUrl?: string
  readonly dynamicRegistration: boolean
  readonly trustProxy?: boolean
  readonly json?: boolean
  readonly webhooks: boolean
  readonly panel: boolean
}

const EXAMPLES = `
Environment: PORT, HOST, DATABASE_URL, ERP_DATA_DIR, ERP_PUBLIC_URL, ERP_DYNAMIC_REGISTRATION=false,
ERP_TRUST_PROXY=true, ERP_JWT_* (an external identity provider), ERP_WEBHOOKS_ALLOW_PRIVATE=true,
ERP_WEBHOOKS_LEASE_SECONDS; the options above win over them.

Examples:
  erp serve                                             # http://127.0.0.1:3000, embedded store in .erp-data/
  PORT=8080 erp serve                                   # or --port 8080
  erp serve --host 0.0.0.0 --database-url postgres://user:pw@db/erp
  erp serve --public-url https://erp.example.com        # behind a proxy: the OAuth issuer
  erp serve --public-url https://example.com/erp        # behind a proxy that maps /erp/… to /…
  erp serve --no-webhooks                               # webhooks sent by "erp worker" processes instead
  erp serve --no-panel                                  # the API only: no web console at /panel
`

export const registerServe = (program: Command) =>
  program
    .command("serve")
    .description("Start the HTTP host (checks the port, then migrates the store and loads catalogs)")
    .addOption(new Option("--port <port>", "Port to listen on, 0 for any free one").default(process.env.PORT ?? "3000", "PORT, else 3000"))
    .addOption(new Option("--host <host>", "Address to bind").default(process.env.HOST ?? "127.0.0.1", "HOST, else 127.0.0.1"))
    .option("--public-url <url>", "Public base URL, the OAuth issuer (default ERP_PUBLIC_URL, else each request's Host)")
    .option("--no-dynamic-registration", "Refuse OAuth dynamic client registration (RFC 7591)")
    .option("--trust-proxy", "Per-IP limits read X-Forwarded-For (only behind a proxy that sets it; default ERP_TRUST_PROXY)")
    .option("--json", "Once listening, print {\"url\", \"store\", \"demo\"} as one JSON line instead of the banner (demo: the first start's tenant, admin and key)")
    .option("--no-webhooks", "Do not send webhooks from this host (run erp worker instead)")
    .option("--no-panel", "Do not serve the panel, the tenant admins' web console at /panel")
    .option("--allow-private-webhooks", "Webhook URLs may be http and private or loopback addresses: development and tests only (ERP_WEBHOOKS_ALLOW_PRIVATE=true)")
    .addHelpText("after", EXAMPLES)
    .action(async (options: ServeOptions, command: Command) => {
      const flags = command.optsWithGlobals<StoreFlags>()
      const webhooks = dispatcherOptionsFrom(options as ServeOptions & WebhookFlags)
      const store = storeFrom(flags)
      const listen = { host: options.host, port: parsePort(options.port) }
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
        const url = address._tag === "TcpAddress" ? `http://${address.hostname}:${address.port}` : address.path
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
          Layer.merge(layerNodeServer({ ...listen, panel: options.panel }), layerWebhooksIf(options.webhooks, webhooks)).pipe(Layer.provideMerge(layerCore(store, { oauth })))
        )),
        // A start-up failure is one plain line; SIGINT and SIGTERM interrupt (closing the store), which is no failure.
        Effect.catchAllCause((cause) => Effect.sync(() => reportFailure(explainStartupFailure(cause, context), flags.verbose === true)))
      )
      NodeRuntime.runMain(program, { disableErrorReporting: true })
    })
