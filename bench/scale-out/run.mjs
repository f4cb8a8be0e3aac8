// erp on several hosts: a PostgreSQL primary and a pg_basebackup standby, PgBouncer in transaction
// mode, three `erp serve` (reads on the standby) and two `erp worker` behind Debian's HAProxy.
// A mixed load runs through it while one host is killed with SIGKILL and started again; then the
// store and a webhook receiver are checked, and throughput and CPU per request are measured with
// 1, 2 and 3 hosts. Exits 1 when a check fails.
//
//   node bench/scale-out/run.mjs [--short] [--seconds N] [--concurrency N]
//
// Needs `npm run build`, PostgreSQL's server programs, pgbouncer and haproxy.
import { Effect, ManagedRuntime } from "effect"
import { ALL_PERMISSIONS, layerCore, OAuth, Tenancy } from "@erp/core"
import { SqlClient } from "effect/sql"
import { createHmac, randomUUID } from "node:crypto"
import * as http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import { startPostgresPair } from "../../scripts/postgres-pair.mjs"
import { cpuMs } from "../proc.mjs"
import { mcpAcrossHosts, oauthAcrossHosts, readWithRetries, request, writeWithRetries } from "./clients.mjs"
import { freePort, postmasterPid, startHaproxy, startHost, startPgBouncer, startWorker, stopEverything } from "./cluster.mjs"

const flag = (name, fallback) => {
  const at = process.argv.indexOf(name)
  return at < 0 ? fallback : Number(process.argv[at + 1])
}
const SHORT = process.argv.includes("--short")
const LOAD_SECONDS = flag("--seconds", SHORT ? 12 : 40)
const PHASE_SECONDS = SHORT ? 4 : 12
const CONCURRENCY = flag("--concurrency", SHORT ? 8 : 16)
const RATE_LIMIT = 120
const SECRET_KEY = "ZXJwIHRlc3Qgc2VjcmV0IGtleSwgMzIgYnl0ZXMgISE="
const PASSWORD = "correct horse battery staple"
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
const log = (line) => process.stderr.write(`${line}\n`)

let pair
const cleanUp = () => {
  stopEverything()
  pair?.stop()
}
process.on("SIGINT", () => { cleanUp(); process.exit(130) })
process.on("exit", cleanUp)

// ---------------------------------------------------------------------------------------------
// The webhook receiver: verifies each delivery's signature and counts each delivery id
// ---------------------------------------------------------------------------------------------

const startReceiver = async () => {
  const received = new Map()
  let badSignatures = 0
  let secret
  const server = http.createServer((incoming, answer) => {
    const chunks = []
    incoming.on("data", (chunk) => chunks.push(chunk))
    incoming.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8")
      const id = incoming.headers["webhook-id"]
      const timestamp = incoming.headers["webhook-timestamp"]
      const expected = secret ? createHmac("sha256", Buffer.from(secret.replace(/^whsec_/, ""), "base64")).update(`${id}.${timestamp}.${body}`).digest("base64") : ""
      const signatures = String(incoming.headers["webhook-signature"] ?? "").split(" ").map((part) => part.replace(/^v1,/, ""))
      if (!signatures.includes(expected)) badSignatures++
      const event = JSON.parse(body)
      const seen = received.get(id)
      received.set(id, { count: (seen?.count ?? 0) + 1, eventId: event.id })
      answer.writeHead(200).end()
    })
  })
  const port = await freePort()
  await new Promise((resolve) => server.listen(port, "127.0.0.1", resolve))
  return { url: `http://127.0.0.1:${port}/hooks`, received, badSignatures: () => badSignatures, setSecret: (value) => { secret = value }, close: () => server.close() }
}

// ---------------------------------------------------------------------------------------------
// Set-up
// ---------------------------------------------------------------------------------------------

