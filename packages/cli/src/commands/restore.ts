import { operatorPrincipal, ResourceEngine, resources } from "@erp/core"
import { type Command } from "commander"
import { Effect } from "effect"
import { CliFailure, printJson, runWithCore, type StoreFlags } from "../runtime.js"

const names = () => resources.map((resource) => resource.name).join(", ")

export const registerRestore = (program: Command) =>
  program
    .command("restore")
    .description(`Bring back a soft-deleted record and record <resource>.restore (resources: ${names()}); the API has no restore route`)
    .argument("<resource>", "Resource name, e.g. products")
    .argument("<id>", "Id of the deleted record")
    .requiredOption("--tenant <id>", "Tenant id")
    .option("--json", "Print the restored record as one JSON object")
    .addHelpText("after", "\nExample:\n  erp restore products 6f1c…-… --tenant 2b7e…-…\n")
    .action(async (name: string, id: string, options: { tenant: string; json?: boolean }, command: Command) => {
      const resource = resources.find((candidate) => candidate.name === name)
      if (!resource) throw new CliFailure(`Unknown resource "${name}". Resources: ${names()}`)
      const record = await runWithCore(
        command.optsWithGlobals<StoreFlags>(),
        Effect.flatMap(operatorPrincipal(options.tenant, "cli"), (principal) => Effect.flatMap(ResourceEngine, (engine) => engine.restore(resource, principal, id)))
      )
      if (options.json) printJson(record)
      else process.stdout.write(`Restored ${resource.singular} ${String(record.id)}\n`)
    })
