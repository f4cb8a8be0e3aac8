import { OAuth, parsePermissionSpecs, Tenancy } from "@erp/core"
import { type Command, Option } from "commander"
import { Effect } from "effect"
import { CliFailure, printJson, runWithCore, type StoreFlags } from "../runtime.js"

const readStdin = async () => {
  const chunks: Array<Buffer> = []
  for await (const chunk of process.stdin) chunks.push(Buffer.from(chunk))
  return Buffer.concat(chunks).toString("utf8")
}

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

  users
    .command("set-password")
    .description("Set a user's password for the OAuth sign-in page (at least 10 characters)")
    .requiredOption("--user <id-or-email>", "User id or email")
    .option("--password <password>", "The new password (prefer --password-stdin: arguments are visible to other processes)")
    .option("--password-stdin", "Read the password from standard input")
    .option("--json", "Print the user as one JSON object")
    .addHelpText("after", `
Example:
  printf 'a long passphrase' | erp users set-password --user ana@acme.example --password-stdin
`)
    .action(async (options: { user: string; password?: string; passwordStdin?: boolean; json?: boolean }, command: Command) => {
      const password = options.passwordStdin ? (await readStdin()).replace(/\r?\n$/, "") : options.password
      if (!password) throw new CliFailure("Give --password-stdin (or --password)")
      const user = await runWithCore(command.optsWithGlobals<StoreFlags>(), Effect.flatMap(OAuth, (oauth) => oauth.setPassword(options.user, password)))
      if (options.json) printJson(user)
      else process.stdout.write(`Password set for ${user.email}; their sign-in sessions were ended\n`)
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
    .addHelpText("after", `
Examples:
  erp members add --tenant <tenant-id> --user ana@acme.example --role admin
  erp members add --tenant <tenant-id> --user bob@acme.example --role member --permission products:read --permission customers:*
`)
    .action(async (options: { tenant: string; user: string; role: "admin" | "member"; permission?: Array<string>; json?: boolean }, command: Command) => {
      const membership = await runWithCore(
        command.optsWithGlobals<StoreFlags>(),
        Effect.gen(function* () {
          const permissions = yield* Effect.fromResult(parsePermissionSpecs(options.permission ?? []))
          const tenancy = yield* Tenancy
          return yield* tenancy.addMember({ tenantId: options.tenant, userId: options.user, role: options.role, permissions })
        })
      )
      if (options.json) printJson(membership)
      else process.stdout.write(`Added ${options.user} to tenant ${membership.tenant_id} as ${membership.role}\nid: ${membership.id}\n`)
    })
}

export { collect }