log("Starting a primary and a pg_basebackup standby")
pair = await startPostgresPair({ settings: ["max_connections = 300"] })
const core = ManagedRuntime.make(layerCore({ kind: "postgres", url: pair.primaryUrl }, { secretKey: SECRET_KEY }))
const run = (effect) => core.runPromise(effect)
const setUp = await run(Effect.gen(function* () {
  const tenancy = yield* Tenancy
  const oauth = yield* OAuth
  const tenant = yield* tenancy.createTenant({ name: "Scale-out", countryCode: "BR" })
  yield* tenancy.setRateLimit(tenant.id, 1_000_000)
  const main = yield* tenancy.createApiKey({ tenantId: tenant.id, name: "load", permissions: ALL_PERMISSIONS })
  const limited = yield* tenancy.createApiKey({ tenantId: tenant.id, name: "limited", permissions: ALL_PERMISSIONS, rateLimitPerMinute: RATE_LIMIT })
  const user = yield* tenancy.createUser({ email: `owner-${randomUUID().slice(0, 8)}@example.com`, name: "Owner" })
  yield* tenancy.addMember({ tenantId: tenant.id, userId: user.id, role: "admin", permissions: [] })
  yield* oauth.setPassword(user.id, PASSWORD)
  const redirectUri = "http://127.0.0.1:1/callback"
  // The token endpoint limits each client's requests a minute (across hosts): each flow is another app's.
  const clients = []
  for (let index = 0; index < 60; index++) {
    const client = yield* oauth.createClient({ name: `Scale-out app ${index}`, redirectUris: [redirectUri], kind: "confidential", registration: "operator" })
    clients.push({ clientId: client.client.client_id, secret: client.secret, redirectUri })
  }
  return { tenant, main: main.token, limited: limited.token, limitedId: limited.key.id, user, clients }
}).pipe(Effect.orDie))

const receiver = await startReceiver()
const pooler = await startPgBouncer(pair.primaryPort)
const haproxyPort = await freePort()
const hostEnv = {
  DATABASE_URL: pooler.url,
  ERP_DB_POOLER: "transaction",
  ...(process.argv.includes("--no-replica") ? {} : { ERP_DATABASE_READ_URL: pair.standbyUrl }),
  ERP_SECRET_KEY: SECRET_KEY,
  ERP_PUBLIC_URL: `http://127.0.0.1:${haproxyPort}`,
  ERP_WEBHOOKS_ALLOW_PRIVATE: "true",
  ERP_DB_POOL_SIZE: "10"
}
log("Starting PgBouncer, three hosts, two workers and HAProxy")
const hosts = []
for (let index = 0; index < 3; index++) hosts.push(await startHost(await freePort(), hostEnv))
for (let index = 0; index < 2; index++) await startWorker(hostEnv)
let proxy = await startHaproxy(hosts, haproxyPort)
const api = proxy.url

const auth = (token) => ({ authorization: `Bearer ${token}` })
const must = async (answer, what) => {
  const result = await answer
  if (result.status < 200 || result.status > 299) throw new Error(`${what}: ${result.status} ${result.text ?? result.error}`)
  return result.json
}
const customer = await must(request(`${api}/customers`, { method: "POST", headers: auth(setUp.main), body: { legal_name: "Cliente Escala" } }), "customer")
const product = await must(request(`${api}/products`, { method: "POST", headers: auth(setUp.main), body: { name: "Produto", sale_price: "10" } }), "product")
const account = await must(request(`${api}/financial-accounts`, { method: "POST", headers: auth(setUp.main), body: { name: "Conta", type: "checking" } }), "account")
const deposit = await must(request(`${api}/financial-transactions`, { method: "POST", headers: auth(setUp.main), body: { account_id: account.id, amount: "100000000", name: "Depósito", posted_at: "2026-01-05" } }), "deposit")
const endpoint = await must(request(`${api}/webhook-endpoints`, { method: "POST", headers: auth(setUp.main), body: { url: receiver.url, events: ["sales-orders.create"] } }), "webhook endpoint")
receiver.setSecret(endpoint.secret)

// ---------------------------------------------------------------------------------------------
// The mixed load, with a host killed and started again
// ---------------------------------------------------------------------------------------------

const acknowledged = { orders: [], allocations: [] }
const tally = { requests: 0, failures: [], byStatus: new Map(), sentAgain: 0 }
const count = (answer, what) => {
  tally.requests++
  tally.sentAgain += (answer.attempts ?? 1) - 1
  tally.byStatus.set(answer.status, (tally.byStatus.get(answer.status) ?? 0) + 1)
  if (answer.status === 0 || answer.status >= 500) tally.failures.push(`${what}: ${answer.status} ${answer.text?.slice(0, 160) ?? answer.error?.message}`)
}

