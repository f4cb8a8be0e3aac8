// erp on several hosts: a PostgreSQL primary and a pg_basebackup standby, PgBouncer in transaction
// mode, three `erp serve` (reads on the standby) and two `erp worker` behind Debian's HAProxy.
// A mixed load runs through it while one host is killed with SIGKILL and started again; then the
// store and a webhook receiver are checked, and throughput and CPU per request are measured with
// 1, 2 and 3 hosts. Exits 1 when a check fails.
//
//   node bench/scale-out/run.mjs [--short] [--seconds N] [--concurrency N] [--no-replica]
//
// Needs `npm run build`, PostgreSQL's server programs, pgbouncer and haproxy.
import { Effect, ManagedRuntime } from "effect"
import { ALL_PERMISSIONS, layerCore, OAuth, Tenancy } from "@erp/core"
import { SqlClient } from "effect/sql"
import { execFileSync } from "node:child_process"
import { randomUUID } from "node:crypto"
import * as os from "node:os"
import * as path from "node:path"
import { startPostgresPair } from "../../scripts/postgres-pair.mjs"
import { cpuMs } from "../proc.mjs"
import { mcpAcrossHosts, mcpContinue, mcpOpen, oauthAcrossHosts, oauthCode, oauthTokens, readWithRetries, request, writeWithRetries } from "./clients.mjs"
import { ERP, freePort, postmasterPid, startHaproxy, startHost, startPgBouncer, startWorker, stopEverything } from "./cluster.mjs"
import { startReceiver } from "./receiver.mjs"

const flag = (name, fallback) => {
  const at = process.argv.indexOf(name)
  return at < 0 ? fallback : Number(process.argv[at + 1])
}
const SHORT = process.argv.includes("--short")
const LOAD_SECONDS = flag("--seconds", SHORT ? 12 : 40)
const PHASE_SECONDS = SHORT ? 4 : 15
const CONCURRENCY = flag("--concurrency", SHORT ? 8 : 16)
// Small enough that the limited key's clients pass it within seconds, in every window the load spans.
const RATE_LIMIT = 30
const LIMITED_CLIENTS = 2
const SECRET_KEY = "ZXJwIHRlc3Qgc2VjcmV0IGtleSwgMzIgYnl0ZXMgISE="
const PASSWORD = "correct horse battery staple"
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
const log = (line) => process.stderr.write(`${line}\n`)

let pair
const cleanUp = () => {
  stopEverything()
  pair?.stop()
  pair = undefined
}
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => { cleanUp(); process.exit(130) })
process.on("exit", cleanUp)

// ---------------------------------------------------------------------------------------------
// Set-up: the store, a tenant with its keys, a user and OAuth clients
// ---------------------------------------------------------------------------------------------

log("Starting a primary and a pg_basebackup standby")
pair = await startPostgresPair({ settings: ["max_connections = 300"] })
execFileSync(process.execPath, [ERP, "migrate"], { env: { ...process.env, DATABASE_URL: pair.primaryUrl, ERP_SECRET_KEY: SECRET_KEY }, stdio: ["ignore", "ignore", "inherit"] })
const core = ManagedRuntime.make(layerCore({ kind: "postgres", url: pair.primaryUrl }, { secretKey: SECRET_KEY }))
const run = (effect) => core.runPromise(effect)
const sql = (statement) => run(Effect.flatMap(SqlClient.SqlClient, (client) => client.unsafe(statement)))
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
  // The token endpoint limits each client to 10 requests a minute across hosts: each flow is another app's.
  const clients = []
  for (let index = 0; index < 60; index++) {
    const client = yield* oauth.createClient({ name: `Scale-out app ${index}`, redirectUris: [redirectUri], kind: "confidential", registration: "operator" })
    clients.push({ clientId: client.client.client_id, secret: client.secret, redirectUri })
  }
  return { tenant, main: main.token, limited: limited.token, limitedId: limited.key.id, user, clients }
}).pipe(Effect.orDie))

// ---------------------------------------------------------------------------------------------
// The processes: PgBouncer, three hosts, two workers, HAProxy, the webhook receiver
// ---------------------------------------------------------------------------------------------

