import { migrate, readDistributionPlan, seedCatalogsAndRecord } from "@erp/core"
import { type Command } from "commander"
import { Effect } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { CliFailure, printJson, runWithCore, storeDescription, type StoreFlags } from "../runtime.js"
import { registerSeedDemo } from "./seed-demo.js"
import { registerStoreCopy } from "./store-copy.js"

export const registerStore = (program: Command) => {
  program
    .command("migrate")
    .description("Apply pending migrations (the host also does this on start)")
    .option("--json", "Print the applied migrations as JSON")
    .action(async (options: { json?: boolean }, command: Command) => {
      const flags = command.optsWithGlobals<StoreFlags>()
      // Opening the core migrates; report what the migrations table holds.
      const applied = await runWithCore(
        flags,
        Effect.gen(function* () {
          yield* migrate
          const sql = yield* SqlClient.SqlClient
          return yield* sql<{ migration_id: number; name: string; created_at: string }>`SELECT migration_id, name, created_at FROM erp_migrations ORDER BY migration_id`
        }).pipe(Effect.orDie)
      )
      if (options.json) printJson(applied)
      else {
        process.stdout.write(`Store: ${storeDescription(flags)}\n`)
        for (const row of applied) process.stdout.write(`  ${String(row.migration_id).padStart(4, "0")}_${row.name}  applied ${row.created_at}\n`)
        process.stdout.write("Up to date.\n")
      }
    })

  const seed = program.command("seed").description("Load reference data, or demo data")
  seed
    .command("catalogs")
    .description("Load or refresh the reference catalogs from the bundled snapshots (idempotent)")
    .option("--json", "Print the counts as JSON")
    .action(async (options: { json?: boolean }, command: Command) => {
      const counts = await runWithCore(command.optsWithGlobals<StoreFlags>(), seedCatalogsAndRecord)
      if (options.json) printJson(counts)
      else for (const [table, count] of Object.entries(counts)) process.stdout.write(`${table}: ${count}\n`)
    })
  registerSeedDemo(seed)
  const store = program.command("store").description("Move the store, or shard it by tenant")
  registerStoreCopy(store)
  store
    .command("citus-script")
    .description("Print the SQL that places every table on Citus (sharded by tenant); fails if a table breaks the rules it needs")
    .action(async (_options: unknown, command: Command) => {
      const plan = await runWithCore(command.optsWithGlobals<StoreFlags>(), readDistributionPlan())
      if (plan.violations.length > 0) throw new CliFailure(`The schema cannot be sharded by tenant:\n${plan.violations.map((line) => `  ${line}`).join("\n")}`)
      process.stdout.write(plan.script)
    })
}
