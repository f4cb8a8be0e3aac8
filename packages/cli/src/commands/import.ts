import { type AnyResource, operatorPrincipal, ResourceEngine, type ResourceAction, resources } from "@erp/core"
import { type Command } from "commander"
import { Effect } from "effect"
import * as fs from "node:fs"
import { CliFailure, printJson, runWithCore, type StoreFlags } from "../runtime.js"
import { registerRecordImports } from "./import-records.js"

/** Every declared action that imports a file into one record (`ofx` into a financial account). */
const importers = (registry: ReadonlyArray<AnyResource>) =>
  registry.flatMap((resource) =>
    (resource.actions ?? []).flatMap((action) => (action.importer && action.raw ? [{ resource, action, importer: action.importer }] : [])))

const readFile = (file: string, action: ResourceAction) => {
  let stat: fs.Stats
  try {
    stat = fs.statSync(file)
  } catch {
    throw new CliFailure(`Cannot read ${file}: no such file`)
  }
  if (!stat.isFile()) throw new CliFailure(`${file} is not a file`)
  if (stat.size > action.raw!.maxBytes) throw new CliFailure(`${file} has ${stat.size} bytes; at most ${action.raw!.maxBytes} are imported at once`)
  return new Uint8Array(fs.readFileSync(file))
}

/** `erp import <format> FILE --<option> ID --tenant T`: one subcommand per declared importer, run as the tenant's operator. */
export const registerImport = (program: Command) => {
  const group = program.command("import").description("Import records of a resource from NDJSON or CSV (as erp export writes them), or a file into one record (a bank statement into a financial account)")
  registerRecordImports(group, resources)
  for (const { resource, action, importer } of importers(resources)) {
    group
      .command(importer.format)
      .description(`${action.summary}. Prints what was done as one JSON object.`)
      .argument("<file>", `The file (${action.raw!.contentType})`)
      .requiredOption(`--${importer.option} <id>`, `Id of the ${resource.singular.replace(/-/g, " ")}`)
      .requiredOption("--tenant <id>", "Tenant id")
      .option("--json", "The result is always printed as one JSON object (accepted for symmetry)")
      .addHelpText("after", `\n${action.description}\n\nExample:\n  erp import ${importer.format} statement.${importer.format} --${importer.option} <id> --tenant <tenant-id>\n`)
      .action(async (file: string, options: Record<string, string>, command: Command) => {
        const bytes = readFile(file, action)
        const result = await runWithCore(command.optsWithGlobals<StoreFlags>(), Effect.gen(function* () {
          const engine = yield* ResourceEngine
          const principal = yield* operatorPrincipal(options.tenant, "cli")
          return yield* engine.action(resource, action, principal, options[importer.option], {}, bytes)
        }))
        printJson(result)
      })
  }
}
