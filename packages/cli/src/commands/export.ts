import { type AnyResource, operatorPrincipal, type Page, ResourceEngine, resources } from "@erp/core"
import { type Command } from "commander"
import { Effect } from "effect"
import { CliFailure, runWithCore, type StoreFlags } from "../runtime.js"

/** Walks every page of a resource with the engine (keyset cursors), writing JSON lines. */
const exportAll = (resource: AnyResource, tenantId: string, params: ReadonlyArray<readonly [string, string]>, write: (line: string) => void) =>
  Effect.gen(function* () {
    const engine = yield* ResourceEngine
    const principal = yield* operatorPrincipal(tenantId, "cli")
    let cursor: string | null = null
    let count = 0
    do {
      const page: Page = yield* engine.list(resource, principal, [...params, ["limit", "100"], ...(cursor ? [["cursor", cursor] as const] : [])])
      for (const record of page.data) write(JSON.stringify(record))
      count += page.data.length
      cursor = page.pagination.next_cursor
    } while (cursor)
    return count
  })

export const registerExport = (program: Command) =>
  program
    .command("export")
    .description(`Export a tenant's records as JSON lines (resources: ${resources.map((resource) => resource.name).join(", ")})`)
    .argument("<resource>", "Resource name, e.g. products")
    .requiredOption("--tenant <id>", "Tenant id")
    .option("--with-deleted", "Include soft-deleted records")
    .option("--filter <json>", "JSON filter form, as in the API's filter parameter")
    .addHelpText("after", `
Examples:
  erp export products --tenant <tenant-id> > products.jsonl
  erp export customers --tenant <tenant-id> --with-deleted > customers.jsonl
  erp export products --tenant <tenant-id> --filter '{"logic":"and","conditions":[{"f":"sale_price","op":"gte","v":"10"}]}'
`)
    .action(async (name: string, options: { tenant: string; withDeleted?: boolean; filter?: string }, command: Command) => {
      const resource = resources.find((candidate) => candidate.name === name)
      if (!resource) throw new CliFailure(`Unknown resource "${name}". Resources: ${resources.map((candidate) => candidate.name).join(", ")}`)
      const params: Array<readonly [string, string]> = []
      if (options.withDeleted) params.push(["with_deleted", "true"])
      if (options.filter) params.push(["filter", options.filter])
      const count = await runWithCore(command.optsWithGlobals<StoreFlags>(), exportAll(resource, options.tenant, params, (line) => process.stdout.write(line + "\n")))
      process.stderr.write(`Exported ${count} ${count === 1 ? resource.singular : resource.name}\n`)
    })
