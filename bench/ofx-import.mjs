// OFX import cost: a statement of N lines imported into an empty account, then imported again (all duplicates).
// Run after `npm run build`:  node bench/ofx-import.mjs [lines]   (DATABASE_URL and ERP_SECRET_KEY to use PostgreSQL)
//
// Measured on the 2-core development machine (2,000 lines, 193 KiB, the import's limit):
//   PGlite      first import 6.6 s (3.3 ms a line), second import 0.5 s (all duplicates)
//   PostgreSQL  first import 4.4 s (2.2 ms a line), second import 0.3 s
// Each created line goes through the whole create pipeline (rules, reference check, event);
// duplicates are found with one lookup per 200 FITIDs. On PGlite the import holds the only
// session while it runs, hence the per-file limit.
import { ALL_PERMISSIONS, financialAccounts, layerCore, ResourceEngine, resolveStoreLocation, Tenancy } from "@erp/core"
import { Effect, ManagedRuntime } from "effect"

const lines = Number(process.argv[2] ?? 1000)
const location = process.env.DATABASE_URL ? resolveStoreLocation() : { kind: "pglite" }
const runtime = ManagedRuntime.make(layerCore(location))
const run = (effect) => runtime.runPromise(effect)

const statement = [
  "OFXHEADER:100", "DATA:OFXSGML", "VERSION:102", "CHARSET:1252", "", "<OFX><BANKMSGSRSV1><STMTTRNRS><STMTRS><CURDEF>BRL",
  "<BANKACCTFROM><BANKID>0341<ACCTID>12345-6</BANKACCTFROM><BANKTRANLIST>",
  ...Array.from({ length: lines }, (_, index) =>
    `<STMTTRN><TRNTYPE>DEBIT<DTPOSTED>2024${String((index % 12) + 1).padStart(2, "0")}15<TRNAMT>-${(index % 900) + 1},${String(index % 100).padStart(2, "0")}<FITID>B${index}<MEMO>PAGAMENTO ${index}</STMTTRN>`),
  "</BANKTRANLIST></STMTRS></STMTTRNRS></BANKMSGSRSV1></OFX>"
].join("\r\n")
const bytes = new TextEncoder().encode(statement)

const setup = Effect.gen(function* () {
  const tenancy = yield* Tenancy
  const tenant = yield* tenancy.createTenant({ name: `Bench ${Date.now()}`, countryCode: "BR" })
  const { token } = yield* tenancy.createApiKey({ tenantId: tenant.id, name: "bench", permissions: ALL_PERMISSIONS })
  const principal = yield* tenancy.authenticateApiKey(token)
  const engine = yield* ResourceEngine
  const account = yield* engine.create(financialAccounts, principal, { name: "Bench", type: "checking" })
  return { principal, account }
})

const { principal, account } = await run(setup)
const action = financialAccounts.actions.find((candidate) => candidate.name === "import_ofx")
const importOnce = () => Effect.flatMap(ResourceEngine, (engine) => engine.action(financialAccounts, action, principal, account.id, {}, bytes))

console.log(`store: ${location.kind}, ${lines} lines, ${(bytes.byteLength / 1024).toFixed(0)} KiB`)
for (const label of ["first import", "second import (duplicates)"]) {
  const start = process.hrtime.bigint()
  const summary = await run(importOnce())
  const ms = Number(process.hrtime.bigint() - start) / 1e6
  console.log(`${label.padEnd(32)} ${ms.toFixed(0).padStart(8)} ms  ${(ms / lines).toFixed(2)} ms/line  ${JSON.stringify({ imported: summary.imported, duplicates: summary.duplicates })}`)
}
await runtime.dispose()
