// What the scale-out bench's clients do: REST calls with retries under one idempotency key, an
// MCP session whose calls go to a different host each, and the OAuth code flow with each step on
// another host. Plain HTTP, no client library: what crosses the hosts is what is tested.
import { createHash, randomBytes, randomInt, randomUUID } from "node:crypto"
import * as http from "node:http"

const agent = new http.Agent({ keepAlive: true, maxSockets: 256 })

/** One HTTP request; answers `{ status, headers, text, json }`, or `{ status: 0, error }` when no answer came. */
export const request = (url, { method = "GET", headers = {}, body, localAddress, keepAlive = true } = {}) =>
  new Promise((resolve) => {
    const target = new URL(url)
    const payload = body === undefined ? undefined : Buffer.from(typeof body === "string" ? body : JSON.stringify(body))
    const outgoing = http.request({
      host: target.hostname,
      port: target.port,
      path: `${target.pathname}${target.search}`,
      method,
      headers: { ...(payload ? { "content-length": String(payload.length) } : {}), ...(body !== undefined && typeof body !== "string" ? { "content-type": "application/json" } : {}), ...headers },
      ...(localAddress ? { localAddress } : {}),
      agent: keepAlive && !localAddress ? agent : false
    }, (response) => {
      const chunks = []
      response.on("data", (chunk) => chunks.push(chunk))
      response.on("error", (error) => resolve({ status: 0, error }))
      response.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8")
        let json
        try {
          json = text && (response.headers["content-type"] ?? "").includes("json") ? JSON.parse(text) : undefined
        } catch {
          json = undefined
        }
        resolve({ status: response.statusCode ?? 0, headers: response.headers, text, json })
      })
    })
    outgoing.setTimeout(30_000, () => outgoing.destroy(new Error("timed out")))
    outgoing.on("error", (error) => resolve({ status: 0, error }))
    outgoing.end(payload)
  })

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * A write as a careful integrator sends it: one `Idempotency-Key`, sent again while no answer
 * came or the answer was a 5xx (a host killed under it, the store busy). Answers the last answer.
 */
export const writeWithRetries = async (url, method, token, body) => {
  const key = randomUUID()
  let answer
  let attempt = 0
  for (; attempt < 8; attempt++) {
    answer = await request(url, { method, headers: { authorization: `Bearer ${token}`, "idempotency-key": key }, body })
    // 409: the first attempt is still running on a host; its answer is kept for the key.
    if (answer.status !== 0 && answer.status < 500 && answer.status !== 409) break
    await sleep(100 * (attempt + 1))
  }
  return { ...answer, attempts: Math.min(attempt + 1, 8) }
}

/** A read, sent again (at most three times) after no answer or a 5xx, as any client does when a host dies under it. */
export const readWithRetries = async (url, token) => {
  let answer
  let attempt = 0
  for (; attempt < 3; attempt++) {
    answer = await request(url, { headers: { authorization: `Bearer ${token}` } })
    if (answer.status !== 0 && answer.status < 500) break
    await sleep(100 * (attempt + 1))
  }
  return { ...answer, attempts: Math.min(attempt + 1, 3) }
}

// ---------------------------------------------------------------------------------------------
// MCP over Streamable HTTP, each call on the next host
// ---------------------------------------------------------------------------------------------

const MCP_HEADERS = { accept: "application/json, text/event-stream", "content-type": "application/json", "mcp-protocol-version": "2025-06-18" }

/** A session opened on `hosts[0]`, a tool called on each other host with its id, ended on the last. Answers the failures, by step. */
export const mcpAcrossHosts = async (hosts, token, tenantId) => {
  const failures = []
  const call = (host, body, sessionId) =>
    request(`${host.url}/`, { method: "POST", headers: { ...MCP_HEADERS, authorization: `Bearer ${token}`, ...(sessionId ? { "mcp-session-id": sessionId } : {}) }, body })
  const opened = await call(hosts[0], { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "scale-out bench", version: "1" } } })
  const sessionId = opened.headers?.["mcp-session-id"]
  if (opened.status !== 200 || !sessionId) return [`initialize on ${hosts[0].port}: ${opened.status} ${opened.text ?? opened.error}`]
  const initialized = await call(hosts[1 % hosts.length], { jsonrpc: "2.0", method: "notifications/initialized" }, sessionId)
  if (initialized.status !== 202) failures.push(`initialized on ${hosts[1 % hosts.length].port}: ${initialized.status}`)
  for (const [index, host] of hosts.entries()) {
    const listed = await call(host, { jsonrpc: "2.0", id: 10 + index, method: "tools/call", params: { name: "list_sales_orders", arguments: { tenant_id: tenantId, limit: 5 } } }, sessionId)
    if (listed.status !== 200 || listed.json?.result?.isError || !listed.json?.result) failures.push(`tools/call on ${host.port}: ${listed.status} ${listed.text?.slice(0, 200) ?? listed.error}`)
  }
  const ended = await request(`${hosts[hosts.length - 1].url}/`, { method: "DELETE", headers: { ...MCP_HEADERS, authorization: `Bearer ${token}`, "mcp-session-id": sessionId } })
  if (ended.status !== 204) failures.push(`DELETE on ${hosts[hosts.length - 1].port}: ${ended.status}`)
  return failures
}