const receiver = await startReceiver()
const pooler = await startPgBouncer(pair.primaryPort)
const haproxyPort = await freePort()
const hostEnv = {
  DATABASE_URL: pooler.url,
  ERP_DB_POOLER: "transaction",
  ...(process.argv.includes("--no-replica") ? {} : { ERP_DATABASE_READ_URL: pair.standbyUrl }),
  ERP_SECRET_KEY: SECRET_KEY,
  ERP_PUBLIC_URL: `http://127.0.0.1:${haproxyPort}`,
  ERP_TRUST_PROXY: "true",
  ERP_WEBHOOKS_ALLOW_PRIVATE: "true",
  ERP_DB_POOL_SIZE: "10"
}
log("Starting PgBouncer, three hosts, two workers and HAProxy")
const hosts = []
const startedHosts = Date.now()
const ports = [await freePort(), await freePort(), await freePort()]
hosts.push(...await Promise.all(ports.map((port) => startHost(port, hostEnv))))
const workers = await Promise.all([startWorker(hostEnv), startWorker(hostEnv)])
log(`  three hosts and two workers started in ${((Date.now() - startedHosts) / 1000).toFixed(1)} s`)
let proxy = await startHaproxy(hosts, haproxyPort)
const api = proxy.url

const auth = (token) => ({ authorization: `Bearer ${token}` })
const must = async (answer, what) => {
  const result = await answer
  if (result.status < 200 || result.status > 299) throw new Error(`${what}: ${result.status} ${result.text ?? result.error}`)
  return result.json
}
const post = (resource, body) => must(request(`${api}/${resource}`, { method: "POST", headers: auth(setUp.main), body }), `POST /${resource}`)
const customer = await post("customers", { legal_name: "Cliente Escala" })
const product = await post("products", { name: "Produto", sale_price: "10" })
const account = await post("financial-accounts", { name: "Conta", type: "checking" })
// One deposit per client: allocations lock their transaction, and one shared row would be a hot spot of the bench's making.
const deposits = []
for (let index = 0; index < CONCURRENCY; index++) {
  deposits.push(await post("financial-transactions", { account_id: account.id, amount: "10000000", name: `Depósito ${index}`, posted_at: "2026-01-05" }))
}
const SUBSCRIBED = ["sales-orders.create", "receivables.create", "receivables.update"]
const endpoint = await post("webhook-endpoints", { url: receiver.url, events: SUBSCRIBED })
receiver.setSecret(endpoint.secret)

// ---------------------------------------------------------------------------------------------
// The mixed load, with a host killed and started again
// ---------------------------------------------------------------------------------------------

/** What the clients were told was done: the ids of 201s and 2xx allocations, and the keys of writes given up. */
const acknowledged = { orders: [], receivables: [], allocations: [] }
const gaveUp = []
const tally = { requests: 0, failures: [], byStatus: new Map(), sentAgain: 0, latency: new Map(), failedAttempts: [] }
const count = (answer, kind, startedAt) => {
  tally.requests++
  tally.sentAgain += (answer.attempts ?? 1) - 1
  tally.byStatus.set(answer.status, (tally.byStatus.get(answer.status) ?? 0) + 1)
  if (!tally.latency.has(kind)) tally.latency.set(kind, [])
  tally.latency.get(kind).push(performance.now() - startedAt)
  if (answer.status === 0 || answer.status >= 500) tally.failures.push(`${kind}: ${answer.status} ${answer.text?.slice(0, 160) ?? answer.error?.message}`)
  for (const failed of answer.failedAttempts ?? []) tally.failedAttempts.push({ kind, at: elapsed(), ...failed })
}

// Each write names its idempotency key in `metadata`, so the store tells which request made which row.
const orderBody = (key) => ({ customer_id: customer.id, metadata: { bench_key: key }, items: [{ product_id: product.id, quantity: "2", unit_price: "10" }, { item_description: "Frete", quantity: "1", unit_price: "5.5" }] })

/** A write under a new key: kept when acknowledged; when the client gave up on it (still 409), noted to be sent again later. */
const write = async (kind, url, body, key = randomUUID(), receivableId = undefined) => {
  const startedAt = performance.now()
  const answer = await writeWithRetries(url, "POST", setUp.main, body, key)
  count(answer, kind, startedAt)
  if (answer.status === 409) gaveUp.push({ kind, url, body, key, receivableId })
  return answer
}

const read = async (kind, url) => {
  const startedAt = performance.now()
  count(await readWithRetries(url, setUp.main), kind, startedAt)
}

