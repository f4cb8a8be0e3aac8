import { Tenancy } from "@erp/core"
import { type Command } from "commander"
import { Effect } from "effect"
import { CliFailure, printJson, runWithCore, type StoreFlags } from "../runtime.js"

export const registerTenants = (program: Command) => {
  const tenants = program.command("tenants").description("Manage tenants (companies)")
  tenants
    .command("create")
    .description("Create a tenant")
    .requiredOption("--name <name>", "Tenant name")
    .requiredOption("--country <code>", "ISO 3166-1 alpha-2 country code, e.g. BR or US")
    .option("--time-zone <zone>", "IANA time zone deciding the tenant's today (default: the country's main zone, e.g. America/Sao_Paulo for BR)")
    .option("--json", "Print the tenant as one JSON object")
    .addHelpText("after", `
Examples:
  erp tenants create --name "Acme Ltda" --country BR
  erp tenants create --name "Acme Inc" --country US --time-zone America/Los_Angeles --json
`)
    .action(async (options: { name: string; country: string; timeZone?: string; json?: boolean }, command: Command) => {
      const tenant = await runWithCore(command.optsWithGlobals<StoreFlags>(), Effect.flatMap(Tenancy, (tenancy) =>
        tenancy.createTenant({ name: options.name, countryCode: options.country, timeZone: options.timeZone })))
      if (options.json) printJson(tenant)
      else process.stdout.write(`Created tenant ${tenant.name} (${tenant.country_code}, ${tenant.time_zone})\nid: ${tenant.id}\n`)
    })
  tenants
    .command("set-time-zone")
    .description("Change a tenant's time zone (its today: when payables become overdue)")
    .requiredOption("--tenant <id>", "Tenant id")
    .requiredOption("--time-zone <zone>", "IANA time zone, e.g. America/Manaus")
    .option("--json", "Print the tenant as one JSON object")
    .action(async (options: { tenant: string; timeZone: string; json?: boolean }, command: Command) => {
      const tenant = await runWithCore(command.optsWithGlobals<StoreFlags>(), Effect.flatMap(Tenancy, (tenancy) => tenancy.setTimeZone(options.tenant, options.timeZone)))
      if (options.json) printJson(tenant)
      else process.stdout.write(`Tenant ${tenant.name} now uses ${tenant.time_zone}\n`)
    })
  tenants
    .command("set-rate-limit")
    .description("Set how many requests a minute each of a tenant's credentials may send (keys created with --rate-limit keep theirs)")
    .requiredOption("--tenant <id>", "Tenant id")
    .option("--per-minute <n>", "Requests a minute per credential (bursts: 100 a second, or the minute's average if higher)")
    .option("--default", "Back to the default, 6,000 a minute")
    .option("--json", "Print the tenant as one JSON object")
    .action(async (options: { tenant: string; perMinute?: string; default?: boolean; json?: boolean }, command: Command) => {
      if (Boolean(options.default) === (options.perMinute !== undefined)) throw new CliFailure("Give either --per-minute <n> or --default")
      if (options.perMinute !== undefined && !/^\d+$/.test(options.perMinute)) throw new CliFailure(`--per-minute must be a whole number, got "${options.perMinute}"`)
      const perMinute = options.perMinute === undefined ? null : Number(options.perMinute)
      const tenant = await runWithCore(command.optsWithGlobals<StoreFlags>(), Effect.flatMap(Tenancy, (tenancy) => tenancy.setRateLimit(options.tenant, perMinute)))
      if (options.json) printJson({ ...tenant, rate_limit_per_minute: perMinute })
      else process.stdout.write(`Tenant ${tenant.name}: ${perMinute === null ? "the default 6000" : perMinute} requests a minute per credential\n`)
    })
  tenants
    .command("list")
    .description("List tenants")
    .option("--json", "Print a JSON array")
    .action(async (options: { json?: boolean }, command: Command) => {
      const list = await runWithCore(command.optsWithGlobals<StoreFlags>(), Effect.flatMap(Tenancy, (tenancy) => tenancy.listTenants))
      if (options.json) printJson(list)
      else if (list.length === 0) process.stdout.write("No tenants yet. Create one: erp tenants create --name \"Acme Ltda\" --country BR\n")
      else for (const tenant of list) process.stdout.write(`${tenant.id}  ${tenant.country_code}  ${tenant.time_zone}  ${tenant.name}\n`)
    })
}
