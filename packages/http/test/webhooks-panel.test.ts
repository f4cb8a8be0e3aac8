import { ALL_PERMISSIONS, asOperator, layerWebhookDispatcher, makeAdmin, ResourceEngine, Tenancy, webhookEndpoints } from "@erp/core"
import { Effect, Fiber, Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestHost, type TestHost, type TestTenant } from "../../../test/support/host.js"
import { storeKinds, testStore } from "../../../test/support/stores.js"
import { eventually, startReceiver } from "../../../test/support/webhook-receiver.js"

const PANEL = ["subscription-plans", "customer-subscriptions", "support-tickets", "email-dispatches", "tenant-email-identities"]

/** The panel-only resources: written through core by the embedding app, no REST route, and their events delivered like all others. */
describe.each(storeKinds)("panel-only resources and their webhooks on %s", (kind) => {
  let host: TestHost
  let tenant: TestTenant
  let receiver: Awaited<ReturnType<typeof startReceiver>>
  let dispatcher: Fiber.Fiber<never, unknown>

  beforeAll(async () => {
    // The receiver listens on loopback.
    host = await startTestHost(testStore(kind), { webhooks: { allowPrivate: true } })
    tenant = await host.createTenant("BR")
    receiver = await startReceiver()
    dispatcher = host.runtime.runFork(Layer.launch(layerWebhookDispatcher({ allowPrivate: true, pollMs: 50 })))
  })
  afterAll(async () => {
    if (dispatcher) await host.runtime.runPromise(Fiber.interrupt(dispatcher))
    await receiver?.close()
    await host?.close()
  })

  it("has no REST route for them", async () => {
    for (const name of PANEL) {
      const response = await host.request("GET", `/${name}`, { token: tenant.token })
      expect(response.status, name).toBe(404)
    }
  })

  it("delivers every create, update, delete and restore of each to an endpoint taking *, and nothing for keys, mappings, reads or webhook configuration", async () => {
    const admin = makeAdmin(host.runtime as never)
    const scope = { tenantId: tenant.id }
    const all = await admin.resources.create("webhook-endpoints", { url: receiver.url, events: ["*"] }, scope) as { id: string; secret: string }
    const plansOnly = await admin.resources.create("webhook-endpoints", { url: receiver.url, events: ["subscription-plans.create"] }, scope) as { id: string; secret: string }
    receiver.verifyWith([all.secret, plansOnly.secret])
    const expected: Array<string> = []

    const customer = await admin.resources.create("customers", { legal_name: "Assinante Ltda" }, scope) as { id: string }
    expected.push(`customers.create ${customer.id}`)
    const identity = await admin.resources.create("tenant-email-identities", { email: "Billing@Acme.example", display_name: "Acme" }, scope) as Record<string, any>
    expect(identity).toMatchObject({ domain: "acme.example", status: "pending_verification", is_default: false })
    const plan = await admin.resources.create("subscription-plans", { name: "Pro", amount: "99.9", currency: "BRL", billing_interval: "month" }, scope) as Record<string, any>
    expect(plan).toMatchObject({ amount: "99.900000", interval_count: 1, trial_days: 0, is_active: true })
    const subscription = await admin.resources.create("customer-subscriptions", { customer_id: customer.id, plan_id: plan.id, status: "trialing" }, scope) as Record<string, any>
    const ticket = await admin.resources.create("support-tickets", {
      subject: "Where is my invoice?",
      customer_id: customer.id,
      messages: [{ author_kind: "customer", body: "I did not get it." }]
    }, scope) as Record<string, any>
    expect(ticket).toMatchObject({ ticket_number: 1, status: "open", priority: "normal", messages: [expect.objectContaining({ body: "I did not get it.", is_internal: false })] })
    const dispatch = await admin.resources.create("email-dispatches", { to_email: "ana@example.com", subject: "Invoice", identity_id: identity.id }, scope) as Record<string, any>
    expect(dispatch.status).toBe("queued")
    const created: Array<[string, string]> = [
      ["tenant-email-identities", identity.id], ["subscription-plans", plan.id], ["customer-subscriptions", subscription.id],
      ["support-tickets", ticket.id], ["email-dispatches", dispatch.id]
    ]
    expected.push(...created.map(([name, id]) => `${name}.create ${id}`))

    // A new message is the ticket's update; so is an attachment.
    await admin.resources.update("support-tickets", ticket.id, {
      messages: [{ id: ticket.messages[0].id }, { author_kind: "agent", author_name: "Bia", body: "Sent again today." }]
    }, scope)
    expected.push(`support-tickets.update ${ticket.id}`)
    await admin.resources.update("support-tickets", ticket.id, {
      attachments: [{ file_name: "invoice.pdf", content_type: "application/pdf", size_bytes: 1024, url: "https://files.example/invoice.pdf" }]
    }, scope)
    expected.push(`support-tickets.update ${ticket.id}`)
    const cancelled = await admin.resources.update("customer-subscriptions", subscription.id, { status: "cancelled" }, scope) as Record<string, any>
    expect(cancelled.cancelled_at).toEqual(expect.any(String))
    expected.push(`customer-subscriptions.update ${subscription.id}`)
    await admin.resources.update("email-dispatches", dispatch.id, { status: "sent", sent_at: "2026-03-01T10:00:00Z" }, scope)
    expected.push(`email-dispatches.update ${dispatch.id}`)
    for (const [name, id] of [["email-dispatches", dispatch.id], ["support-tickets", ticket.id]] as const) {
      await admin.resources.delete(name, id, scope)
      await admin.resources.restore(name, id, scope)
      expected.push(`${name}.delete ${id}`, `${name}.restore ${id}`)
    }

    // None of these records an event: an API key, a mapping, reads, webhook configuration.
    await host.run(Effect.flatMap(Tenancy, (tenancy) => tenancy.createApiKey({ tenantId: tenant.id, name: "quiet", permissions: ALL_PERMISSIONS })))
    await admin.resources.create("integration-entity-mappings", {
      tenant_integration_id: "6f1c2a8e-3b4d-4c5e-8f90-1a2b3c4d5e6f", entity_type: "customer", internal_entity_id: customer.id, external_entity_id: "crm:9"
    }, scope)
    await admin.resources.list("support-tickets", scope)
    await admin.resources.get("subscription-plans", plan.id, scope)
    await admin.resources.update("webhook-endpoints", plansOnly.id, { description: "plans" }, scope)
    await admin.resources.action("webhook-endpoints", plansOnly.id, "rotate-secret", undefined, scope)
    const owner = await host.run(Effect.flatMap(Tenancy, (tenancy) => tenancy.getTenant(tenant.id)))
    const quiet = await host.run(Effect.flatMap(ResourceEngine, (engine) => engine.create(webhookEndpoints, asOperator(owner, "test"), { url: receiver.url, events: ["products.create"], enabled: false })))
    await admin.resources.delete("webhook-endpoints", String((quiet as { id: string }).id), scope)

    const toAll = () => receiver.received.filter((entry) => entry.verifiedWith.includes(all.secret))
    await eventually(() => toAll().length >= expected.length, 20_000, `${expected.length} deliveries`)
    await new Promise((resolve) => setTimeout(resolve, 500))
    const sent = toAll().map((entry) => `${entry.payload.type} ${entry.payload.data.id}`)
    // One worker may run attempts side by side: compare as sets of events, each exactly once.
    expect([...sent].sort()).toEqual([...expected].sort())
    expect(receiver.received.filter((entry) => entry.verifiedWith.includes(plansOnly.secret)).map((entry) => entry.payload.type)).toEqual(["subscription-plans.create"])
  })
})