/** One client's loop until `load.until`: 3 in 10 create an order, 1 a receivable and its allocation, 4 list, 2 get one. */
const restClient = async (load, index) => {
  const deposit = deposits[index % deposits.length]
  for (let turn = 0; Date.now() < load.until; turn++) {
    const pick = (turn + index) % 10
    if (pick < 3) {
      const key = randomUUID()
      const created = await write("create a sales order (2 items)", `${api}/sales-orders`, orderBody(key), key)
      if (created.status === 201) acknowledged.orders.push(created.json.id)
    } else if (pick === 3) {
      const key = randomUUID()
      const receivable = await write("create a receivable", `${api}/receivables`, { customer_id: customer.id, amount: "10", due_date: "2026-12-31", metadata: { bench_key: key } }, key)
      if (receivable.status !== 201) continue
      acknowledged.receivables.push(receivable.json.id)
      const allocated = await write("allocate a receivable", `${api}/receivables/${receivable.json.id}/allocate`, { financial_transaction_id: deposit.id, allocated_amount: "10" }, undefined, receivable.json.id)
      if (allocated.status >= 200 && allocated.status < 300) acknowledged.allocations.push(receivable.json.id)
    } else if (pick < 8) {
      await read("list 20 sales orders", `${api}/sales-orders?limit=20`)
    } else {
      const id = acknowledged.orders[Math.floor(Math.random() * acknowledged.orders.length)]
      if (id !== undefined) await read("get a sales order", `${api}/sales-orders/${id}`)
    }
  }
}

/**
 * The limited key, as fast as it goes through HAProxy (round robin: every host counts it). Each
 * answer is placed in its minute window by `RateLimit-Reset`, the seconds until that window ends.
 */
const limitedClient = async (load, outcomes) => {
  while (Date.now() < load.until) {
    const answer = await request(`${api}/customers?limit=1`, { headers: auth(setUp.limited) })
    const reset = Number(answer.headers?.["ratelimit-reset"])
    outcomes.push({
      status: answer.status,
      window: Number.isFinite(reset) ? Math.round((Date.now() + reset * 1000) / 60_000) : undefined,
      ...(answer.status === 200 || answer.status === 429 ? {} : { at: elapsed(), text: (answer.text ?? answer.error?.message ?? "").replace(/\s+/g, " ").slice(0, 200), via: answer.headers?.["x-request-id"] ? "a host" : "HAProxy" })
    })
    if (answer.status === 429) await sleep(20)
  }
}

const signedIn = (client) => ({ ...client, email: setUp.user.email, password: PASSWORD })
/** A flow's failures and how long it took. */
const timed = async (flow) => {
  const startedAt = performance.now()
  const failures = await flow
  return { failures, ms: performance.now() - startedAt }
}

/**
 * MCP sessions and OAuth code flows, one after the other, each step on the next host. Host 2 is
 * left out until it answers again after its kill, so that no flow fails for being cut by the
 * kill; what outlives the kill is tried by the killer itself (a session and a code made on host 2).
 */
const crossHostFlows = async (load, results) => {
  while (Date.now() < load.until) {
    const around = hosts.filter((host) => !host.avoided)
    const shift = results.mcp.length % around.length
    const rotated = [...around.slice(shift), ...around.slice(0, shift)]
    results.mcp.push(await timed(mcpAcrossHosts(rotated, setUp.main, setUp.tenant.id)))
    // The last client is the killer's: the token endpoint counts 10 requests a minute per client.
    const client = setUp.clients[results.oauth.length % (setUp.clients.length - 1)]
    results.oauth.push(await timed(oauthAcrossHosts(rotated, signedIn(client), api)))
  }
}

/** Scans of sales_orders on each server, to show where the hosts' reads ran. */
const scans = (which) => Number(pair.psql(which, "SELECT coalesce(sum(seq_scan + coalesce(idx_scan, 0)), 0) FROM pg_stat_user_tables WHERE relname = 'sales_orders'") || 0)
const scansBefore = { primary: scans("primary"), standby: scans("standby") }

