import { HttpServer } from "@effect/platform"
import { NodeRuntime } from "@effect/platform-node"
import { DataDirLocked, describeStore, ensureDemoTenant, layerCore } from "@erp/core"
import { layerNodeServer } from "@erp/http"
import { type Command } from "commander"
import { Effect, Layer } from "effect"
import { storeFrom, type StoreFlags } from "../runtime.js"

const banner = (url: string, demo: { tenant: { name: string; id: string }; email: string; token: string }) =>
  [
    "",
    "First start: created a demo tenant and an admin API key.",
    `  tenant: ${demo.tenant.name} (${demo.tenant.id})`,
    `  admin user: ${demo.email}`,
    "  API key (shown only now, store it safely):",
    `  ${demo.token}`,
    "",
    "Try it:",
    `  curl -s ${url}/products -H "Authorization: Bearer ${demo.token}"`,
    ""
  ].join("\n")

export const registerServe = (program: Command) =>
  program
    .command("serve")
    .description("Start the HTTP host (migrates the store and loads catalogs first)")
    .option("--port <port>", "Port to listen on", (value) => Number.parseInt(value, 10), Number(process.env.PORT ?? 3000))
    .option("--host <host>", "Address to bind", process.env.HOST ?? "127.0.0.1")
    .option("--public-url <url>", "Public base URL, the OAuth issuer (default ERP_PUBLIC_URL, else each request's Host)")
    .option("--no-dynamic-registration", "Refuse OAuth dynamic client registration (RFC 7591)")
    .option("--trust-proxy", "Per-IP limits read X-Forwarded-For (only behind a proxy that sets it; default ERP_TRUST_PROXY)")
    .action((options: { port: number; host: string; publicUrl?: string; dynamicRegistration: boolean; trustProxy?: boolean }, command: Command) => {
      const store = storeFrom(command.optsWithGlobals<StoreFlags>())
      const oauth = {
        ...(options.publicUrl ? { publicUrl: options.publicUrl.replace(/\/+$/, "") } : {}),
        ...(options.dynamicRegistration === false ? { dynamicRegistration: false } : {}),
        ...(options.trustProxy ? { trustProxy: true } : {})
      }
      const program = Effect.gen(function* () {
        const server = yield* HttpServer.HttpServer
        const address = server.address
        const url = address._tag === "TcpAddress" ? `http://${address.hostname}:${address.port}` : address.path
        const demo = yield* ensureDemoTenant()
        yield* Effect.sync(() => {
          process.stdout.write(`erp listening on ${url} (${describeStore(store)})\n`)
          if (demo) process.stdout.write(banner(url, demo) + "\n")
        })
        return yield* Effect.never
      }).pipe(
        Effect.provide(layerNodeServer({ port: options.port, host: options.host }).pipe(Layer.provideMerge(layerCore(store, { oauth })))),
        Effect.catchAllDefect((defect) =>
          Effect.sync(() => {
            process.stderr.write(`${defect instanceof DataDirLocked || defect instanceof Error ? defect.message : String(defect)}\n`)
            process.exitCode = 1
          }))
      )
      NodeRuntime.runMain(program, { disableErrorReporting: false })
    })
