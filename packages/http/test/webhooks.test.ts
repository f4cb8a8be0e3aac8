import { SqlClient } from "effect/sql"
import {
  allScopes, asOperator, layerWebhookDispatcher, OAuth, parsePermissionSpecs, pruneEvents, type Principal, resourceCodes, ResourceEngine, type Role, Tenancy,
  webhookDeliveries, webhookEndpoints, type DispatcherOptions
} from "@erp/core"
import { Effect, Fiber, Layer, Result } from "effect"
import { randomBytes } from "node:crypto"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { startTestHost, type TestHost, type TestTenant } from "../../../test/support/host.js"
import { storeKinds, testStore } from "../../../test/support/stores.js"
import { adminAccessToken, createOAuthUser, FormSession, hiddenFieldsOf, makePkce, TEST_REDIRECT_URI } from "../../../test/support/oauth.js"
import { eventually, startReceiver } from "../../../test/support/webhook-receiver.js"

type Receiver = Awaited<ReturnType<typeof startReceiver>>

/** An access token of a new user of `tenantId` with `role` and member permissions, issued directly (scopes: every one, unless given). */
const userAccessToken = (host: TestHost, tenantId: string, role: Role, permissions: ReadonlyArray<string>, scopes = allScopes()): Promise<string> =>
  host.run(Effect.gen(function* () {
    const tenancy = yield* Tenancy
    const oauth = yield* OAuth
    const user = yield* tenancy.createUser({ email: `${role}-${randomBytes(6).toString("hex")}@example.com`, name: role })
    yield* tenancy.addMember({ tenantId, userId: user.id, role, permissions: Result.getOrThrow(parsePermissionSpecs(permissions)) })
    const { client } = yield* oauth.createClient({ name: "webhook tests", redirectUris: [TEST_REDIRECT_URI], kind: "confidential", registration: "operator" })
    const pkce = makePkce()
    const code = yield* oauth.issueCode({ client, userId: user.id, tenantId, redirectUri: TEST_REDIRECT_URI, redirectUriGiven: true, scopes, codeChallenge: pkce.challenge, resource: undefined })
    const tokens = yield* oauth.exchangeCode({ client, code, redirectUri: TEST_REDIRECT_URI, codeVerifier: pkce.verifier, resource: undefined }, { issuer: host.url })
    return tokens.access_token
  }).pipe(Effect.orDie))

/** A receiver that takes every request and never answers: how many are open now, and at most. */
const startSilentReceiver = async () => {
  let open = 0
  let maxOpen = 0
  const server = createServer((request) => {
    open += 1
    maxOpen = Math.max(maxOpen, open)
    request.resume()
    request.socket.once("close", () => void (open -= 1))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    open: () => open,
    maxOpen: () => maxOpen,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    })
  }
}

/** On a host without ERP_WEBHOOKS_ALLOW_PRIVATE: private, loopback and http URLs are refused (core and HTTP, create and update), and unknown events. */
const expectUnsafeUrlsRefused = async (host: TestHost) => {
  const tenant = await host.createTenant("BR")
  const admin = asOperator(await host.run(Effect.flatMap(Tenancy, (tenancy) => tenancy.getTenant(tenant.id))), "test")
  const engine = <A>(f: (engine: ResourceEngine["Service"]) => Effect.Effect<A, unknown>) => host.run(Effect.flatMap(ResourceEngine, f) as Effect.Effect<A, never>)
  for (const url of [
    "https://10.0.0.1/hooks", "https://127.0.0.1/x", "https://169.254.169.254/latest", "https://[::1]/x", "https://localhost/x", "http://hooks.example.com/x",
    "https://LOCALHOST./x", "https://[2002:7f00:1::]/x", "https://[64:ff9b::a9fe:a9fe]/x", "https://[::ffff:10.0.0.1]/x", "https://[2001:0:4136:e378:8000:63bf:80ff:fffe]/x"
  ]) {
    const refused = await host.run(Effect.flip(Effect.flatMap(ResourceEngine, (e) => e.create(webhookEndpoints, admin, { url, events: ["*"] }))))
    expect(refused, url).toMatchObject({ _tag: "Unprocessable", code: "WEBHOOK_URL_REFUSED" })
  }
  // Over HTTP: the spec's 422 body naming the field, and nothing written; an update is checked the same way.
  const token = await adminAccessToken(host, tenant.id)
  for (const url of ["https://LOCALHOST./x", "https://[2002:7f00:1::]/x", "https://10.0.0.1/hooks"]) {
    const answer = await host.request("POST", "/webhook-endpoints", { token, body: { url, events: ["*"] } })
    expect(answer.status, url).toBe(422)
    expect(answer.body, url).toEqual({
      status_code: 422, error: "Unprocessable Entity", code: "WEBHOOK_URL_REFUSED", message: expect.stringMatching(/^The webhook URL is refused: it must not point at/),
      details: { fields: { url: [expect.stringMatching(/^must not point at/)] } }
    })
  }
  expect((await host.request("GET", `/webhook-endpoints?url=${encodeURIComponent("https://LOCALHOST./x")}`, { token })).body.data).toEqual([])
  const kept = await host.request("POST", "/webhook-endpoints", { token, body: { url: "https://hooks.example.com/kept", events: ["*"] } })
  const moved = await host.request("PATCH", `/webhook-endpoints/${kept.body.id}`, { token, body: { url: "https://[2002:a9fe:a9fe::]/latest" } })
  expect(moved.status).toBe(422)
  expect(moved.body.code).toBe("WEBHOOK_URL_REFUSED")
  expect((await host.request("GET", `/webhook-endpoints/${kept.body.id}`, { token })).body.url).toBe("https://hooks.example.com/kept")
  expect((await host.request("DELETE", `/webhook-endpoints/${kept.body.id}`, { token })).status).toBe(204)
  for (const events of [["nothing.create"], ["products.archive"], []]) {
    const refused = await host.run(Effect.flip(Effect.flatMap(ResourceEngine, (e) => e.create(webhookEndpoints, admin, { url: "https://hooks.example.com/x", events }))))
    expect(refused._tag, JSON.stringify(events)).toBe("InvalidRequest")
  }
  const accepted = await engine((e) => e.create(webhookEndpoints, admin, { url: "https://hooks.example.com/x", events: ["*"] })) as Record<string, any>
  await engine((e) => e.remove(webhookEndpoints, admin, accepted.id))
}