log(`Mixed load for ${LOAD_SECONDS} s through HAProxy, ${CONCURRENCY} clients; host 2 killed with SIGKILL at 30%, started again at 60%`)
const started = Date.now()
const at = (fraction) => started + LOAD_SECONDS * 1000 * fraction
const elapsed = () => `${((Date.now() - started) / 1000).toFixed(1)} s`
// The load lasts LOAD_SECONDS, and at least 30% of it after the killed host answers again (set then).
const load = { until: Number.POSITIVE_INFINITY }
const limitedOutcomes = []
const flows = { mcp: [], oauth: [], afterKill: { mcp: ["not run"], oauth: ["not run"] } }
hosts[1].avoided = true // until it answers again after its kill
const killer = (async () => {
  await sleep(Math.max(0, at(0.3) - Date.now()))
  // An MCP session opened and an authorization code given on host 2 just before it dies, both finished on the others after.
  const client = signedIn(setUp.clients[setUp.clients.length - 1])
  log(`  opening an MCP session and an OAuth code on host 2 at ${elapsed()}`)
  const session = await mcpOpen(hosts[1], setUp.main)
  const code = await oauthCode([hosts[1]], client)
  hosts[1].kill()
  log(`  host 2 (port ${hosts[1].port}) killed with SIGKILL at ${elapsed()}`)
  flows.afterKill.mcp = session.failures ?? await mcpContinue([hosts[0], hosts[2]], setUp.main, setUp.tenant.id, session.sessionId)
  flows.afterKill.oauth = code.failures ?? await oauthTokens([hosts[2], hosts[0]], client, code, api)
  log(`  the session and the code of host 2 finished on hosts 1 and 3 at ${elapsed()}`)
  await sleep(Math.max(0, at(0.6) - Date.now()))
  log(`  host 2 starting again at ${elapsed()}`)
  await hosts[1].start()
  hosts[1].avoided = false
  load.until = Math.max(at(1), Date.now() + LOAD_SECONDS * 300)
  log(`  host 2 answering again at ${elapsed()}; the load runs until ${((load.until - started) / 1000).toFixed(1)} s`)
})()
await Promise.all([
  ...Array.from({ length: CONCURRENCY }, (_, index) => restClient(load, index)),
  ...Array.from({ length: LIMITED_CLIENTS }, () => limitedClient(load, limitedOutcomes)),
  crossHostFlows(load, flows),
  killer
])
const loadSeconds = (Date.now() - started) / 1000
const proxyCounters = await proxy.stats()

// ---------------------------------------------------------------------------------------------
// Writes given up: sent again once their key's lease ends, as a client that keeps trying would
// ---------------------------------------------------------------------------------------------

const tenantId = setUp.tenant.id
const quoted = (list) => list.map((value) => `'${value}'`).join(",") || "NULL"
/** How many rows a given-up write has in the store: an order or receivable by the key in its metadata, an allocation by its receivable. */
const committedOf = async (entry) => Number(entry.receivableId
  ? (await sql(`SELECT count(*)::int AS n FROM receivable_allocations WHERE tenant_id = '${tenantId}' AND receivable_id = '${entry.receivableId}'`))[0].n
  : (await sql(`SELECT (SELECT count(*) FROM sales_orders WHERE tenant_id = '${tenantId}' AND metadata->>'bench_key' = '${entry.key}')
      + (SELECT count(*) FROM receivables WHERE tenant_id = '${tenantId}' AND metadata->>'bench_key' = '${entry.key}') AS n`))[0].n)
const gaveUpKeys = quoted(gaveUp.map((entry) => entry.key))
const heldKeys = await sql(`SELECT key, status_code, greatest(0, round(extract(epoch FROM locked_until - now())))::int AS held_seconds
  FROM idempotency_keys WHERE tenant_id = '${tenantId}' AND key IN (${gaveUpKeys})`)
const resent = []
for (const entry of gaveUp) resent.push({ ...entry, held: heldKeys.find((row) => row.key === entry.key), before: await committedOf(entry) })
// The lease is moved to now in the store: it stands for the five minutes a client would wait, which no bench run affords.
await sql(`UPDATE idempotency_keys SET locked_until = now() WHERE tenant_id = '${tenantId}' AND status_code IS NULL AND key IN (${gaveUpKeys})`)
for (const entry of resent) {
  entry.answer = await writeWithRetries(entry.url, "POST", setUp.main, entry.body, entry.key)
  entry.after = await committedOf(entry)
  const ok = entry.answer.status >= 200 && entry.answer.status < 300
  if (ok && entry.receivableId) acknowledged.allocations.push(entry.receivableId)
  else if (ok && entry.kind.startsWith("create a sales order")) acknowledged.orders.push(entry.answer.json.id)
  else if (ok) acknowledged.receivables.push(entry.answer.json.id)
}

// ---------------------------------------------------------------------------------------------
// Checks, from the primary and the receiver
// ---------------------------------------------------------------------------------------------

