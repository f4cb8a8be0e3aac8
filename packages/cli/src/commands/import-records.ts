import { type AnyResource, isUuid, operatorPrincipal, ResourceEngine, type Row } from "@erp/core"
import { type Command, Option } from "commander"
import { Effect, Result } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import * as fs from "node:fs"
import * as path from "node:path"
import * as readline from "node:readline"
import { csvRecords } from "../output.js"
import { startProgress } from "../progress.js"
import { exportedCollections, inputOf, recordFromCells } from "../records.js"
import { CliFailure, printJson, runWithCore, type StoreFlags } from "../runtime.js"

type Format = "ndjson" | "csv"

interface ImportOptions {
  readonly tenant: string
  readonly format?: Format
  readonly upsert?: boolean
  readonly dryRun?: boolean
  readonly batchSize: string
  readonly json?: boolean
}

/** One record read from the file, with the line it starts on (or why it could not be read). */
type Entry = { readonly line: number; readonly record: Result.Result<Row, string> }

interface Rejection {
  readonly line: number
  readonly message: string
  readonly fields?: Readonly<Record<string, ReadonlyArray<string>>>
}

/** Exit status when the import ran but refused some records (documented in `erp --help`). */
export const EXIT_REJECTED = 3

/** About how many records a file holds, for the progress bar: its lines (a quoted CSV cell may span more than one). */
const recordLines = async (file: string, format: "ndjson" | "csv") => {
  let count = 0
  let last = 10
  for await (const chunk of fs.createReadStream(file) as AsyncIterable<Buffer>) {
    for (let index = chunk.indexOf(10); index !== -1; index = chunk.indexOf(10, index + 1)) count++
    if (chunk.length > 0) last = chunk[chunk.length - 1]
  }
  if (last !== 10) count++
  return format === "csv" ? Math.max(count - 1, 0) : count
}

const lines = (file: string) => readline.createInterface({ input: fs.createReadStream(file, "utf8"), crlfDelay: Infinity })

async function* ndjsonEntries(file: string): AsyncGenerator<Entry> {
  let line = 0
  for await (const text of lines(file)) {
    line++
    if (text.trim() === "") continue
    let parsed: unknown
    try {
      parsed = JSON.parse(text)
    } catch (error) {
      yield { line, record: Result.fail(`not JSON: ${(error as Error).message}`) }
      continue
    }
    yield { line, record: typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? Result.succeed(parsed as Row) : Result.fail("not a JSON object") }
  }
}

/** `FILE.csv` → `FILE.items.csv`, as `erp export --format csv` writes them. */
const childFile = (file: string, collection: string) => {
  const extension = path.extname(file)
  return `${file.slice(0, file.length - extension.length)}.${collection}${extension || ".csv"}`
}

/** A child collection's CSV, grouped by parent id (read whole: it is the smaller side of the pair). */
const readChildren = async (resource: AnyResource, file: string) => {
  const groups = new Map<string, Map<string, Array<Row>>>()
  for (const collection of exportedCollections(resource)) {
    const source = childFile(file, collection.name)
    if (!fs.existsSync(source)) continue
    const byParent = new Map<string, Array<Row>>()
    let header: ReadonlyArray<string> | undefined
    for await (const { cells } of csvRecords(lines(source))) {
      if (!header) {
        header = cells
        continue
      }
      const child = recordFromCells(collection.fields, header, cells)
      const parent = String(child[collection.parentKey])
      byParent.set(parent, [...(byParent.get(parent) ?? []), child])
    }
    groups.set(collection.name, byParent)
  }
  return groups
}

async function* csvEntries(resource: AnyResource, file: string): AsyncGenerator<Entry> {
  const children = await readChildren(resource, file)
  let header: ReadonlyArray<string> | undefined
  for await (const { cells, line } of csvRecords(lines(file))) {
    if (!header) {
      header = cells
      continue
    }
    const record: Record<string, unknown> = recordFromCells(resource.fields, header, cells)
    for (const [collection, byParent] of children) record[collection] = byParent.get(String(record.id)) ?? []
    yield { line, record: Result.succeed(record) }
  }
}

const describe = (error: unknown): Omit<Rejection, "line"> => {
  const { message, fields } = error as { message?: string; fields?: Readonly<Record<string, ReadonlyArray<string>>> }
  return { message: message ?? String(error), ...(fields ? { fields } : {}) }
}

const rejectionLine = (file: string, rejection: Rejection) => {
  const fields = rejection.fields ? `: ${Object.entries(rejection.fields).map(([name, reasons]) => `${name} ${reasons.join(", ")}`).join("; ")}` : ""
  return `${file}:${rejection.line}: ${rejection.message}${fields}\n`
}

/** Rolls a dry run's batch back once its records were validated and written. */
class DryRun {
  readonly _tag = "DryRun"
}

/**
 * Writes records through the engine as the tenant's operator: the API's decoding, rules,
 * references and events. A batch is one transaction and each record a savepoint in it,
 * so a refused record leaves nothing behind while the others of its batch commit (or,
 * in a dry run, are rolled back with the batch).
 */
