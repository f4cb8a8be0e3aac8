// Automatic reconciliation of a generated statement, through the use case every transport runs
// (the engine's actions): precision, recall and the time taken. Run after `npm run build`:
//   node bench/reconciliation.mjs [lines=1000] [seed=1]
// On PostgreSQL with DATABASE_URL (and ERP_SECRET_KEY); else on an embedded store in a temporary
// folder. Each run makes a tenant of its own: `parties` customers, about as many open receivables
// as lines, the lines in one account, all through the engine as clients create them.
import { ALL_PERMISSIONS, allResources, Authenticator, layerCore, resolveStoreLocation, ResourceEngine, Tenancy } from "@erp/core"
import { Effect, ManagedRuntime } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { generateStatement } from "../test/support/generated-statement.ts"

const lines = Number(process.argv[2] ?? 1000)
const seed = Number(process.argv[3] ?? 1)
const location = process.env.DATABASE_URL ? resolveStoreLocation() : { kind: "pglite", dataDir: fs.mkdtempSync(path.join(os.tmpdir(), "erp-bench-reconciliation-")) }
const runtime = ManagedRuntime.make(layerCore(location))
const run = (effect) => runtime.runPromise(effect)
const named = (name) => allResources.find((resource) => resource.name === name)
const today = new Date().toISOString().slice(0, 10)
const statement = generateStatement({ seed, documents: lines, lines, today })

const { principal, engine } = await run(Effect.gen(function* () {
  const tenancy = yield* Tenancy
  const tenant = yield* tenancy.createTenant({ name: `Bench reconciliation ${Date.now()}`, countryCode: "BR" })
  const { token } = yield* tenancy.createApiKey({ tenantId: tenant.id, name: "bench reconciliation", permissions: ALL_PERMISSIONS })
  return { principal: yield* Effect.flatMap(Authenticator, (authenticator) => authenticator.authenticate(token)), engine: yield* ResourceEngine }
}))
const create = (resource, body) => run(engine.create(named(resource), principal, body))

let started = Date.now()
const account = (await create("financial-accounts", { name: "Bench statement", type: "checking" })).id
const customers = new Map()
for (const party of statement.parties) customers.set(party.id, (await create("customers", { legal_name: party.name, tax_id: party.taxId })).id)
const documents = new Map()
for (const document of statement.documents) {
  const made = await create("receivables", { customer_id: customers.get(document.partyId), amount: document.amount, due_date: document.dueDate, financial_account_id: account })
  documents.set(made.id, document.id)
}
const truth = new Map()
for (const line of statement.lines) {
  const made = await create("financial-transactions", { account_id: account, posted_at: line.postedAt, amount: line.amount, name: line.name, memo: line.memo })
  truth.set(made.id, line)
}
console.log(`made ${statement.parties.length} customers, ${statement.documents.length} receivables and ${statement.lines.length} lines in ${((Date.now() - started) / 1000).toFixed(1)} s (${location.kind})`)

const accounts = named("financial-accounts")
const auto = accounts.actions.find((action) => action.name === "auto_reconcile")
const timed = async (body) => {
  const start = process.hrtime.bigint()
  const answer = await run(engine.action(accounts, auto, principal, account, {}, body))
  return { answer, ms: Number(process.hrtime.bigint() - start) / 1e6 }
}
const key = (allocations) => allocations.map((allocation) => `${allocation.documentId}:${Number(allocation.amount).toFixed(2)}`).sort().join(",")
const score = (answer) => {
  const wrong = answer.matched.filter((match) => key(match.allocations.map((allocation) => ({ documentId: documents.get(allocation.receivable_id), amount: allocation.amount }))) !== key(truth.get(match.transaction_id).pays))
  const matchable = statement.lines.filter((line) => line.pays.length > 0).length
  const right = answer.matched.length - wrong.length
  return { matched: answer.matched.length, wrong: wrong.length, precision: answer.matched.length === 0 ? 1 : right / answer.matched.length, recall: right / matchable, matchable }
}

const dry = await timed({ dry_run: true })
const real = await timed({})
const figures = score(real.answer)
console.log(`| Run | ms | matched | wrong | precision | recall (of ${figures.matchable} lines that pay something) |`)
console.log(`|---|---|---|---|---|---|`)
for (const [name, result] of [["dry run", dry], ["applied", real]]) {
  const s = score(result.answer)
  console.log(`| ${name} | ${result.ms.toFixed(0)} | ${s.matched} | ${s.wrong} | ${s.precision.toFixed(4)} | ${s.recall.toFixed(4)} |`)
}
const left = Object.entries(Object.groupBy(real.answer.left, (entry) => `${truth.get(entry.transaction_id).kind}/${entry.reason}`)).map(([name, list]) => `${name} ${list.length}`)
console.log(`left: ${left.join(", ")}`)
await runtime.dispose()
if (location.kind === "pglite") fs.rmSync(location.dataDir, { recursive: true, force: true })