// ---------------------------------------------------------------------------------------------
// The OAuth code flow, each step on another host
// ---------------------------------------------------------------------------------------------

const hiddenFields = (html) => {
  const fields = {}
  for (const [tag] of html.matchAll(/<input\b[^>]*>/g)) {
    if (!/type="hidden"/.test(tag)) continue
    const name = /\sname="([^"]*)"/.exec(tag)?.[1]
    const value = /\svalue="([^"]*)"/.exec(tag)?.[1] ?? ""
    if (name) fields[name] = value.replace(/&(amp|lt|gt|quot|#39|#96);/g, (_, entity) => ({ amp: "&", lt: "<", gt: ">", quot: '"', "#39": "'", "#96": "`" })[entity])
  }
  return fields
}

/** A browser over plain HTTP: one cookie jar for every host (they share the public URL), one loopback address. */
const browser = () => {
  // The authorize endpoint is limited per address: each flow comes from one of its own.
  const localAddress = `127.${randomInt(1, 255)}.${randomInt(0, 256)}.${randomInt(1, 255)}`
  const cookies = new Map()
  const send = async (method, url, form) => {
    const headers = {}
    if (cookies.size > 0) headers.cookie = [...cookies].map(([name, value]) => `${name}=${value}`).join("; ")
    if (form) headers["content-type"] = "application/x-www-form-urlencoded"
    const answer = await request(url, { method, headers, ...(form ? { body: new URLSearchParams(form).toString() } : {}), localAddress })
    for (const line of answer.headers?.["set-cookie"] ?? []) {
      const [pair] = line.split(";")
      const at = pair.indexOf("=")
      const value = pair.slice(at + 1)
      if (value === "" || /max-age=0/i.test(line)) cookies.delete(pair.slice(0, at))
      else cookies.set(pair.slice(0, at), value)
    }
    return answer
  }
  return { get: (url) => send("GET", url), post: (url, form) => send("POST", url, form) }
}

/**
 * Authorize on one host, sign in on the next, consent on the next, exchange the code on the next
 * and refresh on the next: each step finds what the last one stored. Answers the failures.
 */
export const oauthAcrossHosts = async (hosts, { clientId, secret, redirectUri, email, password }, apiUrl) => {
  const at = (step) => hosts[step % hosts.length].url
  const agent = browser()
  const verifier = randomBytes(32).toString("base64url")
  const challenge = createHash("sha256").update(verifier).digest("base64url")
  const state = randomUUID()
  const query = new URLSearchParams({ response_type: "code", client_id: clientId, redirect_uri: redirectUri, scope: "sales-orders:read", state, code_challenge: challenge, code_challenge_method: "S256" })
  const page = await agent.get(`${at(0)}/oauth/authorize?${query}`)
  if (page.status !== 200) return [`authorize page: ${page.status} ${page.text?.slice(0, 200) ?? page.error}`]
  const signIn = await agent.post(`${at(1)}/oauth/authorize`, { ...hiddenFields(page.text), email, password })
  if (signIn.status !== 303) return [`sign-in on ${at(1)} at ${new Date().toISOString()}: ${signIn.status} ${signIn.text?.slice(0, 200) ?? signIn.error}`]
  const back = new URL(signIn.headers.location, at(1))
  const consentPage = await agent.get(`${at(2)}${back.pathname}${back.search}`)
  if (consentPage.status !== 200) return [`consent page: ${consentPage.status} ${consentPage.text?.slice(0, 200) ?? consentPage.error}`]
  const consent = await agent.post(`${at(3)}/oauth/authorize`, { ...hiddenFields(consentPage.text), decision: "allow" })
  const redirect = consent.headers?.location ? new URL(consent.headers.location, at(3)) : undefined
  const code = redirect?.searchParams.get("code")
  if (consent.status !== 303 || !code || redirect.searchParams.get("state") !== state) return [`consent: ${consent.status} ${consent.headers?.location ?? consent.text?.slice(0, 200)}`]
  const basic = `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`).toString("base64")}`
  const token = (step, form) => request(`${at(step)}/oauth/token`, { method: "POST", headers: { authorization: basic, "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams(form).toString() })
  const exchanged = await token(4, { grant_type: "authorization_code", code, redirect_uri: redirectUri, code_verifier: verifier })
  if (exchanged.status !== 200) return [`code exchange: ${exchanged.status} ${exchanged.text?.slice(0, 200)}`]
  const refreshed = await token(5, { grant_type: "refresh_token", refresh_token: exchanged.json.refresh_token })
  if (refreshed.status !== 200) return [`refresh: ${refreshed.status} ${refreshed.text?.slice(0, 200)}`]
  const used = await request(`${apiUrl}/sales-orders?limit=1`, { headers: { authorization: `Bearer ${refreshed.json.access_token}` } })
  return used.status === 200 ? [] : [`the refreshed token's read: ${used.status} ${used.text?.slice(0, 200)}`]
}