const orderBody = () => ({ customer_id: customer.id, items: [{ product_id: product.id, quantity: "2", unit_price: "10" }, { item_description: "Frete", quantity: "1", unit_price: "5.5" }] })

/** One client's loop: creates (kept when acknowledged), reads and allocations, until `until`. */
const restClient = async (until, index) => {
  for (let turn = 0; Date.now() < until; turn++) {
    const pick = (turn + index) % 10
    if (pick < 3) {
      const created = await writeWithRetries(`${api}/sales-orders`, "POST", setUp.main, orderBody())
      count(created, "create a sales order")
      if (created.status === 201) acknowledged.orders.push(created.json.id)
    } else if (pick === 3) {
      const receivable = await writeWithRetries(`${api}/receivables`, "POST", setUp.main, { customer_id: customer.id, amount: "10", due_date: "2026-12-31" })
      count(receivable, "create a receivable")
      if (receivable.status !== 201) continue
      const allocated = await writeWithRetries(`${api}/receivables/${receivable.json.id}/allocate`, "POST", setUp.main, { financial_transaction_id: deposit.id, allocated_amount: "10" })
      count(allocated, "allocate a receivable")
      if (allocated.status >= 200 && allocated.status < 300) acknowledged.allocations.push(receivable.json.id)
    } else if (pick < 8) {
      const listed = await readWithRetries(`${api}/sales-orders?limit=20`, setUp.main)
      count(listed, "list sales orders")
    } else {
      const id = acknowledged.orders[Math.floor(Math.random() * acknowledged.orders.length)]
      if (id === undefined) continue
      const read = await readWithRetries(`${api}/sales-orders/${id}`, setUp.main)
      count(read, "get a sales order")
    }
  }
}

/** The limited key, as fast as it goes through HAProxy: what the hosts let through, by minute of the store's clock. */
const limitedClient = async (until, outcomes) => {
  while (Date.now() < until) {
    const answer = await request(`${api}/customers?limit=1`, { headers: auth(setUp.limited) })
    outcomes.push(answer.status)
    if (answer.status === 429) await sleep(20)
  }
}

/** The hosts the cross-host flows use: not the one about to be killed, so no flow is cut in the middle by the kill. */
const live = () => hosts.filter((host) => !host.avoided)
/** The cross-host flow under way, which the kill waits for once its host is avoided. */
let flowInFlight = Promise.resolve()
const crossHostFlows = async (until, results) => {
  while (Date.now() < until) {
    const around = live()
    const rotated = [...around.slice(results.mcp.length % around.length), ...around.slice(0, results.mcp.length % around.length)]
    const flow = (async () => {
      results.mcp.push(await mcpAcrossHosts(rotated, setUp.main, setUp.tenant.id))
      const client = setUp.clients[results.oauth.length % setUp.clients.length]
      results.oauth.push(await oauthAcrossHosts(rotated, { ...client, email: setUp.user.email, password: PASSWORD }, api))
    })()
    flowInFlight = flow
    await flow
  }
}

log(`Mixed load for ${LOAD_SECONDS} s through HAProxy, ${CONCURRENCY} clients; host 2 killed with SIGKILL at 30% and started again at 60%`)
const started = Date.now()
const until = started + LOAD_SECONDS * 1000
const limitedOutcomes = []
const flows = { mcp: [], oauth: [] }
const killer = (async () => {
  await sleep(LOAD_SECONDS * 300)
  hosts[1].avoided = true
  await flowInFlight
  hosts[1].kill()
  log(`  host on ${hosts[1].port} killed (SIGKILL) at ${new Date().toISOString()}`)
  await sleep(LOAD_SECONDS * 300)
  await hosts[1].start()
  hosts[1].avoided = false
  log(`  host on ${hosts[1].port} started again at ${new Date().toISOString()}`)
})()
await Promise.all([
  ...Array.from({ length: CONCURRENCY }, (_, index) => restClient(until, index)),
  limitedClient(until, limitedOutcomes),
  crossHostFlows(until, flows),
  killer
])
const loadSeconds = (Date.now() - started) / 1000

// ---------------------------------------------------------------------------------------------
// Checks
// ---------------------------------------------------------------------------------------------

