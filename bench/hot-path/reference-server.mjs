// The reference: what answering these requests costs at least, in Node, with the same SQL.
// `node:http` + `pg` and nothing else: it checks the token against the one it was given
// (in memory, as a warm authentication cache would), runs the statements the host ran for the
// request, credential bookkeeping aside (recorded by record.mjs: same text, same parameters,
// same order, one connection), serialises the rows it got as JSON, and answers the bytes the host answered. Never used by
// the product. Usage: node bench/hot-path/reference-server.mjs <database-url> <token> <recorded.json> [port]
import * as fs from "node:fs"
import * as http from "node:http"
import { createHash, timingSafeEqual } from "node:crypto"
import { createRequire } from "node:module"

const [url, token, recordedFile, port = "0"] = process.argv.slice(2)
const pg = createRequire(createRequire(import.meta.url).resolve("@erp/core"))("pg")
const recorded = JSON.parse(fs.readFileSync(recordedFile, "utf8"))
// The credential's own bookkeeping (key lookup, last use, rate-limit leases) is left out: the
// reference authenticates from memory, so its figures are the floor with or without it in the host.
const BOOKKEEPING = /\b(api_keys|api_key_permissions|credential_rate_windows)\b/
// MCP calls share one route (POST /): their body tells them apart.
const routes = new Map(Object.values(recorded).map((entry) => [`${entry.method} ${entry.path}${entry.mcp ? ` ${JSON.stringify(entry.body)}` : ""}`, {
  ...entry,
  statements: entry.statements.filter((statement) => !BOOKKEEPING.test(statement.text)),
  bytes: Buffer.from(entry.answer)
}]))
const pool = new pg.Pool({ connectionString: url, max: 10 })

// A create of a numbered record (a sales order) stores the per-tenant record_number the host took:
// replayed as recorded, every replay after the first would break the number's uniqueness. Each
// replay takes a fresh number instead (far above the host's), wherever the recorded one was a parameter.
let freshNumber = 1_000_000_000
const numberOf = (entry) => {
  try {
    const value = JSON.parse(entry.answer)?.record_number
    return entry.method === "POST" && Number.isInteger(value) ? value : undefined
  } catch {
    return undefined
  }
}
for (const route of routes.values()) route.number = numberOf(route)

// A request sent over several records (`targets`: an update going round products) was recorded
// on the first: each other one is the same route with that record's id in the path and statements.
for (const [key, route] of [...routes]) {
  if (!route.targets) continue
  const [recordedId, ...others] = route.targets
  for (const id of others) {
    routes.set(key.replace(recordedId, id), {
      ...route,
      statements: route.statements.map((statement) => ({ ...statement, values: statement.values.map((value) => (value === recordedId ? id : value)) }))
    })
  }
}

// An update is recorded as the read of the record and a write guarded by the `updated_at` it read
// (`… AND r.updated_at = $n::timestamptz`). Replayed as recorded, the guard names the first replay's
// value and every later one writes nothing; the reference reads `updated_at` from its own read, as the
// host does, and guards its write with it.
const GUARD = /updated_at = \$(\d+)::timestamptz/
for (const route of routes.values()) {
  for (const statement of route.statements) {
    const guard = GUARD.exec(statement.text)
    if (guard) statement.guardIndex = Number(guard[1]) - 1
  }
}
const UPDATED_AT = /"updated_at":"([^"]+)"/
const readUpdatedAt = (rows) => {
  for (const row of rows) for (const value of Object.values(row)) {
    const found = typeof value === "string" ? UPDATED_AT.exec(value) : null
    if (found) return found[1]
  }
  return undefined
}
const parametersOf = (route, statement, fresh, updatedAt) => {
  const values = route.number === undefined ? statement.values : statement.values.map((value) => (value === route.number || value === String(route.number) ? fresh : value))
  if (statement.guardIndex === undefined || updatedAt === undefined) return values
  return values.map((value, index) => (index === statement.guardIndex ? updatedAt : value))
}
const digest = (text) => createHash("sha256").update(text).digest()
const expected = digest(`Bearer ${token}`)

const answer = (response, status, body, contentType = "application/json") => {
  response.writeHead(status, { "content-type": contentType, "content-length": body.length })
  response.end(body)
}

http.createServer((request, response) => {
  const chunks = []
  request.on("data", (chunk) => chunks.push(chunk))
  request.on("end", async () => {
    const authorization = request.headers.authorization ?? ""
    if (!timingSafeEqual(digest(authorization), expected)) return answer(response, 401, Buffer.from('{"status_code":401}'))
    const raw = Buffer.concat(chunks).toString("utf8")
    const route = routes.get(`${request.method} ${request.url} ${raw}`) ?? routes.get(`${request.method} ${request.url}`)
    if (!route) return answer(response, 404, Buffer.from('{"status_code":404}'))
    if (raw.length > 0) JSON.parse(raw)
    const client = await pool.connect()
    try {
      let serialised = 0
      let updatedAt
      const fresh = route.number === undefined ? undefined : freshNumber++
      for (const statement of route.statements) {
        const values = parametersOf(route, statement, fresh, updatedAt)
        const result = await client.query(statement.name ? { name: statement.name, text: statement.text, values } : { text: statement.text, values })
        updatedAt = readUpdatedAt(result.rows) ?? updatedAt
        serialised += JSON.stringify(result.rows).length
      }
      if (serialised < 0) throw new Error("unreachable")
      answer(response, route.status, route.bytes, route.contentType)
    } catch (error) {
      await client.query("ROLLBACK").catch(() => undefined)
      answer(response, 500, Buffer.from(JSON.stringify({ status_code: 500, message: String(error) })))
    } finally {
      client.release()
    }
  })
}).listen(Number(port), "127.0.0.1", function () {
  console.log(JSON.stringify({ url: `http://127.0.0.1:${this.address().port}` }))
})
