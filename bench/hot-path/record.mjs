// Records what the host does for each benchmarked request: the statements it sends (text and
// parameters, in order) and the body it answers. The reference server replays exactly that.
// Runs the host in this process, with `pg` watched; requests go one at a time, each twice
// (the second, warm one is kept: no authentication statement, as in the steady state).
// Usage: node bench/hot-path/record.mjs <database-url> <token> <out.json> <requests.json>
import { CursorSecret, encodeCursor, layerCore } from "@erp/core"
import { layerNodeServer } from "@erp/http"
import { HttpServer } from "effect/http"
import { Effect, Layer, ManagedRuntime } from "effect"
import * as fs from "node:fs"
import { createRequire } from "node:module"

const [url, token, out, requestsFile] = process.argv.slice(2)
const requests = JSON.parse(fs.readFileSync(requestsFile, "utf8"))

// The very `pg` the core loads (resolved from @erp/core), so its queries are the ones seen.
const require = createRequire(createRequire(import.meta.url).resolve("@erp/core"))
const pg = require("pg")
let statements = []
const query = pg.Client.prototype.query
pg.Client.prototype.query = function (config, values, callback) {
  const text = typeof config === "string" ? config : config?.text
  const params = typeof config === "string" ? values : config?.values
  // A statement the host keeps prepared (named) is replayed prepared too: the same work on the server.
  const name = typeof config === "object" ? config?.name : undefined
  if (typeof text === "string") statements.push({ text, values: Array.isArray(params) ? params : [], ...(name ? { name } : {}) })
  return query.call(this, config, values, callback)
}

const runtime = ManagedRuntime.make(layerNodeServer({ port: 0 }).pipe(Layer.provideMerge(layerCore({ kind: "postgres", url }))))
const address = await runtime.runPromise(Effect.map(HttpServer.HttpServer, (server) => server.address))
const base = `http://127.0.0.1:${address.port}`
const secret = (await runtime.runPromise(CursorSecret)).key

const send = (request) =>
  fetch(base + request.path, {
    method: request.method,
    headers: { authorization: `Bearer ${token}`, ...(request.body ? { "content-type": "application/json" } : {}), ...request.headers },
    ...(request.body ? { body: JSON.stringify(request.body) } : {})
  })

/** An MCP call: a session is opened first (stored: the host and the reference's replay resume it). */
const MCP_ACCEPT = { accept: "application/json, text/event-stream" }
const withSession = async (request) => {
  if (!request.mcp) return request
  const opened = await send({ method: "POST", path: request.path, headers: MCP_ACCEPT, body: { jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "erp-bench", version: "1" } } } })
  const session = opened.headers.get("mcp-session-id")
  if (!session) throw new Error(`MCP initialize answered ${opened.status}: ${await opened.text()}`)
  await opened.text()
  const headers = { ...MCP_ACCEPT, "mcp-session-id": session, "mcp-protocol-version": "2025-06-18" }
  await (await send({ method: "POST", path: request.path, headers, body: { jsonrpc: "2.0", method: "notifications/initialized" } })).text()
  return { ...request, headers }
}

/** A cursor deep in a walk (`deep: [sortValue, id]`), minted as the host would after walking there. */
const resolve = async (request) => {
  if (!request.deep) return request
  const first = await (await send({ method: "GET", path: request.path })).json()
  const body = JSON.parse(Buffer.from(first.pagination.current_query_cursor.split(".")[0], "base64url").toString())
  const cursor = encodeCursor(secret, { direction: "next", key: request.deep, query: body.q })
  return { ...request, path: `${request.path}&cursor=${encodeURIComponent(cursor)}` }
}

const recorded = {}
for (const [name, given] of Object.entries(requests)) {
  const request = await withSession(await resolve(given))
  let kept
  // The first round warms the key and the caches; of the warm rounds the one with the fewest
  // statements is kept (a statement of the host's own background work may fall into a window).
  const rounds = request.bodies ? request.bodies.length * 2 : 3
  for (let round = 0; round < rounds; round++) {
    await new Promise((resolve) => setTimeout(resolve, 50))
    statements = []
    const body = request.bodies?.[round % request.bodies.length]
    const response = await send(body ? { ...request, body } : request)
    const text = await response.text()
    if (process.env.DEBUG) console.log(name, round, statements.length)
    const sample = { ...request, status: response.status, contentType: response.headers.get("content-type"), answer: text, statements }
    if (round > 0 && (kept === undefined || sample.statements.length < kept.statements.length)) kept = sample
  }
  if (kept.status >= 300) throw new Error(`${name}: ${kept.status} ${kept.answer.slice(0, 300)}`)
  recorded[name] = kept
}
fs.writeFileSync(out, JSON.stringify(recorded))
await runtime.dispose()
process.exit(0)
