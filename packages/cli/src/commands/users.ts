import { parsePermissionSpecs, Tenancy } from "@erp/core"
import { type Command, Option } from "commander"
import { Effect } from "effect"
import { printJson, runWithCore, type StoreFlags } from "../runtime.js"

const collect = (value: string, previous: Array<string> = []) => [...previous, value]

export const registerUsers = (program: Command) => {
  const users = program.command("users").description("Manage users (people who sign in)")
  users
    .command("create")
    .description("Create a user")
    .requiredOption("--email <email>", "Email address (unique)")
    .requiredOption("--name <name>", "Display name")
    .option("--json", "Print the user as one JSON object")
    .action(async (options: { email: string; name: string; json?: boolean }, command: Command) => {
      const user = await runWithCore(command.optsWithGlobals<StoreFlags>(), Effect.flatMap(Tenancy, (tenancy) => tenancy.createUser(options)))
      if (options.json) printJson(user)
      else process.stdout.write(`Created user ${user.email}\nid: ${user.id}\n`)
    })

  const members = program.command("members").description("Manage tenant memberships")
  members
    .command("add")
    .description("Make a user a member of a tenant")
    .requiredOption("--tenant <id>", "Tenant id")
    .requiredOption("--user <id-or-email>", "User id or email")
    .addOption(new Option("--role <role>", "Role in the tenant").choices(["admin", "member"]).makeOptionMandatory())
    .option("--permission <resource:action>", "Permission of a member, repeatable (e.g. products:read, customers:*)", collect)
    .option("--json", "Print the membership as one JSON object")
    .action(async (options: { tenant: string; user: string; role: "admin" | "member"; permission?: Array<string>; json?: boolean }, command: Command) => {
      const membership = await runWithCore(
        command.optsWithGlobals<StoreFlags>(),
        Effect.gen(function* () {
          const permissions = yield* parsePermissionSpecs(options.permission ?? [])
          const tenancy = yield* Tenancy
          return yield* tenancy.addMember({ tenantId: options.tenant, userId: options.user, role: options.role, permissions })
        })
      )
      if (options.json) printJson(membership)
      else process.stdout.write(`Added ${options.user} to tenant ${membership.tenant_id} as ${membership.role}\nid: ${membership.id}\n`)
    })
}

export { collect }