log("Waiting for the workers to send every webhook")
const sql = (statement) => run(Effect.flatMap(SqlClient.SqlClient, (client) => client.unsafe(statement)))
const drainDeadline = Date.now() + 60_000
while (Date.now() < drainDeadline) {
  const [pending] = await sql(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE status IN ('pending', 'retrying')`)
  if (pending.n === 0) break
  await sleep(250)
}
await sleep(500)

const ids = (list) => `ARRAY[${list.map((id) => `'${id}'`).join(",") || "NULL"}]::uuid[]`
const [stored] = await sql(`SELECT count(*)::int AS n FROM sales_orders WHERE id = ANY(${ids(acknowledged.orders)})`)
const [allocated] = await sql(`SELECT count(DISTINCT receivable_id)::int AS n FROM receivable_allocations WHERE receivable_id = ANY(${ids(acknowledged.allocations)})`)
const eventCounts = await sql(`SELECT o.id, count(e.id)::int AS n FROM sales_orders o
  LEFT JOIN events e ON e.tenant_id = o.tenant_id AND e.resource_id = o.id::text AND e.action = 'create' AND e.type LIKE 'sales%order%'
  WHERE o.tenant_id = '${setUp.tenant.id}' GROUP BY o.id`)
const notOnce = eventCounts.filter((row) => row.n !== 1)
const deliveries = await sql(`SELECT d.id::text AS id, d.event_id::text AS event_id, d.status FROM webhook_deliveries d WHERE d.endpoint_id = '${endpoint.id}'`)
const createEvents = await sql(`SELECT id::text AS id FROM events WHERE tenant_id = '${setUp.tenant.id}' AND action = 'create' AND type LIKE 'sales%order%'`)
const deliveredEvents = new Set(deliveries.map((delivery) => delivery.event_id))
const undelivered = createEvents.filter((event) => !deliveredEvents.has(event.id))
const unsent = deliveries.filter((delivery) => delivery.status !== "succeeded" || !receiver.received.has(delivery.id))
const duplicates = [...receiver.received.values()].filter((entry) => entry.count > 1)
const windows = await sql(`SELECT window_start, used FROM credential_rate_windows WHERE key LIKE '%${setUp.limitedId}%' ORDER BY window_start`)
const allowed = limitedOutcomes.filter((status) => status === 200).length
const minutes = Math.max(1, windows.length)
const mcpFailures = flows.mcp.flat()
const oauthFailures = flows.oauth.flat()

const checks = [
  ["acknowledged sales orders stored", `${stored.n} of ${acknowledged.orders.length}`, stored.n === acknowledged.orders.length && acknowledged.orders.length > 0],
  ["acknowledged allocations stored", `${allocated.n} of ${acknowledged.allocations.length}`, allocated.n === acknowledged.allocations.length],
  ["final answers without a response or 5xx", String(tally.failures.length), tally.failures.length === 0],
  ["writes still 409 when the client gave up (first attempt on the killed host, its key leased for 5 minutes)", String(tally.byStatus.get(409) ?? 0), true],
  ["sales orders with other than one create event", `${notOnce.length} of ${eventCounts.length}`, notOnce.length === 0],
  ["create events without a delivery", `${undelivered.length} of ${createEvents.length}`, undelivered.length === 0],
  ["deliveries not sent, or not received", `${unsent.length} of ${deliveries.length}`, unsent.length === 0],
  ["deliveries received more than once", String(duplicates.length), duplicates.length === 0],
  ["deliveries with a bad signature", String(receiver.badSignatures()), receiver.badSignatures() === 0],
  [`limited key's 200s (${RATE_LIMIT}/min, ${minutes} minute window${minutes === 1 ? "" : "s"})`, `${allowed} (${limitedOutcomes.length - allowed} refused)`, allowed <= RATE_LIMIT * minutes && allowed > 0],
  ["limited key's windows over the limit", String(windows.filter((window) => Number(window.used) > RATE_LIMIT).length), windows.every((window) => Number(window.used) <= RATE_LIMIT)],
  ["MCP sessions across hosts (failed)", `${flows.mcp.length} (${flows.mcp.filter((failures) => failures.length > 0).length})`, flows.mcp.length > 0 && mcpFailures.length === 0],
  ["OAuth code flows across hosts (failed)", `${flows.oauth.length} (${flows.oauth.filter((failures) => failures.length > 0).length})`, flows.oauth.length > 0 && oauthFailures.length === 0]
]

console.log(`\nMixed load: ${tally.requests} requests in ${loadSeconds.toFixed(1)} s (${(tally.requests / loadSeconds).toFixed(0)}/s); answers ${[...tally.byStatus].sort(([a], [b]) => a - b).map(([status, n]) => `${status}: ${n}`).join(", ")}`)
console.log(`Requests sent again after no answer or a 5xx (writes under their idempotency key, also after a 409 while their first attempt still ran): ${tally.sentAgain}`)
for (const failure of tally.failures.slice(0, 5)) console.log(`  ${failure}`)
console.log("\n| Check | Result | |\n|---|---|---|")
for (const [name, result, ok] of checks) console.log(`| ${name} | ${result} | ${ok ? "ok" : "FAILED"} |`)
for (const failure of [...mcpFailures, ...oauthFailures].slice(0, 10)) console.log(`  ${failure}`)

// ---------------------------------------------------------------------------------------------
// Throughput and CPU per request with 1, 2 and 3 hosts
// ---------------------------------------------------------------------------------------------

proxy.stop()
const pgPids = [postmasterPid(path.join(pair.dir, "primary")), postmasterPid(path.join(pair.dir, "standby"))]
const cpuOf = (pids) => pids.reduce((sum, pid) => sum + cpuMs(pid), 0)
const rows = []
for (const active of [1, 2, 3]) {
  proxy = await startHaproxy(hosts.slice(0, active), await freePort())
  const phaseUrl = proxy.url
  await sleep(700)
  const before = { erp: cpuOf(hosts.map((host) => host.pid)), pg: cpuOf(pgPids), pooler: cpuMs(pooler.pid), proxy: cpuMs(proxy.pid) }
  let done = 0
  const phaseUntil = Date.now() + PHASE_SECONDS * 1000
  const phaseStart = Date.now()
  await Promise.all(Array.from({ length: CONCURRENCY }, async (_, index) => {
    for (let turn = 0; Date.now() < phaseUntil; turn++) {
      const pick = (turn + index) % 5
      const answer = pick === 0
        ? await request(`${phaseUrl}/sales-orders`, { method: "POST", headers: auth(setUp.main), body: orderBody() })
        : pick < 3
        ? await request(`${phaseUrl}/sales-orders?limit=20`, { headers: auth(setUp.main) })
        : await request(`${phaseUrl}/sales-orders/${acknowledged.orders[turn % acknowledged.orders.length]}`, { headers: auth(setUp.main) })
      if (answer.status >= 200 && answer.status < 300) done++
    }
  }))
  const seconds = (Date.now() - phaseStart) / 1000
  const after = { erp: cpuOf(hosts.map((host) => host.pid)), pg: cpuOf(pgPids), pooler: cpuMs(pooler.pid), proxy: cpuMs(proxy.pid) }
  rows.push({ active, perSecond: done / seconds, erp: (after.erp - before.erp) / done, pg: (after.pg - before.pg) / done, pooler: (after.pooler - before.pooler) / done, proxy: (after.proxy - before.proxy) / done })
  proxy.stop()
}
console.log(`\nThroughput and CPU per request (${PHASE_SECONDS} s each, ${CONCURRENCY} clients; 1 create, 2 lists of 20, 2 gets in 5; this machine has ${os.availableParallelism()} cores)`)
console.log("\n| Hosts | Requests/s | erp CPU ms/request | PostgreSQL CPU ms/request | PgBouncer | HAProxy |\n|---|---|---|---|---|---|")
for (const row of rows) console.log(`| ${row.active} | ${row.perSecond.toFixed(0)} | ${row.erp.toFixed(2)} | ${row.pg.toFixed(2)} | ${row.pooler.toFixed(3)} | ${row.proxy.toFixed(3)} |`)

receiver.close()
await core.dispose()
const failed = checks.filter(([, , ok]) => !ok)
if (failed.length > 0) {
  console.log(`\n${failed.length} check(s) FAILED`)
  process.exitCode = 1
}
cleanUp()
process.exit()
