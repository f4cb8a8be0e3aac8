import { type AnyResource, isValidDate, isValidDatetime, operatorPrincipal, ResourceEngine, resources, type Row } from "@erp/core"
import { type Command, Option } from "commander"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { csvLine, fileSink, type LineSink, stdoutSink } from "../output.js"
import { type Progress, startProgress } from "../progress.js"
import { csvColumns, exportedCollections } from "../records.js"
import { CliFailure, printJson, runWithCore, type StoreFlags } from "../runtime.js"

type Format = "ndjson" | "csv"

interface ExportOptions {
  readonly tenant: string
  readonly format: Format
  readonly out?: string
  readonly since?: string
  readonly withDeleted?: boolean
  readonly filter?: string
  readonly json?: boolean
}

/** Where one resource's export goes: its main sink, and one more per child collection for CSV. */
interface Target {
  readonly resource: AnyResource
  readonly main: LineSink
  readonly children: ReadonlyArray<{ readonly name: string; readonly columns: ReadonlyArray<string>; readonly sink: LineSink }>
}

const names = () => resources.map((resource) => resource.name).join(", ")

/**
 * Records a page of the walk: fewer round trips than the API's 100, still a flat memory profile.
 * A record with children (an order and its items) is several times larger: half the page keeps
 * the three pages in flight (one written, two being built) as small. CSV pages are decoded
 * records, so they stay at 1,000; NDJSON pages are text the engine sizes to about 2 MB once the
 * first has come, and this only bounds them.
 */
const pageSize = (resource: AnyResource, format: Format) => (resource.children.length > 0 ? 500 : 1000) * (format === "ndjson" ? 4 : 1)

/** `FILE.csv` → `FILE.items.csv`: the file of a child collection next to its parent's. */
const childFile = (file: string, collection: string) => {
  const extension = path.extname(file)
  return `${file.slice(0, file.length - extension.length)}.${collection}${extension || ".csv"}`
}

const targetFor = (resource: AnyResource, format: Format, file: string | undefined): Target => {
  const main = file ? fileSink(file) : stdoutSink()
  if (format === "ndjson") return { resource, main, children: [] }
  const collections = exportedCollections(resource)
  if (!file && collections.length > 0) {
    throw new CliFailure(`A CSV export of ${resource.name} writes one more file per child collection (${collections.map((collection) => collection.name).join(", ")}): give --out FILE`)
  }
  return {
    resource,
    main,
    children: collections.map((collection) => ({ name: collection.name, columns: csvColumns(collection.fields), sink: fileSink(childFile(file!, collection.name)) }))
  }
}

/** Walks every record of a resource with the engine's keyset walk (each page costs what the first does), writing as it goes. */
const exportResource = (target: Target, format: Format, tenantId: string, params: ReadonlyArray<readonly [string, string]>, progress: Progress) =>
  Effect.gen(function* () {
    const { resource } = target
    const engine = yield* ResourceEngine
    const principal = yield* operatorPrincipal(tenantId, "cli")
    const columns = csvColumns(resource.fields)
    const write = (sink: LineSink, line: string) => Effect.promise(() => sink.write(line))
    if (format === "csv") {
      yield* write(target.main, csvLine(columns))
      for (const child of target.children) yield* write(child.sink, csvLine(child.columns))
    }
    progress.stage(`Exporting ${resource.name}`)
    const expect = (total: number) => progress.expect(progress.count() + total)
    // One write per page and file: the stream's backpressure is awaited once a page, not once a row.
    if (format === "ndjson") {
      // Each line is the record as the store built it for clients, a page's lines joined by the store: never parsed or re-encoded here.
      return yield* engine.walkAnswers(resource, principal, params, pageSize(resource, format), (chunks, count) =>
        Effect.map(Effect.promise(() => target.main.writeAll(chunks)), () => progress.add(count)), expect)
    }
    return yield* engine.walk(resource, principal, params, pageSize(resource, format), (records) =>
      Effect.gen(function* () {
        const main: Array<string> = []
        const children = target.children.map(() => [] as Array<string>)
        for (const record of records) {
          main.push(csvLine(columns.map((name) => record[name])))
          target.children.forEach((child, index) => {
            for (const item of (record[child.name] as ReadonlyArray<Row> | undefined) ?? []) children[index].push(csvLine(child.columns.map((name) => item[name])))
          })
        }
        yield* write(target.main, main.join("\n"))
        for (const [index, child] of target.children.entries()) if (children[index].length > 0) yield* write(child.sink, children[index].join("\n"))
        progress.add(records.length)
      }), expect)
  })