const importRecords = (resource: AnyResource, file: string, format: Format, options: ImportOptions, onProgress: (n: number) => void, onRejected: (rejection: Rejection) => void) =>
  Effect.gen(function* () {
    const engine = yield* ResourceEngine
    const sql = yield* SqlClient.SqlClient
    const principal = yield* operatorPrincipal(options.tenant, "cli")
    const iterator = (format === "csv" ? csvEntries(resource, file) : ndjsonEntries(file))[Symbol.asyncIterator]()
    const next = Effect.tryPromise({ try: () => iterator.next(), catch: (error) => new CliFailure(`Cannot read ${file}: ${(error as Error).message}`) })
    const batchSize = Number(options.batchSize)
    const summary = { created: 0, updated: 0, rejected: 0, errors: [] as Array<Rejection> }

    const existing = (record: Row) =>
      options.upsert && typeof record.id === "string" && isUuid(record.id)
        ? engine.get(resource, principal, record.id, []).pipe(Effect.map(() => true), Effect.catch(() => Effect.succeed(false)))
        : Effect.succeed(false)

    const writeOne = (entry: Entry) =>
      Result.match(entry.record, {
        onFailure: (message) => Effect.succeed<Rejection | "created" | "updated">({ line: entry.line, message }),
        onSuccess: (record) =>
          Effect.flatMap(existing(record), (update) =>
            sql.withTransaction(update
              ? Effect.as(engine.update(resource, principal, String(record.id), inputOf(resource.fields, record, "update")), "updated" as const)
              : Effect.as(engine.create(resource, principal, inputOf(resource.fields, record, "create")), "created" as const)
            ).pipe(Effect.catch((error) => Effect.succeed<Rejection>({ line: entry.line, ...describe(error) }))))
      })

    let done = false
    while (!done) {
      const batch: Array<Entry> = []
      while (batch.length < batchSize) {
        const result = yield* next
        if (result.done) {
          done = true
          break
        }
        batch.push(result.value)
      }
      if (batch.length === 0) break
      // Outcomes are counted as they happen: a dry run's batch is rolled back, and its counts stay.
      yield* sql.withTransaction(Effect.gen(function* () {
        for (const entry of batch) {
          const outcome = yield* writeOne(entry)
          if (outcome === "created") summary.created++
          else if (outcome === "updated") summary.updated++
          else {
            summary.rejected++
            summary.errors.push(outcome)
            onRejected(outcome)
          }
        }
        if (options.dryRun) return yield* Effect.fail(new DryRun())
      })).pipe(
        Effect.catchIf((error): error is DryRun => error instanceof DryRun, () => Effect.void),
        Effect.orDie
      )
      onProgress(batch.length)
    }
    return summary
  })

const formatOf = (file: string, format: Format | undefined): Format => format ?? (path.extname(file).toLowerCase() === ".csv" ? "csv" : "ndjson")

/** `erp import <resource> FILE --tenant T`: one subcommand per resource that takes writes. */
export const registerRecordImports = (group: Command, registry: ReadonlyArray<AnyResource>) => {
  for (const resource of registry.filter((candidate) => candidate.write)) {
    group
      .command(resource.name)
      .description(`Create (or with --upsert update) ${resource.name} from NDJSON or CSV, as \`erp export\` writes them, through the API's validation`)
      .argument("<file>", "NDJSON (one record per line) or CSV (a header row; child collections in FILE.<collection>.csv)")
      .requiredOption("--tenant <id>", "Tenant id")
      .addOption(new Option("--format <format>", "ndjson or csv (default: by the file's extension)").choices(["ndjson", "csv"]))
      .option("--upsert", "A record whose id names one of the tenant's records updates it; others are created")
      .option("--dry-run", "Validate and write every record, then roll back: nothing is kept")
      .option("--batch-size <n>", "Records per transaction (each record is a savepoint in it)", "200")
      .option("--json", "Print the summary as one JSON object (rejected lines included)")
      .addHelpText("after", `
Each record goes through the same validation, rules and events as a create (or update) through the
API, as the tenant's operator. Server-set fields (id, numbers, totals, timestamps) are ignored;
references must name records of the tenant. A refused record is reported with its line number on
stderr and nothing of it is written; the others are. Exit status 3 when any record was refused.

Examples:
  erp import ${resource.name} ${resource.name}.ndjson --tenant <tenant-id>
  erp import ${resource.name} ${resource.name}.csv --tenant <tenant-id> --dry-run
  erp import ${resource.name} ${resource.name}.ndjson --tenant <tenant-id> --upsert --json
`)
      .action(async (file: string, options: ImportOptions, command: Command) => {
        if (!fs.existsSync(file) || !fs.statSync(file).isFile()) throw new CliFailure(`Cannot read ${file}: no such file`)
        if (!/^[1-9]\d{0,4}$/.test(options.batchSize)) throw new CliFailure(`--batch-size must be a whole number from 1 to 99999, got "${options.batchSize}"`)
        const format = formatOf(file, options.format)
        const progress = startProgress(`Importing ${resource.name}`, { unit: "records", expected: await recordLines(file, format) })
        let summary: { created: number; updated: number; rejected: number; errors: Array<Rejection> }
        let timing: ReturnType<typeof progress.finish> | undefined
        try {
          summary = await runWithCore(command.optsWithGlobals<StoreFlags>(), importRecords(resource, file, format, options, progress.add, (rejection) => {
            if (!options.json) process.stderr.write(rejectionLine(file, rejection))
          }))
        } finally {
          timing = progress.finish()
        }
        const { seconds } = timing
        if (options.json) printJson({ resource: resource.name, file, dry_run: options.dryRun === true, ...summary, seconds: Number(seconds.toFixed(3)) })
        const verb = options.dryRun ? "Validated (dry run, nothing kept)" : "Imported"
        process.stderr.write(`${verb} ${resource.name} from ${file}: ${summary.created} created, ${summary.updated} updated, ${summary.rejected} rejected in ${seconds.toFixed(1)} s\n`)
        if (summary.rejected > 0) process.exitCode = EXIT_REJECTED
      })
  }
}
