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

/** What an attempt that is sent again answered: its status, where from, and the start of its body. */
const failedAttempt = (answer) => ({
  status: answer.status,
  // The hosts name every answer with x-request-id; HAProxy's own answers (503: no host could take it) carry none.
  from: answer.status === 0 ? "no answer" : answer.headers?.["x-request-id"] ? "a host" : "HAProxy",
  text: (answer.text ?? answer.error?.message ?? "").replace(/\s+/g, " ").slice(0, 160)
})

/**
 * A write as a careful integrator sends it: one `Idempotency-Key`, sent again while no answer
 * came or the answer was a 5xx (a host killed under it, the store busy) or 409 (the key's first
 * attempt still running; not once it says the write committed). Answers the last answer, with the
 * attempts and what the failed ones said.
 */
export const writeWithRetries = async (url, method, token, body, key = randomUUID()) => {
  const failedAttempts = []
  for (let attempt = 1; ; attempt++) {
    const answer = await request(url, { method, headers: { authorization: `Bearer ${token}`, "idempotency-key": key }, body })
    // 409 IDEMPOTENCY_KEY_COMMITTED is final: the write ran, its answer was lost with its host.
    const again = answer.status === 0 || answer.status >= 500 || (answer.status === 409 && answer.json?.code !== "IDEMPOTENCY_KEY_COMMITTED")
    if (!again || attempt === 8) return { ...answer, attempts: attempt, failedAttempts }
    failedAttempts.push(failedAttempt(answer))
    await sleep(100 * attempt)
  }
}

/** A read, sent again (at most three times) after no answer or a 5xx, as any client does when a host dies under it. */
export const readWithRetries = async (url, token) => {
  const failedAttempts = []
  for (let attempt = 1; ; attempt++) {
    const answer = await request(url, { headers: { authorization: `Bearer ${token}` } })
    const again = answer.status === 0 || answer.status >= 500
    if (!again || attempt === 3) return { ...answer, attempts: attempt, failedAttempts }
    failedAttempts.push(failedAttempt(answer))
    await sleep(100 * attempt)
  }
}

// ---------------------------------------------------------------------------------------------
// MCP over Streamable HTTP, each call on the next host
// ---------------------------------------------------------------------------------------------

const MCP_HEADERS = { accept: "application/json, text/event-stream", "content-type": "application/json", "mcp-protocol-version": "2025-06-18" }

const mcpPost = (host, token, body, sessionId) =>
  request(`${host.url}/`, { method: "POST", headers: { ...MCP_HEADERS, authorization: `Bearer ${token}`, ...(sessionId ? { "mcp-session-id": sessionId } : {}) }, body })

/** `initialize` on `host`: answers `{ sessionId }`, or `{ failures }`. */
export const mcpOpen = async (host, token) => {
  const opened = await mcpPost(host, token, { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "scale-out bench", version: "1" } } })
  const sessionId = opened.headers?.["mcp-session-id"]
  return opened.status === 200 && sessionId ? { sessionId } : { failures: [`initialize on ${host.port}: ${opened.status} ${opened.text?.slice(0, 200) ?? opened.error}`] }
}

/**
 * The rest of a session, each step on the next of `hosts`: `notifications/initialized`, a
 * `tools/call` per host, then `DELETE`. Answers the failures.
 */
export const mcpContinue = async (hosts, token, tenantId, sessionId) => {
  const failures = []
  const on = (step) => hosts[step % hosts.length]
  const initialized = await mcpPost(on(0), token, { jsonrpc: "2.0", method: "notifications/initialized" }, sessionId)
  if (initialized.status !== 202) failures.push(`initialized on ${on(0).port}: ${initialized.status}`)
  for (let step = 1; step <= hosts.length; step++) {
    const listed = await mcpPost(on(step), token, { jsonrpc: "2.0", id: 10 + step, method: "tools/call", params: { name: "list_sales_orders", arguments: { tenant_id: tenantId, limit: 5 } } }, sessionId)
    if (listed.status !== 200 || listed.json?.result?.isError || !listed.json?.result) failures.push(`tools/call on ${on(step).port}: ${listed.status} ${listed.text?.slice(0, 200) ?? listed.error}`)
  }
  const last = on(hosts.length + 1)
  const ended = await request(`${last.url}/`, { method: "DELETE", headers: { ...MCP_HEADERS, authorization: `Bearer ${token}`, "mcp-session-id": sessionId } })
  if (ended.status !== 204) failures.push(`DELETE on ${last.port}: ${ended.status}`)
  return failures
}

