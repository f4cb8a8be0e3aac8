import { operatorPrincipal, ResourceEngine, sendTestEvent, webhookEndpoints } from "@erp/core"
import { type Command } from "commander"
import { Effect } from "effect"
import { CliFailure, printJson, runWithCore, type StoreFlags } from "../runtime.js"
import { webhookSettingsFrom } from "./worker.js"

interface TenantOption {
  readonly tenant: string
  readonly json?: boolean
}

const rotateAction = webhookEndpoints.actions!.find((action) => action.name === "rotate-secret")!

const asOperator = <A, E>(command: Command, tenant: string, use: (principal: Effect.Success<ReturnType<typeof operatorPrincipal>>, engine: ResourceEngine["Service"]) => Effect.Effect<A, E>) =>
  runWithCore(command.optsWithGlobals<StoreFlags>(), Effect.flatMap(operatorPrincipal(tenant, "cli"), (principal) => Effect.flatMap(ResourceEngine, (engine) => use(principal, engine))))

const eventList = (text: string) => text.split(",").map((name) => name.trim()).filter(Boolean)

const line = (endpoint: Record<string, unknown>) =>
  `${String(endpoint.id)}  ${endpoint.enabled ? "enabled " : "disabled"}  ${String(endpoint.url)}  ${(endpoint.events as ReadonlyArray<string>).join(",")}` +
  (endpoint.disabled_reason ? `  (${String(endpoint.disabled_reason)})` : "")

/** `erp webhooks create|list|rotate|disable|test`: a tenant's webhook endpoints, as its admin. */
export const registerWebhooks = (program: Command) => {
  const webhooks = program
    .command("webhooks")
    .description("Manage a tenant's webhook endpoints (signed Standard Webhooks deliveries of its events)")
    .addHelpText("after", `
Examples:
  erp webhooks create --tenant <tenant-id> --url https://hooks.example.com/erp --events "products.*,sales-orders.update"
  erp webhooks list --tenant <tenant-id>
  erp webhooks rotate <endpoint-id> --tenant <tenant-id>
  erp webhooks disable <endpoint-id> --tenant <tenant-id>
  erp webhooks test <endpoint-id> --tenant <tenant-id>
`)

  webhooks
    .command("create")
    .description("Add an endpoint; prints its signing secret (whsec_…), shown this once")
    .requiredOption("--tenant <id>", "Tenant id")
    .requiredOption("--url <url>", "https URL events are POSTed to")
    .option("--events <list>", "Comma-separated: products.update, payables.*, or * (default *)", "*")
    .option("--description <text>", "What the endpoint is for")
    .option("--disabled", "Create it disabled")
    .option("--json", "Print the endpoint (with its secret) as one JSON object")
    .action(async (options: TenantOption & { url: string; events: string; description?: string; disabled?: boolean }, command: Command) => {
      const body = {
        url: options.url,
        events: eventList(options.events),
        ...(options.description ? { description: options.description } : {}),
        ...(options.disabled ? { enabled: false } : {})
      }
      const endpoint = await asOperator(command, options.tenant, (principal, engine) => engine.create(webhookEndpoints, principal, body))
      if (options.json) {
        printJson(endpoint)
        return
      }
      process.stdout.write(`Created webhook endpoint ${String(endpoint.id)} for ${String(endpoint.url)}\n`)
      process.stdout.write(`Signing secret (shown once): ${String(endpoint.secret)}\n`)
    })

  webhooks
    .command("list")
    .description("List the tenant's endpoints")
    .requiredOption("--tenant <id>", "Tenant id")
    .option("--json", "Print { data: [...] } as JSON")
    .action(async (options: TenantOption, command: Command) => {
      const page = await asOperator(command, options.tenant, (principal, engine) => engine.list(webhookEndpoints, principal, [["limit", "100"]]))
      if (options.json) {
        printJson({ data: page.data })
        return
      }
      if (page.data.length === 0) process.stdout.write("No webhook endpoints\n")
      for (const endpoint of page.data) process.stdout.write(line(endpoint as Record<string, unknown>) + "\n")
    })

  webhooks
    .command("rotate")
    .description("Make a new signing secret (printed once); the old one also signs for 24 hours")
    .argument("<id>", "Endpoint id")
    .requiredOption("--tenant <id>", "Tenant id")
    .option("--json", "Print { secret, previous_secret_expires_at } as JSON")
    .action(async (id: string, options: TenantOption, command: Command) => {
      const rotated = await asOperator(command, options.tenant, (principal, engine) => engine.action(webhookEndpoints, rotateAction, principal, id, {}, undefined)) as Record<string, unknown>
      if (options.json) {
        printJson(rotated)
        return
      }
      process.stdout.write(`New signing secret (shown once): ${String(rotated.secret)}\nThe previous secret also signs until ${String(rotated.previous_secret_expires_at)}\n`)
    })

  webhooks
    .command("disable")
    .description("Stop sending events to an endpoint (erp webhooks enable, or PATCH enabled=true, turns it back on)")
    .argument("<id>", "Endpoint id")
    .requiredOption("--tenant <id>", "Tenant id")
    .option("--json", "Print the endpoint as JSON")
    .action(async (id: string, options: TenantOption, command: Command) => {
      const endpoint = await asOperator(command, options.tenant, (principal, engine) => engine.update(webhookEndpoints, principal, id, { enabled: false }))
      if (options.json) {
        printJson(endpoint)
        return
      }
      process.stdout.write(`Disabled webhook endpoint ${String(endpoint.id)}\n`)
    })

  webhooks
    .command("enable")
    .description("Send events to a disabled endpoint again")
    .argument("<id>", "Endpoint id")
    .requiredOption("--tenant <id>", "Tenant id")
    .option("--json", "Print the endpoint as JSON")
    .action(async (id: string, options: TenantOption, command: Command) => {
      const endpoint = await asOperator(command, options.tenant, (principal, engine) => engine.update(webhookEndpoints, principal, id, { enabled: true }))
      if (options.json) {
        printJson(endpoint)
        return
      }
      process.stdout.write(`Enabled webhook endpoint ${String(endpoint.id)}\n`)
    })

  webhooks
    .command("test")
    .description("Send a signed webhook.test event to an endpoint now and print the answer (not in the delivery log)")
    .argument("<id>", "Endpoint id")
    .requiredOption("--tenant <id>", "Tenant id")
    .option("--allow-private-webhooks", "Allow http and private addresses (ERP_WEBHOOKS_ALLOW_PRIVATE=true)")
    .option("--json", "Print { status_code, latency_ms, error, response_body } as JSON")
    .action(async (id: string, options: TenantOption & { allowPrivateWebhooks?: boolean }, command: Command) => {
      const result = await runWithCore(command.optsWithGlobals<StoreFlags>(), sendTestEvent(options.tenant, id), { webhooks: webhookSettingsFrom(options) })
      const answer = { status_code: result.statusCode, latency_ms: result.latencyMs, error: result.error, response_body: result.body }
      if (options.json) printJson(answer)
      else process.stdout.write(result.error ? `Failed after ${result.latencyMs} ms: ${result.error}\n` : `Answered ${result.statusCode} in ${result.latencyMs} ms\n`)
      const ok = result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300
      if (!ok) throw new CliFailure(`The endpoint did not accept the test event${result.statusCode !== null ? ` (${result.statusCode})` : ""}`)
    })
}
