import { describeStore, explainStartupFailure, layerStore, migrate, type StoreLocation } from "@erp/core"
import { type Command } from "commander"
import { Effect, ManagedRuntime } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { startProgress } from "../progress.js"
import { CliFailure, printJson, storeFrom, type StoreFlags } from "../runtime.js"

/** Rows per INSERT into the target. */
const BATCH = 1000

const open = async (location: StoreLocation) => {
  const runtime = ManagedRuntime.make(layerStore(location))
  try {
    await runtime.context()
  } catch (error) {
    await runtime.dispose().catch(() => undefined)
    const explained = explainStartupFailure(error, { store: location })
    throw new CliFailure(explained.message, { cause: explained.cause })
  }
  return runtime
}

const tablesOf = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql<{ name: string }>`SELECT table_name AS name FROM information_schema.tables
    WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name`)

/** Columns a row is written with: generated ones are computed again by the target. */
const writableColumns = (table: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ name: string }>`SELECT column_name AS name FROM information_schema.columns
      WHERE table_schema = current_schema() AND table_name = ${table} AND is_generated = 'NEVER'
      ORDER BY ordinal_position`)

const quoted = (name: string) => `"${name.replace(/"/g, "\"\"")}"`

/**
 * `erp store copy --to postgres://…`: every table of the store (tenants, keys, OAuth clients and
 * sessions, records, events, webhook state, catalogs) into an empty PostgreSQL database, migrated
 * first, in one transaction on the target, then the row counts compared table by table.
 */
export const registerStoreCopy = (store: Command) =>
  store
    .command("copy")
    .description("Copy the whole store (embedded by default) into an empty PostgreSQL database and verify the row counts: the upgrade path from the embedded store")
    .requiredOption("--to <url>", "PostgreSQL URL of an empty database")
    .option("--json", "Print the tables and their row counts as one JSON object")
    .addHelpText("after", `
The target is migrated, then every table is copied in one transaction (all or nothing, foreign keys
checked by the data being a consistent copy: the session runs as a replica, which needs a superuser
or the database's owner with that right). Then run the host on it with the same secret key:
  ERP_SECRET_KEY="$(cat .erp-data/secret.key)" erp serve --database-url postgres://…

Example:
  createdb erp && erp store copy --to postgres://postgres@127.0.0.1:5432/erp
`)
    .action(async (options: { to: string; json?: boolean }, command: Command) => {
      const flags = command.optsWithGlobals<StoreFlags>()
      const from = storeFrom(flags)
      const to: StoreLocation = { kind: "postgres", url: options.to }
      const source = await open(from)
      const progress = startProgress("Copying", { unit: "rows" })
      let target: Awaited<ReturnType<typeof open>> | undefined
      try {
        target = await open(to)
        const existing = await target.runPromise(tablesOf)
        if (existing.length > 0) throw new CliFailure(`The target database is not empty (${existing.length} tables, e.g. ${existing[0].name}): copy into a new database (createdb)`)
        await target.runPromise(migrate)
        const tables = (await target.runPromise(tablesOf)).map((table) => table.name).filter((name) => name !== "erp_migrations")
        const counts: Record<string, number> = {}
        const runTarget = target
        await runTarget.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.withTransaction(Effect.gen(function* () {
          // Foreign keys are not checked row by row (a category's parent may come later in the table): the copy is consistent as a whole.
          yield* sql.unsafe(`SET LOCAL session_replication_role = replica`)
          for (const table of tables) {
            progress.stage(`Copying ${table}`)
            const columns = (yield* writableColumns(table)).map((column) => column.name)
            const list = columns.map(quoted).join(", ")
            // The target's migrations may have seeded rows; the copy replaces them.
            yield* sql.unsafe(`DELETE FROM ${quoted(table)}`)
            const rows = yield* Effect.promise(() => source.runPromise(Effect.flatMap(SqlClient.SqlClient, (from) =>
              from.unsafe<{ row: string }>(`SELECT json_build_object(${columns.map((name) => `'${name.replace(/'/g, "''")}', ${quoted(name)}`).join(", ")})::text AS row FROM ${quoted(table)}`)).pipe(Effect.orDie)))
            for (let start = 0; start < rows.length; start += BATCH) {
              const batch = `[${rows.slice(start, start + BATCH).map((row) => row.row).join(",")}]`
              yield* sql.unsafe(`INSERT INTO ${quoted(table)} (${list}) OVERRIDING SYSTEM VALUE SELECT ${list} FROM json_populate_recordset(NULL::${quoted(table)}, $1::json)`, [batch])
              progress.add(Math.min(BATCH, rows.length - start))
            }
            counts[table] = rows.length
          }
        }))).pipe(Effect.orDie))
        // Sequences behind serial and identity columns continue after the copied values.
        {
          const serials = await runTarget.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) =>
            sql<{ table_name: string; column_name: string }>`SELECT table_name, column_name FROM information_schema.columns
              WHERE table_schema = current_schema() AND (column_default LIKE 'nextval(%' OR is_identity = 'YES')`))
          for (const serial of serials) {
            await runTarget.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(
              `SELECT setval(pg_get_serial_sequence('${quoted(serial.table_name)}', '${serial.column_name}'), coalesce((SELECT max(${quoted(serial.column_name)}) FROM ${quoted(serial.table_name)}), 0) + 1, false)`)))
          }
        }
        // Verify: every table holds as many rows as the source's.
        const mismatched: Array<string> = []
        for (const table of tables) {
          const count = async (runtime: typeof runTarget) =>
            Number((await runtime.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<{ n: string }>(`SELECT count(*)::text AS n FROM ${quoted(table)}`))))[0].n)
          const [there, here] = [await count(runTarget), await count(source)]
          if (there !== here) mismatched.push(`${table}: ${here} in the source, ${there} copied`)
        }
        if (mismatched.length > 0) throw new CliFailure(`The copy does not match the source: ${mismatched.join("; ")}`)
        const { seconds } = progress.finish()
        const rows = Object.values(counts).reduce((sum, count) => sum + count, 0)
        if (options.json) printJson({ from: describeStore(from), to: describeStore(to), tables: counts, rows, seconds: Number(seconds.toFixed(3)) })
        process.stderr.write(`Copied ${rows} rows of ${tables.length} tables from ${describeStore(from)} to ${describeStore(to)} in ${seconds.toFixed(1)} s; row counts verified\n`)
      } finally {
        progress.finish()
        await target?.dispose().catch(() => undefined)
        await source.dispose().catch(() => undefined)
      }
    })