/** A session opened on `hosts[0]` and continued on each of the others: answers the failures. */
export const mcpAcrossHosts = async (hosts, token, tenantId) => {
  const opened = await mcpOpen(hosts[0], token)
  return opened.failures ?? await mcpContinue([...hosts.slice(1), hosts[0]], token, tenantId, opened.sessionId)
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
 * The browser's part, a step on each host in turn: the authorize page, the sign-in, the consent
 * page, the consent. Answers `{ code, verifier }`, or `{ failures }`.
 */
export const oauthCode = async (hosts, { clientId, redirectUri, email, password }) => {
  const at = (step) => hosts[step % hosts.length].url
  const agent = browser()
  const verifier = randomBytes(32).toString("base64url")
  const challenge = createHash("sha256").update(verifier).digest("base64url")
  const state = randomUUID()
  const query = new URLSearchParams({ response_type: "code", client_id: clientId, redirect_uri: redirectUri, scope: "sales-orders:read", state, code_challenge: challenge, code_challenge_method: "S256" })
  const page = await agent.get(`${at(0)}/oauth/authorize?${query}`)
  if (page.status !== 200) return { failures: [`authorize page on ${at(0)}: ${page.status} ${page.text?.slice(0, 200) ?? page.error}`] }
  const signIn = await agent.post(`${at(1)}/oauth/authorize`, { ...hiddenFields(page.text), email, password })
  if (signIn.status !== 303) return { failures: [`sign-in on ${at(1)}: ${signIn.status} ${signIn.text?.slice(0, 200) ?? signIn.error}`] }
  const back = new URL(signIn.headers.location, at(1))
  const consentPage = await agent.get(`${at(2)}${back.pathname}${back.search}`)
  if (consentPage.status !== 200) return { failures: [`consent page on ${at(2)}: ${consentPage.status} ${consentPage.text?.slice(0, 200) ?? consentPage.error}`] }
  const consent = await agent.post(`${at(3)}/oauth/authorize`, { ...hiddenFields(consentPage.text), decision: "allow" })
  const redirect = consent.headers?.location ? new URL(consent.headers.location, at(3)) : undefined
  const code = redirect?.searchParams.get("code")
  if (consent.status !== 303 || !code || redirect.searchParams.get("state") !== state) return { failures: [`consent on ${at(3)}: ${consent.status} ${consent.headers?.location ?? consent.text?.slice(0, 200)}`] }
  return { code, verifier }
}

/** The app's part: the code exchanged on `hosts[0]`, the refresh on `hosts[1]`, the new access token used through `apiUrl`. Answers the failures. */
export const oauthTokens = async (hosts, { clientId, secret, redirectUri }, { code, verifier }, apiUrl) => {
  const at = (step) => hosts[step % hosts.length].url
  const basic = `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`).toString("base64")}`
  const token = (step, form) => request(`${at(step)}/oauth/token`, { method: "POST", headers: { authorization: basic, "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams(form).toString() })
  const exchanged = await token(0, { grant_type: "authorization_code", code, redirect_uri: redirectUri, code_verifier: verifier })
  if (exchanged.status !== 200) return [`code exchange on ${at(0)}: ${exchanged.status} ${exchanged.text?.slice(0, 200) ?? exchanged.error}`]
  const refreshed = await token(1, { grant_type: "refresh_token", refresh_token: exchanged.json.refresh_token })
  if (refreshed.status !== 200) return [`refresh on ${at(1)}: ${refreshed.status} ${refreshed.text?.slice(0, 200) ?? refreshed.error}`]
  const used = await request(`${apiUrl}/sales-orders?limit=1`, { headers: { authorization: `Bearer ${refreshed.json.access_token}` } })
  return used.status === 200 ? [] : [`the refreshed token's read: ${used.status} ${used.text?.slice(0, 200)}`]
}

/** Each step of the flow on the next host: authorize, sign-in, consent page, consent, code exchange, refresh. Answers the failures. */
export const oauthAcrossHosts = async (hosts, client, apiUrl) => {
  const got = await oauthCode(hosts, client)
  return got.failures ?? await oauthTokens([hosts[4 % hosts.length], hosts[5 % hosts.length]], client, got, apiUrl)
}
