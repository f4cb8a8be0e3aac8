import { ALL_PERMISSIONS, type ApiKey, parsePermissionSpecs, type PermissionGrant, Tenancy } from "@erp/core"
import { type Command } from "commander"
import { Effect } from "effect"
import { CliFailure, printJson, runWithCore, type StoreFlags, warn } from "../runtime.js"
import { collect } from "./users.js"

const describeGrant = (grant: PermissionGrant) => {
  const actions = (["read", "create", "update", "delete"] as const).filter((action) => grant[`can_${action}`])
  return `${grant.resource_code}:${actions.length === 4 ? "*" : actions.join(",")}`
}

const today = () => new Date().toISOString().slice(0, 10)

/** Whether the key works today: revoked wins over expired (a key stops at 00:00 UTC of its expiry date). */
export const keyStatus = (key: ApiKey): "active" | "expired" | "revoked" =>
  key.revoked_at !== null ? "revoked" : key.expires_at !== null && key.expires_at <= today() ? "expired" : "active"

const describeKey = (key: ApiKey) => {
  const status = keyStatus(key)
  const since = status === "revoked" ? ` ${key.revoked_at}` : status === "expired" ? ` ${key.expires_at}` : ""
  return [
    `${key.id}  ${key.prefix}  ${key.name}  ${status}${since}`,
    `  permissions: ${key.permissions.map(describeGrant).join(" ")}`,
    `  expires: ${key.expires_at ?? "never"}  last used: ${key.last_used_at ?? "never"}  rate limit: ${key.rate_limit_per_minute === null ? "the tenant's" : `${key.rate_limit_per_minute}/min`}`
  ].join("\n")
}

export const registerKeys = (program: Command) => {
  const keys = program.command("keys").description("Manage API keys")
  keys
    .command("create")
    .description("Create an API key; its token is printed once")
    .requiredOption("--tenant <id>", "Tenant id")
    .requiredOption("--name <name>", "Key name")
    .option("--description <text>", "What the key is for")
    .option("--all", "Every permission on every resource")
    .option("--permission <resource:action>", "Permission, repeatable: products:read, customers:*, *:read", collect)
    .option("--expires-at <YYYY-MM-DD>", "The key stops working at 00:00 UTC of this date")
    .option("--rate-limit <per-minute>", "Requests a minute this key may send (default: the tenant's limit, 6,000 unless set)")
    .option("--json", "Print the key, token included, as one JSON object")
    .addHelpText("after", `
Examples:
  erp keys create --tenant <tenant-id> --name "ERP sync" --all --json
  erp keys create --tenant <tenant-id> --name "Read only" --permission products:read --permission customers:read
  erp keys create --tenant <tenant-id> --name "Catalogs" --permission "*:read" --expires-at 2027-01-01
  erp keys create --tenant <tenant-id> --name "Nightly import" --all --rate-limit 600
`)
    .action(async (options: { tenant: string; name: string; description?: string; all?: boolean; permission?: Array<string>; expiresAt?: string; rateLimit?: string; json?: boolean }, command: Command) => {
      const rateLimit = options.rateLimit === undefined ? undefined : Number(options.rateLimit)
      if (rateLimit !== undefined && !/^\d+$/.test(options.rateLimit ?? "")) throw new CliFailure(`--rate-limit must be a whole number of requests per minute, got "${options.rateLimit}"`)
      if (Boolean(options.all) === Boolean(options.permission?.length)) {
        throw new CliFailure("Give either --all or at least one --permission resource:action")
      }
      const { key, token } = await runWithCore(
        command.optsWithGlobals<StoreFlags>(),
        Effect.gen(function* () {
          const permissions = options.all ? ALL_PERMISSIONS : yield* Effect.fromResult(parsePermissionSpecs(options.permission ?? []))
          const tenancy = yield* Tenancy
          return yield* tenancy.createApiKey({
            tenantId: options.tenant,
            name: options.name,
            description: options.description,
            permissions,
            expiresAt: options.expiresAt,
            rateLimitPerMinute: rateLimit
          })
        })
      )
      if (key.expires_at !== null && key.expires_at <= today()) {
        warn(`expires_at ${key.expires_at} is not in the future: the key is already expired and every request with it gets 401.`)
      }
      if (options.json) {
        printJson({ ...key, token })
        return
      }
      process.stdout.write(`${describeKey(key)}\n\nToken (shown only now, store it safely):\n${token}\n`)
    })
  keys
    .command("list")
    .description("List a tenant's API keys (never their secrets), each active, expired or revoked")
    .requiredOption("--tenant <id>", "Tenant id")
    .option("--json", "Print a JSON array")
    .action(async (options: { tenant: string; json?: boolean }, command: Command) => {
      const list = await runWithCore(command.optsWithGlobals<StoreFlags>(), Effect.flatMap(Tenancy, (tenancy) => tenancy.listApiKeys(options.tenant)))
      if (options.json) printJson(list.map((key) => ({ ...key, status: keyStatus(key) })))
      else process.stdout.write(list.length === 0 ? "No API keys\n" : list.map(describeKey).join("\n") + "\n")
    })
  keys
    .command("revoke")
    .description("Revoke an API key at once (soft delete)")
    .argument("<key-id>", "API key id")
    .option("--json", "Print the revoked key as one JSON object")
    .action(async (keyId: string, options: { json?: boolean }, command: Command) => {
      const key = await runWithCore(command.optsWithGlobals<StoreFlags>(), Effect.flatMap(Tenancy, (tenancy) => tenancy.revokeApiKey(keyId)))
      if (options.json) printJson(key)
      else process.stdout.write(`Revoked ${key.prefix} (${key.name}) at ${key.revoked_at}\n`)
    })
}