const sinksOf = (target: Target) => [target.main, ...target.children.map((child) => child.sink)]

const parseSince = (since: string | undefined) => {
  if (since === undefined) return undefined
  if (!isValidDate(since) && !isValidDatetime(since)) throw new CliFailure(`--since must be a date or a date-time (ISO 8601, years 0001 to 9999), got "${since}"`)
  return since
}

export const registerExport = (program: Command) =>
  program
    .command("export")
    .description(`Export a tenant's records, streamed page by page in constant memory (resources: ${names()}, or all)`)
    .argument("<resource>", "Resource name (e.g. products), or all (then --out is a folder)")
    .requiredOption("--tenant <id>", "Tenant id")
    .addOption(new Option("--format <format>", "ndjson: one record per line, children nested; csv: one row per record and one more file per child collection").choices(["ndjson", "csv"]).default("ndjson"))
    .option("--out <path>", "File to write (a folder for all); default stdout. Written under a temporary name and renamed when complete")
    .option("--since <datetime>", "Only records changed (updated_at) at or after this ISO date or date-time")
    .option("--with-deleted", "Include soft-deleted records")
    .option("--filter <json>", "JSON filter form, as in the API's filter parameter")
    .option("--json", "Print a summary as one JSON object on stdout (needs --out)")
    .addHelpText("after", `
Decimals are strings with six fractional digits, as the API answers them. Progress (rows and rows/s)
goes to stderr; the last line is a summary.

Examples:
  erp export products --tenant <tenant-id> > products.ndjson
  erp export sales-orders --tenant <tenant-id> --format csv --out orders.csv     # also orders.items.csv
  erp export all --tenant <tenant-id> --out backup/ --since 2026-01-01
  erp export customers --tenant <tenant-id> --with-deleted --out customers.ndjson --json
`)
    .action(async (name: string, options: ExportOptions, command: Command) => {
      const chosen = name === "all" ? resources : resources.filter((candidate) => candidate.name === name)
      if (chosen.length === 0) throw new CliFailure(`Unknown resource "${name}". Resources: ${names()}, or all`)
      if (name === "all" && !options.out) throw new CliFailure("erp export all writes one file per resource: give --out DIR")
      if (options.json && !options.out) throw new CliFailure("--json prints the summary on stdout, where the records go without --out: give --out FILE")
      const since = parseSince(options.since)
      const params: Array<readonly [string, string]> = []
      if (options.withDeleted) params.push(["with_deleted", "true"])
      if (options.filter) params.push(["filter", options.filter])
      if (since) params.push(["updated_at[gte]", since])
      if (name === "all") fs.mkdirSync(options.out!, { recursive: true })
      const targets = chosen.map((resource) =>
        targetFor(resource, options.format, name === "all" ? path.join(options.out!, `${resource.name}.${options.format}`) : options.out))
      const progress = startProgress(`Exporting ${name}`)
      const counts: Record<string, number> = {}
      try {
        await runWithCore(command.optsWithGlobals<StoreFlags>(), Effect.forEach(targets, (target) =>
          Effect.map(exportResource(target, options.format, options.tenant, params, progress), (count) => (counts[target.resource.name] = count)), { discard: true }))
        for (const target of targets) for (const sink of sinksOf(target)) await sink.commit()
      } catch (error) {
        for (const target of targets) for (const sink of sinksOf(target)) sink.abort()
        progress.finish()
        throw error
      }
      const { seconds, perSecond } = progress.finish()
      const rows = progress.count()
      const files = targets.flatMap((target) => sinksOf(target).map((sink) => sink.target)).filter((file) => file !== "stdout")
      if (options.json) printJson({ tenant_id: options.tenant, format: options.format, records: counts, rows, seconds: Number(seconds.toFixed(3)), files })
      const what = name === "all" ? `${rows} records of ${targets.length} resources` : `${rows} ${rows === 1 ? chosen[0].singular : chosen[0].name}`
      process.stderr.write(`Exported ${what} as ${options.format} to ${options.out ?? "stdout"} in ${seconds.toFixed(1)} s (${Math.round(perSecond)} rows/s)\n`)
    })
