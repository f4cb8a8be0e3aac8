import { type AnyResource, operatorPrincipal, ResourceEngine, resources } from "@erp/core"
import { type Command } from "commander"
import { Effect, Option } from "effect"
import * as fs from "node:fs"
import { CliFailure, printJson, runWithCore, type StoreFlags } from "../runtime.js"

/** The most records one file imports. */
const MAX_RECORDS = 5000

/** A JSON file of records: an array, `{ "data": [...] }`, or one object. */
const readRecords = (file: string): ReadonlyArray<Record<string, unknown>> => {
  let text: string
  try {
    text = fs.readFileSync(file, "utf8")
  } catch {
    throw new CliFailure(`Cannot read ${file}: no such file`)
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch (error) {
    throw new CliFailure(`${file} is not JSON: ${(error as Error).message}`)
  }
  const list = Array.isArray(parsed) ? parsed : typeof parsed === "object" && parsed !== null && Array.isArray((parsed as { data?: unknown }).data) ? (parsed as { data: Array<unknown> }).data : [parsed]
  if (list.length > MAX_RECORDS) throw new CliFailure(`${file} has ${list.length} records; at most ${MAX_RECORDS} are imported at once`)
  list.forEach((record, index) => {
    if (typeof record !== "object" || record === null || Array.isArray(record)) throw new CliFailure(`Record ${index} of ${file} is not a JSON object`)
  })
  return list as ReadonlyArray<Record<string, unknown>>
}

const describeError = (error: unknown) => {
  const fields = (error as { fields?: Record<string, ReadonlyArray<string>> }).fields
  const detail = fields ? `: ${Object.entries(fields).map(([name, reasons]) => `${name} ${reasons.join(", ")}`).join("; ")}` : ""
  return `${(error as { message?: string }).message ?? String(error)}${detail}`
}

/**
 * `erp <command> import|list` for each resource the embedding app manages through core
 * (panel-only) and operators from the CLI (`operatorCommand` in its declaration).
 */
export const registerPanelRecords = (program: Command, registry: ReadonlyArray<AnyResource> = resources) => {
  for (const resource of registry.filter((candidate) => candidate.operatorCommand)) {
    const { name, key } = resource.operatorCommand!
    const noun = resource.title.toLowerCase()
    const group = program.command(name).description(`${resource.title}s of a tenant (${resource.description})`)
    group
      .command("import")
      .description(`Create or update ${noun}s from a JSON file: a record whose ${key} matches a live one updates it (its lists replaced), others are created. Prints {created, updated, ids}.`)
      .argument("<file>", "JSON: an array of records, {\"data\": [...]}, or one record")
      .requiredOption("--tenant <id>", "Tenant id")
      .option("--json", "The result is always printed as one JSON object (accepted for symmetry)")
      .addHelpText("after", `\nEach record is validated like a write through the API; the first refused one stops the import (the ones before it stay).\n\nExample:\n  erp ${name} import rules.json --tenant <tenant-id>\n`)
      .action(async (file: string, options: { tenant: string }, command: Command) => {
        const records = readRecords(file)
        const result = await runWithCore(command.optsWithGlobals<StoreFlags>(), Effect.gen(function* () {
          const engine = yield* ResourceEngine
          const principal = yield* operatorPrincipal(options.tenant, "cli")
          const ids: Array<string> = []
          let created = 0
          let updated = 0
          for (const [index, record] of records.entries()) {
            const match = record[key]
            const existing: Readonly<Record<string, unknown>> | undefined = typeof match === "string"
              ? (yield* engine.list(resource, principal, [[key, match], ["limit", "1"]])).data[0] as Readonly<Record<string, unknown>> | undefined
              : undefined
            const written: Readonly<Record<string, unknown>> = yield* (existing
              ? engine.update(resource, principal, String(existing.id), record)
              : engine.create(resource, principal, record)
            ).pipe(Effect.mapError((error) => new CliFailure(`Record ${index} (${key} ${JSON.stringify(match ?? null)}) was refused: ${describeError(error)}`)))
            ids.push(String(written.id))
            if (existing) updated++
            else created++
          }
          return { created, updated, ids }
        }))
        printJson(result)
      })
    group
      .command("list")
      .description(`Print the tenant's ${noun}s as JSON lines`)
      .requiredOption("--tenant <id>", "Tenant id")
      .option("--json", "Print one JSON array instead of JSON lines")
      .action(async (options: { tenant: string; json?: boolean }, command: Command) => {
        const rows = await runWithCore(command.optsWithGlobals<StoreFlags>(), Effect.gen(function* () {
          const engine = yield* ResourceEngine
          const principal = yield* operatorPrincipal(options.tenant, "cli")
          const all: Array<unknown> = []
          let cursor: Option.Option<string> = Option.none()
          do {
            const page = yield* engine.list(resource, principal, [["limit", "100"], ...(Option.isSome(cursor) ? [["cursor", cursor.value] as [string, string]] : [])])
            all.push(...page.data)
            cursor = Option.fromNullishOr(page.pagination.next_cursor)
          } while (Option.isSome(cursor))
          return all
        }))
        if (options.json) printJson(rows)
        else for (const row of rows) process.stdout.write(`${JSON.stringify(row)}\n`)
      })
  }
}
