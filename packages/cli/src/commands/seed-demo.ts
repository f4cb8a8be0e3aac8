import { type Command, Option } from "commander"
import { formatCount, startProgress } from "../progress.js"
import { CliFailure, printJson, runWithCore, type StoreFlags } from "../runtime.js"
import type { Country } from "../seed/demo.js"
import { BULK_THRESHOLD, CHAIN_ORDERS_IN_BULK, type DemoCounts, expectedRecords, SCALES } from "../seed/scales.js"

interface SeedOptions {
  readonly tenants: string
  readonly scale: keyof typeof SCALES
  readonly seed: string
  readonly country: Country | "mixed"
  readonly json?: boolean
  readonly customers?: string
  readonly suppliers?: string
  readonly products?: string
  readonly orders?: string
  readonly payables?: string
}

const count = (name: string, value: string | undefined, fallback: number, max = 10_000_000) => {
  if (value === undefined) return fallback
  if (!/^\d+$/.test(value) || Number(value) > max) throw new CliFailure(`--${name} must be a whole number from 0 to ${max}, got "${value}"`)
  return Number(value)
}

export const registerSeedDemo = (seed: Command) =>
  seed
    .command("demo")
    .description("Create demo tenants with realistic, consistent records of every resource, written through core's services (rules, taxes, numbering, events)")
    .option("--tenants <n>", "How many demo tenants", "1")
    .addOption(new Option("--scale <scale>", "Records per tenant").choices(Object.keys(SCALES)).default("small"))
    .option("--customers <n>", "Customers per tenant (overrides the scale)")
    .option("--suppliers <n>", "Suppliers per tenant (overrides the scale)")
    .option("--products <n>", "Products per tenant (overrides the scale)")
    .option("--orders <n>", "Quotes → sales orders → invoices → receivables per tenant (overrides the scale)")
    .option("--payables <n>", "Payables per tenant (overrides the scale)")
    .option("--seed <n>", "The same seed gives the same records", "1")
    .addOption(new Option("--country <country>", "BR (pt_BR names, CPF/CNPJ, NCM), US (en_US, EIN, HTS) or mixed (alternating)").choices(["BR", "US", "mixed"]).default("mixed"))
    .option("--json", "Print the tenants made and their record counts as one JSON object")
    .addHelpText("after", `
Scales (per tenant): ${Object.entries(SCALES).map(([name, counts]) => `${name}: ${counts.customers} customers, ${counts.products} products, ${counts.orders} orders, ${counts.payables} payables`).join("; ")}.
Each order is a quote converted to a sales order, confirmed, invoiced (taxes from the tax engine),
issued, with its receivable; most receivables and payables are paid by bank transactions allocated
to them. Dates fall in the first half of 2026. Issue keys for a demo tenant with erp keys create.
Past ${formatCount(BULK_THRESHOLD)} orders per tenant, ${CHAIN_ORDERS_IN_BULK} go through that chain and the rest are written in
batched SQL as confirmed or draft sales orders with their items, the rows a create writes (totals,
numbers, one sales-orders.create event each): a million orders take minutes, not days.

Examples:
  erp seed demo --scale small
  erp seed demo --tenants 2 --country mixed --seed 42 --json
  erp seed demo --customers 50 --products 80 --orders 300 --country BR
  erp seed demo --tenants 10 --orders 100000 --country mixed --database-url postgres://…   # a million orders
`)
    .action(async (options: SeedOptions, command: Command) => {
      const scale = SCALES[options.scale]
      const counts: DemoCounts = {
        customers: count("customers", options.customers, scale.customers),
        suppliers: count("suppliers", options.suppliers, scale.suppliers),
        products: count("products", options.products, scale.products),
        orders: count("orders", options.orders, scale.orders),
        payables: count("payables", options.payables, scale.payables)
      }
      const tenants = count("tenants", options.tenants, 1, 1000)
      const seedValue = count("seed", options.seed, 1, 2 ** 31)
      const progress = startProgress("Seeding", { unit: "records", expected: expectedRecords({ tenants, counts }) })
      let stage = ""
      let timing: ReturnType<typeof progress.finish> | undefined
      let made
      try {
        // Loaded only for this command: the fake-data library and its locales are large.
        const { seedDemo } = await import("../seed/demo.js")
        made = await runWithCore(command.optsWithGlobals<StoreFlags>(), seedDemo({
          tenants,
          counts,
          seed: seedValue,
          country: options.country,
          onRecord: (name, count = 1) => {
            if (name !== stage) progress.stage(`Seeding ${(stage = name)}`)
            progress.add(count)
          }
        }))
      } finally {
        timing = progress.finish()
      }
      const records = progress.count()
      if (options.json) printJson({ seed: seedValue, counts, tenants: made, records, seconds: Number(timing.seconds.toFixed(3)) })
      else for (const tenant of made) process.stdout.write(`${tenant.id}  ${tenant.country}  ${tenant.name}\n`)
      process.stderr.write(`Seeded ${made.length} demo tenant${made.length === 1 ? "" : "s"} with ${records} records in ${timing.seconds.toFixed(1)} s (${Math.round(timing.perSecond)} records/s)\n`)
    })