/** Webhooks end to end: endpoints, signed deliveries verified by the `standardwebhooks` package, retries, 410, rotation, the log. */
describe.each(storeKinds)("webhooks on %s", (kind) => {
  let host: TestHost
  let tenant: TestTenant
  let admin: Principal
  let receiver: Receiver
  const dispatchers: Array<Fiber.Fiber<never, unknown>> = []

  const engine = <A>(f: (engine: ResourceEngine["Service"]) => Effect.Effect<A, unknown>) => host.run(Effect.flatMap(ResourceEngine, f) as Effect.Effect<A, never>)
  const createEndpoint = (body: Record<string, unknown>) => engine((e) => e.create(webhookEndpoints, admin, body)) as Promise<Record<string, any>>
  const startDispatcher = (options: DispatcherOptions = {}) => {
    dispatchers.push(host.runtime.runFork(Layer.launch(layerWebhookDispatcher({ allowPrivate: true, pollMs: 50, retryDelaysMs: [300, 300, 300], ...options }))))
  }
  const write = async (method: string, path: string, body?: unknown) => {
    const response = await host.request(method, path, { token: tenant.token, body })
    expect(response.status, JSON.stringify(response.body)).toBeLessThan(300)
    return response.body
  }
  const deliveries = (endpointId: string) =>
    engine((e) => e.list(webhookDeliveries, admin, [["endpoint_id", endpointId], ["limit", "100"]])).then((page) => page.data as Array<Record<string, any>>)
  const forEndpoint = (secret: string) => receiver.received.filter((entry) => entry.verifiedWith.includes(secret))

  beforeAll(async () => {
    // The receiver listens on loopback.
    host = await startTestHost(testStore(kind), { webhooks: { allowPrivate: true } })
    tenant = await host.createTenant("BR")
    const owner = await host.run(Effect.flatMap(Tenancy, (tenancy) => tenancy.getTenant(tenant.id)))
    admin = asOperator(owner, "test")
    receiver = await startReceiver()
  })
  afterEach(async () => {
    await Promise.all(dispatchers.splice(0).map((fiber) => host.runtime.runPromise(Fiber.interrupt(fiber))))
    receiver.answerWith(() => 200)
  })
  afterAll(async () => {
    await receiver?.close()
    await host?.close()
  })

  it("creates an endpoint with a whsec_ secret shown once and stored sealed, and records no event", async () => {
    const before = await host.request("GET", "/events?limit=100", { token: tenant.token })
    const created = await createEndpoint({ url: receiver.url, events: ["products.*"], description: "shop" })
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    expect(created).toMatchObject({ url: receiver.url, events: ["products.*"], enabled: true, disabled_reason: null })
    const read = await engine((e) => e.get(webhookEndpoints, admin, created.id, []))
    expect(read.secret).toBeNull()
    const stored = await host.run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql<{ secret_sealed: string }>`SELECT secret_sealed FROM webhook_endpoints WHERE id = ${created.id}::uuid`).pipe(Effect.orDie))
    expect(stored[0].secret_sealed).toMatch(/^erpsb1\./)
    expect(stored[0].secret_sealed).not.toContain(created.secret.slice(6))
    const after = await host.request("GET", "/events?limit=100", { token: tenant.token })
    expect(after.body.data.length).toBe(before.body.data.length)
    await engine((e) => e.remove(webhookEndpoints, admin, created.id))
  })

  it("lets an API key with webhook-endpoints permissions subscribe, read deliveries, act and unsubscribe; others get a 403 naming the permission", async () => {
    const key = async (...specs: Array<string>) => (await host.createKey(tenant.id, Result.getOrThrow(parsePermissionSpecs(specs)))).token
    // What an integration platform holds: the webhook-endpoints permission alone.
    const platform = await key("webhook-endpoints:*")
    const as = (token: string) => (method: string, path: string, body?: unknown) => host.request(method, path, { token, ...(body !== undefined ? { body } : {}) })
    const zap = as(platform)
    const subscribed = await zap("POST", "/webhook-endpoints", { url: receiver.url, events: ["financial-categories.create"], description: "Zap 42" })
    expect(subscribed.status, JSON.stringify(subscribed.body)).toBe(201)
    expect(subscribed.body.secret).toMatch(/^whsec_/)
    const endpoint = subscribed.body.id as string
    expect((await zap("GET", "/webhook-endpoints")).body.data.map((row: { id: string }) => row.id)).toContain(endpoint)
    expect((await zap("PATCH", `/webhook-endpoints/${endpoint}`, { description: "Zap 42 (on)" })).status).toBe(200)
    receiver.verifyWith([subscribed.body.secret])
    startDispatcher()
    const since = new Date(Date.now() - 1000).toISOString()
    await write("POST", "/financial-categories", { name: "Subscribed", type: "expense" })
    const path = `/webhook-endpoints/${endpoint}/deliveries`
    await eventually(async () => (await zap("GET", `${path}?status=succeeded`)).body.data?.length === 1, 15_000, "a delivery in the log")
    const [delivery] = (await zap("GET", path)).body.data
    expect((await zap("GET", `${path}/${delivery.id}`)).body.attempts).toEqual([expect.objectContaining({ status_code: 200 })])
    expect((await zap("POST", `${path}/${delivery.id}/retry`)).status).toBe(200)
    expect((await zap("POST", `/webhook-endpoints/${endpoint}/replay`, { since })).status).toBe(200)
    expect((await zap("POST", `/webhook-endpoints/${endpoint}/rotate-secret`)).status).toBe(200)

    // Without the permission, or without the action's: 403 naming what is missing, nothing changed.
    const denied = async (token: string, method: string, route: string, action: string, body?: unknown) => {
      const answer = await as(token)(method, route, body)
      expect(answer.status, `${method} ${route}`).toBe(403)
      expect(answer.body, `${method} ${route}`).toMatchObject({ status_code: 403, code: "PERMISSION_DENIED" })
      expect(answer.body.message, `${method} ${route}`).toMatch(new RegExp(`webhook-endpoints.*${action}|${action}.*webhook-endpoints`))
    }
    const shop = await key("products:*", "customers:*")
    await denied(shop, "GET", "/webhook-endpoints", "read")
    await denied(shop, "POST", "/webhook-endpoints", "create", { url: receiver.url, events: ["*"] })
    await denied(shop, "GET", `/webhook-endpoints/${endpoint}`, "read")
    await denied(shop, "GET", path, "read")
    await denied(shop, "DELETE", `/webhook-endpoints/${endpoint}`, "delete")
    const reader = await key("webhook-endpoints:read")
    expect((await as(reader)("GET", path)).status).toBe(200)
    await denied(reader, "POST", `${path}/${delivery.id}/retry`, "update")
    await denied(reader, "POST", `/webhook-endpoints/${endpoint}/replay`, "update", { since })
    await denied(reader, "POST", `/webhook-endpoints/${endpoint}/rotate-secret`, "update")
    await denied(reader, "DELETE", `/webhook-endpoints/${endpoint}`, "delete")
    // A key made with every permission (erp keys create --all) has this one too.
    expect((await as(tenant.token)("GET", `/webhook-endpoints/${endpoint}`)).status).toBe(200)

    // Members need the permission as keys do; admins have it by their role.
    const member = (...specs: Array<string>) => userAccessToken(host, tenant.id, "member", specs)
    const subscriber = await member("webhook-endpoints:read", "webhook-endpoints:create")
    expect((await as(subscriber)("GET", path)).status).toBe(200)
    const made = await as(subscriber)("POST", "/webhook-endpoints", { url: receiver.url, events: ["products.create"] })
    expect(made.status).toBe(201)
    await denied(subscriber, "DELETE", `/webhook-endpoints/${made.body.id}`, "delete")
    await denied(await member("products:read"), "GET", "/webhook-endpoints", "read")
    const adminToken = await userAccessToken(host, tenant.id, "admin", [])
    expect((await as(adminToken)("GET", path)).status).toBe(200)
    expect((await as(adminToken)("DELETE", `/webhook-endpoints/${made.body.id}`)).status).toBe(204)

    // Another tenant's endpoint stays a 404, whatever the permission.
    const stranger = await host.createTenant("BR")
    const strangerKey = (await host.createKey(stranger.id, Result.getOrThrow(parsePermissionSpecs(["webhook-endpoints:*"])))).token
    for (const [method, route] of [["GET", `/webhook-endpoints/${endpoint}`], ["GET", path], ["GET", `${path}/${delivery.id}`], ["DELETE", `/webhook-endpoints/${endpoint}`]] as const) {
      expect((await as(strangerKey)(method, route)).status, `${method} ${route}`).toBe(404)
    }
    expect((await as(strangerKey)("GET", "/webhook-endpoints")).body.data).toEqual([])

    // Unsubscribing when the automation is turned off.
    expect((await zap("DELETE", `/webhook-endpoints/${endpoint}`)).status).toBe(204)
    expect((await zap("GET", `/webhook-endpoints/${endpoint}`)).status).toBe(404)
  })

  it("lets a member with the webhook-endpoints update permission send a test event from the panel, and refuses one without it", async () => {
    const endpoint = await createEndpoint({ url: receiver.url, events: ["products.create"] })
    receiver.verifyWith([endpoint.secret])
    const panel = async (...permissions: Array<string>) => {
      const user = await createOAuthUser(host, [{ tenantId: tenant.id, role: "member", permissions }])
      const session = new FormSession()
      const form = await session.request("GET", `${host.url}/panel/sign-in`)
      expect((await session.post(`${host.url}/panel/sign-in`, { ...hiddenFieldsOf(form.text), email: user.email, password: user.password })).status).toBe(303)
      const page = await session.get(`${host.url}/panel/r/webhook-endpoints/${endpoint.id}`)
      return { session, page, csrf: hiddenFieldsOf(page.text).csrf }
    }
    const reader = await panel("webhook-endpoints:read")
    expect(reader.page.status).toBe(200)
    expect(reader.page.text).not.toContain(`/r/webhook-endpoints/${endpoint.id}/test`)
    const refused = await reader.session.post(`${host.url}/panel/r/webhook-endpoints/${endpoint.id}/test`, { csrf: reader.csrf })
    expect(refused.status).toBe(403)
    expect(refused.text).toMatch(/webhook-endpoints/)
    const operator = await panel("webhook-endpoints:read", "webhook-endpoints:update")
    expect(operator.page.text).toContain(`/r/webhook-endpoints/${endpoint.id}/test`)
    const sent = await operator.session.post(`${host.url}/panel/r/webhook-endpoints/${endpoint.id}/test`, { csrf: operator.csrf })
    expect(sent.status).toBe(200)
    expect(sent.text).toMatch(/id="test-result"[^>]*>[^<]*&quot;statusCode&quot;: 200/)
    expect(receiver.received.at(-1)?.payload.type).toBe("webhook.test")
    await engine((e) => e.remove(webhookEndpoints, admin, endpoint.id))
  })

  it("names webhook-endpoints as a permission and OAuth scope that covers the deliveries, with no code of their own", async () => {
    expect(resourceCodes()).toContain("webhook-endpoints")
    expect(resourceCodes()).not.toContain("webhook-deliveries")
    expect(Result.isFailure(parsePermissionSpecs(["webhook-deliveries:read"]))).toBe(true)
    expect(allScopes()).toEqual(expect.arrayContaining(["webhook-endpoints:read", "webhook-endpoints:create", "webhook-endpoints:update", "webhook-endpoints:delete"]))
    expect(allScopes().filter((scope) => scope.startsWith("webhook-deliveries"))).toEqual([])
    // A token whose scopes hold webhook-endpoints:read alone reads deliveries, and may not retry one.
    const endpoint = await createEndpoint({ url: receiver.url, events: ["products.create"] })
    const token = await userAccessToken(host, tenant.id, "admin", [], ["webhook-endpoints:read"])
    expect((await host.request("GET", `/webhook-endpoints/${endpoint.id}/deliveries`, { token })).status).toBe(200)
    const refused = await host.request("PATCH", `/webhook-endpoints/${endpoint.id}`, { token, body: { description: "no" } })
    expect(refused.status).toBe(403)
    expect(refused.body.message).toMatch(/webhook-endpoints:update/)
    await engine((e) => e.remove(webhookEndpoints, admin, endpoint.id))
  })

  it("refuses private, loopback and http URLs without ERP_WEBHOOKS_ALLOW_PRIVATE, and unknown events", async () => {
    // A host of its own: the one above allows private addresses, and the setting is read as a host starts.
    const strict = await startTestHost(testStore(kind), { webhooks: { allowPrivate: false } })
    try {
      await expectUnsafeUrlsRefused(strict)
    } finally {
      await strict.close()
    }
  })


  it("delivers exactly the subscribed events, signed, to each endpoint, and none to others", async () => {
    const products = await createEndpoint({ url: receiver.url, events: ["products.*"] })
    const customers = await createEndpoint({ url: receiver.url, events: ["customers.create"] })
    const disabled = await createEndpoint({ url: receiver.url, events: ["*"], enabled: false })
    receiver.verifyWith([products.secret, customers.secret, disabled.secret])
    startDispatcher()
    const product = await write("POST", "/products", { name: "Espresso" })
    await write("PATCH", `/products/${product.id}`, { metadata: { step: 2 } })
    await write("DELETE", `/products/${product.id}`)
    const customer = await write("POST", "/customers", { legal_name: "Padaria" })
    await write("PATCH", `/customers/${customer.id}`, { metadata: { step: 2 } })
    await write("POST", "/integration-entity-mappings", {
      tenant_integration_id: "6f1c2a8e-3b4d-4c5e-8f90-1a2b3c4d5e6f", entity_type: "customer", internal_entity_id: customer.id, external_entity_id: "x:1"
    })
    await eventually(() => forEndpoint(products.secret).length >= 3 && forEndpoint(customers.secret).length >= 1, 15_000, "deliveries")
    await new Promise((resolve) => setTimeout(resolve, 300))
    // Up to 4 attempts per endpoint run side by side: deliveries may arrive out of order (receivers order by the payload's timestamp).
    expect(forEndpoint(products.secret).map((entry) => `${entry.payload.type} ${entry.payload.data.id}`).sort()).toEqual(
      ["create", "delete", "update"].map((action) => `products.${action} ${product.id}`)
    )
    expect(forEndpoint(customers.secret).map((entry) => entry.payload.type)).toEqual(["customers.create"])
    expect(forEndpoint(disabled.secret)).toEqual([])
    expect(receiver.failures.filter((failure) => !failure.includes("signature"))).toEqual([])
    // Arrival order is not delivery order (see above): the create's delivery by its type.
    const first = forEndpoint(products.secret).find((entry) => entry.payload.type === "products.create")!
    expect(first.payload).toEqual({
      id: expect.any(String), type: "products.create", timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      data: { id: product.id, resource: "products", action: "create", tenant_id: tenant.id }
    })
    expect(first.headers["content-type"]).toBe("application/json")
    expect(first.headers["user-agent"]).toMatch(/^erp-webhooks\//)
    expect(first.headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]+=*$/)
    const log = await deliveries(products.id)
    expect(log.map((delivery) => delivery.status)).toEqual(["succeeded", "succeeded", "succeeded"])
    const one = await engine((e) => e.get(webhookDeliveries, admin, first.id, [])) as Record<string, any>
    expect(one.attempts).toEqual([expect.objectContaining({ attempt_number: 1, status_code: 200, response_body: "answered 200", error: null })])
    for (const endpoint of [products, customers, disabled]) await engine((e) => e.remove(webhookEndpoints, admin, endpoint.id))
  })

  it("retries after a 500 and succeeds; 410 disables the endpoint", async () => {
    const flaky = await createEndpoint({ url: receiver.url, events: ["suppliers.create"] })
    receiver.verifyWith([flaky.secret])
    receiver.answerWith(({ count }) => (count === 1 ? 500 : 200))
    startDispatcher()
    const supplier = await write("POST", "/suppliers", { legal_name: "Torrefação" })
    await eventually(async () => (await deliveries(flaky.id))[0]?.status === "succeeded", 15_000, "the retry")
    const [delivery] = await deliveries(flaky.id)
    expect(delivery).toMatchObject({ event_type: "suppliers.create", resource_id: supplier.id, attempt_count: 2, last_status_code: 200 })
    expect(delivery.attempts.map((attempt: any) => attempt.status_code)).toEqual([500, 200])

    receiver.answerWith(() => 410)
    await write("POST", "/suppliers", { legal_name: "Gone Ltda" })
    await eventually(async () => (await engine((e) => e.get(webhookEndpoints, admin, flaky.id, [])) as any).enabled === false, 15_000, "disable")
    const endpoint = await engine((e) => e.get(webhookEndpoints, admin, flaky.id, [])) as Record<string, any>
    expect(endpoint.disabled_reason).toBe("gone")
    const gone = (await deliveries(flaky.id)).find((entry) => entry.last_status_code === 410)
    expect(gone).toMatchObject({ status: "failed", attempt_count: 1 })
    await engine((e) => e.remove(webhookEndpoints, admin, flaky.id))
  })

  it("disables an endpoint failing for 5 days without a success, says so in the change feed, and retries up to the last delay", async () => {
    const failing = await createEndpoint({ url: receiver.url, events: ["financial-accounts.create"] })
    receiver.verifyWith([failing.secret])
    receiver.answerWith(() => 503)
    await host.run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql`UPDATE webhook_endpoints SET failing_since = now() - interval '5 days 1 minute' WHERE id = ${failing.id}::uuid`).pipe(Effect.orDie))
    startDispatcher()
    await write("POST", "/financial-accounts", { name: "Caixa", type: "cash" })
    await eventually(async () => (await engine((e) => e.get(webhookEndpoints, admin, failing.id, [])) as any).enabled === false, 15_000, "disable")
    const endpoint = await engine((e) => e.get(webhookEndpoints, admin, failing.id, [])) as Record<string, any>
    expect(endpoint.disabled_reason).toBe("failing")
    const feed = await host.request("GET", `/events?type=webhook_endpoint.disabled&resource_id=${failing.id}`, { token: tenant.token })
    expect(feed.body.data).toEqual([expect.objectContaining({ type: "webhook_endpoint.disabled", resource: "webhook-endpoints", action: "disabled" })])
    // No webhook for it, even to an endpoint taking every event.
    expect(receiver.received.some((entry) => entry.payload.type === "webhook_endpoint.disabled")).toBe(false)

    // Re-enabled, it keeps failing: three attempts (two shortened delays), then failed.
    await engine((e) => e.update(webhookEndpoints, admin, failing.id, { enabled: true }))
    const reenabled = await engine((e) => e.get(webhookEndpoints, admin, failing.id, [])) as Record<string, any>
    expect(reenabled).toMatchObject({ enabled: true, disabled_reason: null, failing_since: null })
    await write("POST", "/financial-accounts", { name: "Banco", type: "checking" })
    await eventually(async () => (await deliveries(failing.id)).some((entry) => entry.status === "failed" && entry.attempt_count === 4), 15_000, "four attempts")
    const [last] = (await deliveries(failing.id)).filter((entry) => entry.attempt_count === 4)
    expect(last.attempts.map((attempt: any) => attempt.status_code)).toEqual([503, 503, 503, 503])
    expect(last.next_attempt_at).toBeNull()
    await engine((e) => e.remove(webhookEndpoints, admin, failing.id))
  })

  it("signs with the old and the new secret after a rotation; retry and replay send again", async () => {
    const endpoint = await createEndpoint({ url: receiver.url, events: ["financial-categories.create"] })
    const rotated = await engine((e) => e.action(webhookEndpoints, webhookEndpoints.actions![0], admin, endpoint.id, {}, undefined)) as { secret: string; previous_secret_expires_at: string }
    expect(rotated.secret).toMatch(/^whsec_/)
    expect(rotated.secret).not.toBe(endpoint.secret)
    expect(Date.parse(rotated.previous_secret_expires_at) - Date.now()).toBeGreaterThan(23 * 3600_000)
    receiver.verifyWith([endpoint.secret, rotated.secret])
    startDispatcher()
    const since = new Date(Date.now() - 1000).toISOString()
    await write("POST", "/financial-categories", { name: "Rent", type: "expense" })
    await eventually(() => receiver.received.some((entry) => entry.verifiedWith.includes(rotated.secret)), 15_000, "a delivery")
    const sent = receiver.received.filter((entry) => entry.verifiedWith.includes(rotated.secret))
    expect(sent[0].verifiedWith).toEqual([endpoint.secret, rotated.secret])

    // Recorded once the receiver has answered: until then a retry is 409 DELIVERY_IN_FLIGHT.
    await eventually(async () => (await deliveries(endpoint.id))[0]?.status === "succeeded", 15_000, "the attempt recorded")
    const [delivery] = await deliveries(endpoint.id)
    const retried = await engine((e) => e.action(webhookDeliveries, webhookDeliveries.actions![0], admin, delivery.id, {}, undefined)) as Record<string, any>
    expect(retried.status).toBe("pending")
    await eventually(() => receiver.received.filter((entry) => entry.id === delivery.id).length === 2, 15_000, "the retry")

    const replay = webhookEndpoints.actions!.find((action) => action.name === "replay")!
    const replayed = await engine((e) => e.action(webhookEndpoints, replay, admin, endpoint.id, {}, { since })) as Record<string, any>
    expect(replayed).toEqual({ replayed: 1, truncated: false })
    await eventually(async () => (await deliveries(endpoint.id)).length === 2 && (await deliveries(endpoint.id)).every((entry) => entry.status === "succeeded"), 15_000, "the replay")
    await engine((e) => e.remove(webhookEndpoints, admin, endpoint.id))
  })

  it("serves endpoints, their deliveries, retry, rotate-secret and replay over HTTP to an admin user", async () => {
    const token = await adminAccessToken(host, tenant.id)
    const as = (method: string, path: string, body?: unknown) => host.request(method, path, { token, ...(body !== undefined ? { body } : {}) })
    const created = await as("POST", "/webhook-endpoints", { url: receiver.url, events: ["financial-categories.create"] })
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    expect(created.body.secret).toMatch(/^whsec_/)
    expect((await as("GET", `/webhook-endpoints/${created.body.id}`)).body.secret).toBeNull()
    // Allowed on this host (ERP_WEBHOOKS_ALLOW_PRIVATE's option); the test above has a host refuse it.
    expect((await as("POST", "/webhook-endpoints", { url: "https://10.0.0.1/hooks", events: ["*"] })).status).toBe(201)

    receiver.verifyWith([created.body.secret])
    startDispatcher()
    await new Promise((resolve) => setTimeout(resolve, 20))
    const since = new Date().toISOString()
    await write("POST", "/financial-categories", { name: "Travel", type: "expense" })
    const path = `/webhook-endpoints/${created.body.id}/deliveries`
    await eventually(async () => (await as("GET", `${path}?status=succeeded`)).body.data.length === 1, 15_000, "a delivery")
    const list = await as("GET", `${path}?status=succeeded&event_type=financial-categories.create`)
    expect(list.status, JSON.stringify(list.body)).toBe(200)
    const [delivery] = list.body.data
    expect(delivery).toMatchObject({ endpoint_id: created.body.id, status: "succeeded", attempt_count: 1 })
    expect((await as("GET", `${path}?status=failed`)).body.data).toEqual([])
    const one = await as("GET", `${path}/${delivery.id}`)
    expect(one.body.attempts).toEqual([expect.objectContaining({ status_code: 200 })])
    const retried = await as("POST", `${path}/${delivery.id}/retry`)
    expect(retried.status).toBe(200)
    expect(retried.body.status).toBe("pending")
    const replayed = await as("POST", `/webhook-endpoints/${created.body.id}/replay`, { since })
    expect(replayed.body).toEqual({ replayed: 1, truncated: false })
    const rotated = await as("POST", `/webhook-endpoints/${created.body.id}/rotate-secret`)
    expect(rotated.status).toBe(200)
    expect(rotated.body.secret).toMatch(/^whsec_/)

    // Another endpoint's path does not reach this delivery; an unknown endpoint is its 404.
    const other = await as("POST", "/webhook-endpoints", { url: receiver.url, events: ["products.create"] })
    const elsewhere = await as("GET", `/webhook-endpoints/${other.body.id}/deliveries/${delivery.id}`)
    expect(elsewhere.status).toBe(404)
    expect(elsewhere.body.code).toBe("WEBHOOK_DELIVERY_NOT_FOUND")
    const missing = await as("GET", "/webhook-endpoints/00000000-0000-4000-8000-000000000000/deliveries")
    expect(missing.status).toBe(404)
    expect(missing.body.code).toBe("WEBHOOK_ENDPOINT_NOT_FOUND")
    // Another tenant's admin sees none of it.
    const stranger = await host.createTenant("BR")
    const strangerToken = await adminAccessToken(host, stranger.id)
    expect((await host.request("GET", `/webhook-endpoints/${created.body.id}`, { token: strangerToken })).status).toBe(404)
    expect((await host.request("GET", `${path}/${delivery.id}`, { token: strangerToken })).status).toBe(404)
    for (const id of [created.body.id, other.body.id]) expect((await as("DELETE", `/webhook-endpoints/${id}`)).status).toBe(204)
  })

  it("on shutdown cuts an attempt that outlasts the grace period and releases it, so the next worker sends it", async () => {
    const endpoint = await createEndpoint({ url: receiver.url, events: ["financial-categories.create"] })
    receiver.verifyWith([endpoint.secret])
    let hang = true
    receiver.answerWith(() => new Promise((resolve) => setTimeout(() => resolve(200), hang ? 5_000 : 0)))
    startDispatcher({ graceMs: 100, workerId: "stopping" })
    await write("POST", "/financial-categories", { name: "Slow", type: "expense" })
    await eventually(() => receiver.received.some((entry) => entry.verifiedWith.includes(endpoint.secret)), 15_000, "an attempt in flight")
    const [inFlight] = await deliveries(endpoint.id)
    const refused = await host.run(Effect.flip(Effect.flatMap(ResourceEngine, (e) => e.action(webhookDeliveries, webhookDeliveries.actions![0], admin, inFlight.id, {}, undefined))))
    expect(refused).toMatchObject({ _tag: "Conflict", code: "DELIVERY_IN_FLIGHT" })
    await host.runtime.runPromise(Fiber.interrupt(dispatchers.pop()!))
    const [released] = await host.run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql<{ status: string; lease_until: unknown; leased_by: unknown }>`SELECT status, lease_until, leased_by FROM webhook_deliveries WHERE endpoint_id = ${endpoint.id}::uuid`).pipe(Effect.orDie))
    expect(released).toEqual({ status: "pending", lease_until: null, leased_by: null })
    hang = false
    startDispatcher()
    await eventually(async () => (await deliveries(endpoint.id))[0]?.status === "succeeded", 15_000, "the delivery")
    await engine((e) => e.remove(webhookEndpoints, admin, endpoint.id))
  })

  it("prunes finished deliveries with their attempts after 30 days, never pending or retrying ones", async () => {
    const endpoint = await createEndpoint({ url: receiver.url, events: ["financial-categories.create"] })
    receiver.verifyWith([endpoint.secret])
    startDispatcher()
    await write("POST", "/financial-categories", { name: "Old", type: "expense" })
    await eventually(async () => (await deliveries(endpoint.id))[0]?.status === "succeeded", 15_000, "a delivery")
    const [done] = await deliveries(endpoint.id)
    await host.runtime.runPromise(Fiber.interrupt(dispatchers.pop()!))
    await write("POST", "/financial-categories", { name: "Still pending", type: "expense" })
    const sql = (statement: (sql: SqlClient.SqlClient) => Effect.Effect<unknown, unknown>) =>
      host.run(Effect.flatMap(SqlClient.SqlClient, statement).pipe(Effect.orDie))
    await sql((sql) => sql`UPDATE webhook_deliveries SET updated_at = now() - interval '31 days', next_attempt_at = now() + interval '1 day'
      WHERE endpoint_id = ${endpoint.id}::uuid`)
    await host.run(pruneEvents)
    const left = await deliveries(endpoint.id)
    expect(left.map((delivery) => delivery.status)).toEqual(["pending"])
    const attempts = await sql((sql) => sql<{ count: number }>`SELECT count(*)::int AS count FROM webhook_delivery_attempts WHERE delivery_id = ${done.id}::uuid`) as Array<{ count: number }>
    expect(attempts[0].count).toBe(0)
    await engine((e) => e.remove(webhookEndpoints, admin, endpoint.id))
  })

  it("sends another tenant's delivery within 2 s while one endpoint has 10,000 due deliveries to a receiver that never answers", async () => {
    const silent = await startSilentReceiver()
    const backlog = await createEndpoint({ url: silent.url, events: ["financial-categories.create"] })
    const sql = <A>(statement: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) => host.run(Effect.flatMap(SqlClient.SqlClient, statement).pipe(Effect.orDie))
    // One statement: the backlog of an OFX import, every delivery due, the oldest first.
    await sql((sql) => sql`INSERT INTO webhook_deliveries (tenant_id, endpoint_id, event_id, event_type, resource, resource_id, action, event_created_at, next_attempt_at)
      SELECT ${tenant.id}::uuid, ${backlog.id}::uuid, gen_random_uuid(), 'financial-categories.create', 'financial-categories', gen_random_uuid()::text, 'create',
        now(), now() - interval '1 hour' + n * interval '1 ms'
      FROM generate_series(1, 10000) AS n`)
    const other = await host.createTenant("BR")
    const otherAdmin = asOperator(await host.run(Effect.flatMap(Tenancy, (tenancy) => tenancy.getTenant(other.id))), "test")
    const healthy = await engine((e) => e.create(webhookEndpoints, otherAdmin, { url: receiver.url, events: ["products.create"] })) as Record<string, any>
    receiver.verifyWith([healthy.secret])
    startDispatcher({ timeoutMs: 1000, graceMs: 100 })
    await eventually(() => silent.open() === 4, 15_000, "the backlog's attempts")
    const product = await host.request("POST", "/products", { token: other.token, body: { name: "Not held up" } })
    expect(product.status).toBe(201)
    await eventually(() => forEndpoint(healthy.secret).some((entry) => entry.payload.data.id === product.body.id), 2_000, "the other tenant's delivery within 2 s")
    expect(silent.maxOpen()).toBeLessThanOrEqual(4)
    await host.runtime.runPromise(Fiber.interrupt(dispatchers.pop()!))
    await sql((sql) => sql`DELETE FROM webhook_deliveries WHERE tenant_id = ${tenant.id}::uuid AND endpoint_id = ${backlog.id}::uuid`)
    await silent.close()
    await engine((e) => e.remove(webhookEndpoints, admin, backlog.id))
    await engine((e) => e.remove(webhookEndpoints, otherAdmin, healthy.id))
  }, 60_000)

  it("deals claims in turns across tenants: one tenant's backlogged endpoints do not take every slot", async () => {
    const silent = await startSilentReceiver()
    const sql = <A>(statement: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) => host.run(Effect.flatMap(SqlClient.SqlClient, statement).pipe(Effect.orDie))
    const backlogged = [
      await createEndpoint({ url: silent.url, events: ["financial-categories.create"] }),
      await createEndpoint({ url: silent.url, events: ["financial-categories.create"] })
    ]
    for (const endpoint of backlogged) {
      await sql((sql) => sql`INSERT INTO webhook_deliveries (tenant_id, endpoint_id, event_id, event_type, resource, resource_id, action, event_created_at, next_attempt_at)
        SELECT ${tenant.id}::uuid, ${endpoint.id}::uuid, gen_random_uuid(), 'financial-categories.create', 'financial-categories', gen_random_uuid()::text, 'create',
          now(), now() - interval '1 hour' + n * interval '1 ms'
        FROM generate_series(1, 100) AS n`)
    }
    const other = await host.createTenant("BR")
    const otherAdmin = asOperator(await host.run(Effect.flatMap(Tenancy, (tenancy) => tenancy.getTenant(other.id))), "test")
    const healthy = await engine((e) => e.create(webhookEndpoints, otherAdmin, { url: receiver.url, events: ["products.create"] })) as Record<string, any>
    receiver.verifyWith([healthy.secret])
    const product = await host.request("POST", "/products", { token: other.token, body: { name: "Its turn" } })
    // Two slots, three endpoints with due work, attempts of the backlog held for 15 s: by age alone both
    // slots would go to this tenant's endpoints; in turns, the other tenant's endpoint takes one.
    startDispatcher({ concurrency: 2, timeoutMs: 15_000, graceMs: 100 })
    await eventually(() => forEndpoint(healthy.secret).some((entry) => entry.payload.data.id === product.body.id), 2_000, "the other tenant's delivery within 2 s")
    expect(silent.maxOpen()).toBeLessThanOrEqual(2)
    await host.runtime.runPromise(Fiber.interrupt(dispatchers.pop()!))
    for (const endpoint of backlogged) {
      await sql((sql) => sql`DELETE FROM webhook_deliveries WHERE tenant_id = ${tenant.id}::uuid AND endpoint_id = ${endpoint.id}::uuid`)
      await engine((e) => e.remove(webhookEndpoints, admin, endpoint.id))
    }
    await silent.close()
    await engine((e) => e.remove(webhookEndpoints, otherAdmin, healthy.id))
  }, 60_000)

  it.runIf(kind === "postgres")("two workers and a host on one PostgreSQL never send the same delivery twice at once, at most 4 per endpoint", async () => {
    // A receiver of its own: an earlier test's cut attempt may still be answering on the shared one.
    const own = await startReceiver()
    const endpoint = await createEndpoint({ url: own.url, events: ["financial-categories.*"] })
    own.verifyWith([endpoint.secret])
    own.answerWith(() => new Promise((resolve) => setTimeout(() => resolve(200), 150)))
    for (let index = 0; index < 40; index += 1) await write("POST", "/financial-categories", { name: `Cat ${index}`, type: "expense" })
    for (const workerId of ["host", "worker-1", "worker-2"]) startDispatcher({ workerId })
    await eventually(async () => (await deliveries(endpoint.id)).filter((entry) => entry.status === "succeeded").length === 40, 30_000, "40 deliveries")
    const sent = own.received
    expect(new Set(sent.map((entry) => entry.id)).size).toBe(40)
    expect(sent.length).toBe(40)
    expect(own.overlaps).toEqual([])
    expect(own.maxInFlight()).toBeLessThanOrEqual(4)
    expect(own.failures).toEqual([])
    await own.close()
    await engine((e) => e.remove(webhookEndpoints, admin, endpoint.id))
  })
})