log("Waiting for the workers to send every webhook")
const drainDeadline = Date.now() + 90_000
while (Date.now() < drainDeadline) {
  const [pending] = await sql(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE status IN ('pending', 'retrying')`)
  if (pending.n === 0) break
  await sleep(250)
}
// A delivery is recorded as succeeded after the receiver answered: nothing is still on its way.
const scansAfter = { primary: scans("primary"), standby: scans("standby") }

const ids = (list) => `ARRAY[${list.map((id) => `'${id}'`).join(",") || "NULL"}]::uuid[]`
const one = async (statement) => (await sql(statement))[0].n
const storedOrders = await one(`SELECT count(*)::int AS n FROM sales_orders WHERE tenant_id = '${tenantId}' AND id = ANY(${ids(acknowledged.orders)})`)
const ordersWithoutTheirItems = await one(`SELECT count(*)::int AS n FROM sales_orders o WHERE o.tenant_id = '${tenantId}' AND o.id = ANY(${ids(acknowledged.orders)})
  AND (SELECT count(*) FROM sales_order_items i WHERE i.tenant_id = o.tenant_id AND i.sales_order_id = o.id) <> 2`)
const storedReceivables = await one(`SELECT count(*)::int AS n FROM receivables WHERE tenant_id = '${tenantId}' AND id = ANY(${ids(acknowledged.receivables)})`)
const storedAllocations = await one(`SELECT count(DISTINCT receivable_id)::int AS n FROM receivable_allocations WHERE tenant_id = '${tenantId}' AND receivable_id = ANY(${ids(acknowledged.allocations)})`)
const allocatedTwice = await one(`SELECT count(*)::int AS n FROM (SELECT receivable_id FROM receivable_allocations WHERE tenant_id = '${tenantId}' GROUP BY receivable_id HAVING count(*) > 1) twice`)
const keyedTwice = await one(`SELECT count(*)::int AS n FROM (
  SELECT metadata->>'bench_key' FROM sales_orders WHERE tenant_id = '${tenantId}' AND metadata ? 'bench_key' GROUP BY 1 HAVING count(*) > 1
  UNION ALL SELECT metadata->>'bench_key' FROM receivables WHERE tenant_id = '${tenantId}' AND metadata ? 'bench_key' GROUP BY 1 HAVING count(*) > 1) twice`)

/** Records of the load whose count of `action` events is not `expected(id)` (undefined: not known, left out). */
const eventMismatches = async (table, resource, action, expected) => {
  const rows = await sql(`SELECT r.id::text AS id, count(e.id)::int AS n FROM ${table} r
    LEFT JOIN events e ON e.tenant_id = r.tenant_id AND e.resource = '${resource}' AND e.resource_id = r.id::text AND e.action = '${action}'
    WHERE r.tenant_id = '${tenantId}' AND r.metadata ? 'bench_key' GROUP BY r.id`)
  const known = rows.filter((row) => expected(row.id) !== undefined)
  return { total: known.length, wrong: known.filter((row) => row.n !== expected(row.id)) }
}
const allocatedSet = new Set(acknowledged.allocations)
// An allocation given up and refused again after its lease may or may not have run: its receivable is left out.
const allocationUnknown = new Set(resent.filter((entry) => entry.receivableId && !(entry.answer.status >= 200 && entry.answer.status < 300)).map((entry) => entry.receivableId))
const orderEvents = await eventMismatches("sales_orders", "sales-orders", "create", () => 1)
const receivableEvents = await eventMismatches("receivables", "receivables", "create", () => 1)
// An allocation records one `receivables.update` on its receivable: a receivable the client saw allocated has one, the others none.
const allocationEvents = await eventMismatches("receivables", "receivables", "update", (id) => (allocationUnknown.has(id) ? undefined : allocatedSet.has(id) ? 1 : 0))

const subscribedEvents = await sql(`SELECT id::text AS id FROM events WHERE tenant_id = '${tenantId}' AND type IN (${SUBSCRIBED.map((type) => `'${type}'`).join(",")})`)
const deliveries = await sql(`SELECT id::text AS id, event_id::text AS event_id, status FROM webhook_deliveries WHERE tenant_id = '${tenantId}' AND endpoint_id = '${endpoint.id}'`)
const deliveredEvents = new Set(deliveries.map((delivery) => delivery.event_id))
const undelivered = subscribedEvents.filter((event) => !deliveredEvents.has(event.id))
const unsent = deliveries.filter((delivery) => delivery.status !== "succeeded" || !receiver.received.has(delivery.id))
const receivedTwice = [...receiver.received.values()].filter((entry) => entry.count > 1)
const deliveriesOfEvent = new Map()
for (const entry of receiver.received.values()) deliveriesOfEvent.set(entry.eventId, (deliveriesOfEvent.get(entry.eventId) ?? 0) + 1)
const eventsReceivedTwice = [...deliveriesOfEvent.values()].filter((n) => n > 1).length

const allowedByWindow = new Map()
for (const outcome of limitedOutcomes) {
  if (outcome.status === 200) allowedByWindow.set(outcome.window, (allowedByWindow.get(outcome.window) ?? 0) + 1)
}
const refused = limitedOutcomes.filter((outcome) => outcome.status === 429).length
const otherLimited = limitedOutcomes.filter((outcome) => outcome.status !== 200 && outcome.status !== 429)
const storeWindows = await sql(`SELECT window_start, used FROM credential_rate_windows WHERE key LIKE '%${setUp.limitedId}%' ORDER BY window_start`)
const windowsText = [...allowedByWindow].sort(([a], [b]) => a - b).map(([window, n]) => `${new Date(window * 60_000).toISOString().slice(11, 16)}: ${n}`).join(", ")
const percentile = (values, p) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((values.length * p) / 100))]
const mcpFailures = flows.mcp.flatMap((flow) => flow.failures)
const oauthFailures = flows.oauth.flatMap((flow) => flow.failures)
const failedFlows = (list) => list.filter((flow) => flow.failures.length > 0).length
const median = (list) => percentile(list.map((flow) => flow.ms), 50)?.toFixed(0) ?? "-"

const checks = [
  ["acknowledged sales orders stored", `${storedOrders} of ${acknowledged.orders.length}`, storedOrders === acknowledged.orders.length && storedOrders > 0],
  ["of them without their 2 items", String(ordersWithoutTheirItems), ordersWithoutTheirItems === 0],
  ["acknowledged receivables stored", `${storedReceivables} of ${acknowledged.receivables.length}`, storedReceivables === acknowledged.receivables.length && storedReceivables > 0],
  ["acknowledged allocations stored", `${storedAllocations} of ${acknowledged.allocations.length}`, storedAllocations === acknowledged.allocations.length && storedAllocations > 0],
  ["writes stored twice (one idempotency key, two rows)", String(keyedTwice), keyedTwice === 0],
  ["receivables allocated twice", String(allocatedTwice), allocatedTwice === 0],
  ["given-up writes already stored that ran again when sent after the lease", `${resent.filter((entry) => entry.before > 0 && entry.after > entry.before).length} of ${resent.filter((entry) => entry.before > 0).length}`, resent.every((entry) => entry.before === 0 || entry.after === entry.before)],
  ["final answers without a response, or 5xx", String(tally.failures.length), tally.failures.length === 0],
  ["sales orders with other than one create event", `${orderEvents.wrong.length} of ${orderEvents.total}`, orderEvents.wrong.length === 0],
  ["receivables with other than one create event", `${receivableEvents.wrong.length} of ${receivableEvents.total}`, receivableEvents.wrong.length === 0],
  ["receivables whose update events are not their acknowledged allocation", `${allocationEvents.wrong.length} of ${allocationEvents.total}`, allocationEvents.wrong.length === 0],
  ["subscribed events without a delivery", `${undelivered.length} of ${subscribedEvents.length}`, undelivered.length === 0 && subscribedEvents.length > 0],
  ["deliveries not succeeded, or not received", `${unsent.length} of ${deliveries.length}`, unsent.length === 0],
  ["deliveries received more than once", String(receivedTwice.length), receivedTwice.length === 0],
  ["events received under more than one delivery", String(eventsReceivedTwice), eventsReceivedTwice === 0],
  ["deliveries whose signature did not verify", String(receiver.badSignatures.length), receiver.badSignatures.length === 0],
  [`limited key (${RATE_LIMIT}/min): 200s by minute window, as the clients saw them`, `${windowsText || "none"} (${refused} refused)`, allowedByWindow.size > 0 && [...allowedByWindow.values()].every((n) => n <= RATE_LIMIT) && refused > 0 && otherLimited.length === 0],
  ["limited key: store windows over the limit", `${storeWindows.filter((window) => Number(window.used) > RATE_LIMIT).length} of ${storeWindows.length}`, storeWindows.length > 0 && storeWindows.every((window) => Number(window.used) <= RATE_LIMIT)],
  ["MCP sessions, each call on another host (failed; median ms a session)", `${flows.mcp.length} (${failedFlows(flows.mcp)}; ${median(flows.mcp)})`, flows.mcp.length > 0 && mcpFailures.length === 0],
  ["OAuth code flows, each step on another host (failed; median ms a flow)", `${flows.oauth.length} (${failedFlows(flows.oauth)}; ${median(flows.oauth)})`, flows.oauth.length > 0 && oauthFailures.length === 0],
  ["MCP session opened on host 2, called on hosts 1 and 3 after its kill", flows.afterKill.mcp.join("; ") || "worked", flows.afterKill.mcp.length === 0],
  ["OAuth code given on host 2, exchanged and refreshed on hosts 3 and 1 after its kill", flows.afterKill.oauth.join("; ") || "worked", flows.afterKill.oauth.length === 0]
]

console.log(`\nMixed load: ${tally.requests} requests in ${loadSeconds.toFixed(1)} s (${(tally.requests / loadSeconds).toFixed(0)}/s) from ${CONCURRENCY} clients, plus ${limitedOutcomes.length} of the limited key; answers ${[...tally.byStatus].sort(([a], [b]) => a - b).map(([status, n]) => `${status}: ${n}`).join(", ")}`)
console.log(`Sent again after no answer, a 5xx or a 409: ${tally.sentAgain}; writes given up with 409 (their first attempt ran on the killed host): ${gaveUp.length}`)
const attemptKinds = new Map()
for (const failed of tally.failedAttempts) {
  const label = `${failed.status} from ${failed.from}${failed.text ? `: ${failed.text.slice(0, 110)}` : ""}`
  const seen = attemptKinds.get(label) ?? { n: 0, first: failed.at, last: failed.at }
  attemptKinds.set(label, { ...seen, n: seen.n + 1, last: failed.at })
}
for (const [label, seen] of attemptKinds) console.log(`  sent again after ${label} (${seen.n}, ${seen.first} to ${seen.last})`)
for (const entry of resent) {
  console.log(`  ${entry.kind}, key ${entry.key}: ${entry.before} in the store after the load, its key ${entry.held?.status_code === null ? `held without an answer for ${entry.held.held_seconds} s more` : "not held"}; `
    + `sent again after the lease: ${entry.answer.status}${entry.answer.headers?.["idempotent-replayed"] ? " (replayed)" : ""}, now ${entry.after} in the store`)
}
console.log(`HAProxy, by host: ${proxyCounters.filter((row) => row.svname.startsWith("host")).map((row) => `${row.svname} ${row.stot} requests (${row.wretr} retried, ${row.wredis} sent elsewhere)`).join("; ")}`)
const salesOrderReads = (tally.latency.get("list 20 sales orders")?.length ?? 0) + (tally.latency.get("get a sales order")?.length ?? 0)
console.log(`Reads of sales orders (lists and gets, MCP's aside): ${salesOrderReads}; scans of sales_orders on the standby: ${scansAfter.standby - scansBefore.standby}, on the primary: ${scansAfter.primary - scansBefore.primary} (writes scan it too: their items' foreign keys)`)
console.log("\n| Request | n | p50 ms | p99 ms |\n|---|---|---|---|")
for (const [kind, values] of tally.latency) console.log(`| ${kind} | ${values.length} | ${percentile(values, 50).toFixed(0)} | ${percentile(values, 99).toFixed(0)} |`)
for (const failure of tally.failures.slice(0, 5)) console.log(`  ${failure}`)
console.log("\n| Check | Result | |\n|---|---|---|")
for (const [name, result, ok] of checks) console.log(`| ${name} | ${result} | ${ok ? "ok" : "FAILED"} |`)
for (const failure of [...mcpFailures, ...oauthFailures, ...receiver.badSignatures, ...otherLimited.map((outcome) => `limited key at ${outcome.at}: ${outcome.status} from ${outcome.via}: ${outcome.text}`)].slice(0, 10)) console.log(`  ${failure}`)
for (const row of [...orderEvents.wrong, ...receivableEvents.wrong, ...allocationEvents.wrong].slice(0, 5)) console.log(`  record ${row.id}: ${row.n} events`)

// ---------------------------------------------------------------------------------------------
// Throughput and CPU per request with 1, 2 and 3 hosts
// ---------------------------------------------------------------------------------------------

await proxy.stop()
const postmasters = [postmasterPid(path.join(pair.dir, "primary")), postmasterPid(path.join(pair.dir, "standby"))]
// The postmaster's waited-for children count the backends that ended during a phase.
const postgresCpu = (pid) => cpuMs(pid) + cpuMs(pid, "children")
const cpuOf = (pids) => pids.reduce((sum, pid) => sum + cpuMs(pid), 0)
const snapshot = () => ({
  erp: cpuOf(hosts.map((host) => host.pid)),
  workers: cpuOf(workers.map((worker) => worker.pid)),
  primary: postgresCpu(postmasters[0]),
  standby: postgresCpu(postmasters[1]),
  pooler: cpuMs(pooler.pid),
  proxy: cpuMs(proxy.pid)
})

/** The same mix as the load (1 create with items, 2 lists of 20, 2 gets in 5) for `seconds`; answers the 2xx count. */
const phaseLoad = async (url, seconds) => {
  let done = 0
  const phaseUntil = Date.now() + seconds * 1000
  await Promise.all(Array.from({ length: CONCURRENCY }, async (_, index) => {
    for (let turn = 0; Date.now() < phaseUntil; turn++) {
      const pick = (turn + index) % 5
      const answer = pick === 0
        ? await request(`${url}/sales-orders`, { method: "POST", headers: auth(setUp.main), body: orderBody(randomUUID()) })
        : pick < 3
        ? await request(`${url}/sales-orders?limit=20`, { headers: auth(setUp.main) })
        : await request(`${url}/sales-orders/${acknowledged.orders[turn % acknowledged.orders.length]}`, { headers: auth(setUp.main) })
      if (answer.status >= 200 && answer.status < 300) done++
    }
  }))
  return done
}

// The default run measures each number of hosts twice, in the order 1, 2, 3, 3, 2, 1, so that a drift of the
// machine's other work over the minutes weighs on every number of hosts alike.
const rounds = SHORT ? [1, 2, 3] : [1, 2, 3, 3, 2, 1]
const sums = new Map()
for (const active of rounds) {
  log(`Throughput with ${active} host${active === 1 ? "" : "s"} behind HAProxy`)
  proxy = await startHaproxy(hosts.slice(0, active))
  await phaseLoad(proxy.url, 1)
  const before = snapshot()
  const phaseStart = Date.now()
  const done = await phaseLoad(proxy.url, PHASE_SECONDS)
  const seconds = (Date.now() - phaseStart) / 1000
  const after = snapshot()
  const sum = sums.get(active) ?? { done: 0, seconds: 0 }
  sum.done += done
  sum.seconds += seconds
  for (const name of Object.keys(before)) sum[name] = (sum[name] ?? 0) + after[name] - before[name]
  sums.set(active, sum)
  await proxy.stop()
}
const rows = [...sums].sort(([a], [b]) => a - b).map(([active, sum]) => {
  const per = (name) => sum[name] / sum.done
  return { active, perSecond: sum.done / sum.seconds, erp: per("erp"), workers: per("workers"), primary: per("primary"), standby: per("standby"), pooler: per("pooler"), proxy: per("proxy") }
})
console.log(`\nThroughput and CPU per request (${rounds.length === 3 ? "" : "twice "}${PHASE_SECONDS} s each after 1 s of warm-up, ${CONCURRENCY} clients; 1 create with 2 items, 2 lists of 20, 2 gets in 5; this machine has ${os.availableParallelism()} cores, the clients run on them too)`)
console.log("\n| Hosts | Requests/s | CPU ms/request: erp hosts | erp workers | PostgreSQL primary | standby | PgBouncer | HAProxy |\n|---|---|---|---|---|---|---|---|")
for (const row of rows) console.log(`| ${row.active} | ${row.perSecond.toFixed(0)} | ${row.erp.toFixed(2)} | ${row.workers.toFixed(2)} | ${row.primary.toFixed(2)} | ${row.standby.toFixed(2)} | ${row.pooler.toFixed(2)} | ${row.proxy.toFixed(2)} |`)

await receiver.close()
await core.dispose()
const failed = checks.filter(([, , ok]) => !ok)
if (failed.length > 0) console.log(`\n${failed.length} check(s) FAILED: ${failed.map(([name]) => name).join("; ")}`)
cleanUp()
process.exit(failed.length > 0 ? 1 : 0)
