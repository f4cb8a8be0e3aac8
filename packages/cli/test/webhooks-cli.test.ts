import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { erp, json, serve, stop } from "../../../test/support/cli.js"
import { testDataDir } from "../../../test/support/stores.js"
import { eventually, startReceiver } from "../../../test/support/webhook-receiver.js"

describe("erp webhooks, and the dispatcher of erp serve", () => {
  // The receiver is on loopback; a short lease lets the restarted host take over what the killed one held.
  beforeAll(() => {
    process.env.ERP_WEBHOOKS_ALLOW_PRIVATE = "true"
    process.env.ERP_WEBHOOKS_LEASE_SECONDS = "2"
  })
  afterAll(() => {
    delete process.env.ERP_WEBHOOKS_ALLOW_PRIVATE
    delete process.env.ERP_WEBHOOKS_LEASE_SECONDS
  })

  const flags = ["--data-dir", testDataDir()]
  let receiver: Awaited<ReturnType<typeof startReceiver>>
  let tenantId: string
  let token: string

  beforeAll(async () => {
    receiver = await startReceiver()
    tenantId = json(await erp([...flags, "tenants", "create", "--name", "Hooks Ltda", "--country", "BR", "--json"])).id
    token = json(await erp([...flags, "keys", "create", "--tenant", tenantId, "--name", "writer", "--all", "--json"])).token
  })
  afterAll(() => receiver?.close())

  it("creates, lists, tests, rotates and disables endpoints", async () => {
    const refused = await erp([...flags, "webhooks", "create", "--tenant", tenantId, "--url", "https://10.0.0.1/hooks"], { env: { ERP_WEBHOOKS_ALLOW_PRIVATE: "" } })
    expect(refused.code).toBe(1)
    expect(refused.stderr).toMatch(/private/)

    const created = await erp([...flags, "webhooks", "create", "--tenant", tenantId, "--url", receiver.url, "--events", "customers.*"])
    expect(created.code, created.stderr).toBe(0)
    const secret = /Signing secret \(shown once\): (whsec_\S+)/.exec(created.stdout)![1]
    const id = /Created webhook endpoint (\S+)/.exec(created.stdout)![1]
    const listed = json(await erp([...flags, "webhooks", "list", "--tenant", tenantId, "--json"]))
    expect(listed.data).toEqual([expect.objectContaining({ id, url: receiver.url, events: ["customers.*"], enabled: true, secret: null })])

    receiver.verifyWith([secret])
    const tested = await erp([...flags, "webhooks", "test", id, "--tenant", tenantId])
    expect(tested.code, tested.stderr).toBe(0)
    expect(tested.stdout).toMatch(/^Answered 200 in \d+ ms/)
    const ping = receiver.received.at(-1)!
    expect(ping.payload.type).toBe("webhook.test")
    expect(ping.verifiedWith).toEqual([secret])

    const rotated = json(await erp([...flags, "webhooks", "rotate", id, "--tenant", tenantId, "--json"]))
    expect(rotated.secret).toMatch(/^whsec_/)
    receiver.verifyWith([secret, rotated.secret])
    expect((await erp([...flags, "webhooks", "test", id, "--tenant", tenantId])).code).toBe(0)
    expect(receiver.received.at(-1)!.verifiedWith).toEqual([secret, rotated.secret])

    const disabled = json(await erp([...flags, "webhooks", "disable", id, "--tenant", tenantId, "--json"]))
    expect(disabled).toMatchObject({ id, enabled: false })
  })

  it("makes keys holding webhook-endpoints permissions (or --all) that subscribe and unsubscribe over HTTP; deliveries have no permission of their own", async () => {
    const platform = json(await erp([...flags, "keys", "create", "--tenant", tenantId, "--name", "automations",
      "--permission", "webhook-endpoints:create", "--permission", "webhook-endpoints:delete", "--json"])).token
    const unknown = await erp([...flags, "keys", "create", "--tenant", tenantId, "--name", "log", "--permission", "webhook-deliveries:read"])
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toMatch(/Unknown resource "webhook-deliveries"/)
    const host = await serve(flags)
    try {
      const call = async (key: string, method: string, path: string, body?: unknown) => {
        const response = await fetch(`${host.url}${path}`, {
          method,
          headers: { authorization: `Bearer ${key}`, ...(body ? { "content-type": "application/json" } : {}) },
          ...(body ? { body: JSON.stringify(body) } : {})
        })
        return { status: response.status, body: response.status === 204 ? undefined : ((await response.json()) as Record<string, any>) }
      }
      const subscribed = await call(platform, "POST", "/webhook-endpoints", { url: "https://hooks.example.com/catch/42", events: ["sales-orders.*"] })
      expect(subscribed.status, JSON.stringify(subscribed.body)).toBe(201)
      const read = await call(platform, "GET", `/webhook-endpoints/${subscribed.body!.id}`)
      expect(read.status).toBe(403)
      expect(read.body!.message).toMatch(/webhook-endpoints/)
      expect((await call(token, "GET", `/webhook-endpoints/${subscribed.body!.id}`)).status).toBe(200)
      expect((await call(platform, "DELETE", `/webhook-endpoints/${subscribed.body!.id}`)).status).toBe(204)
    } finally {
      await stop(host.child)
    }
  })

  it("delivers every committed event at least once although the host is killed with SIGKILL mid-delivery", async () => {
    const created = json(await erp([...flags, "webhooks", "create", "--tenant", tenantId, "--url", receiver.url, "--events", "products.create", "--json"]))
    receiver.verifyWith([created.secret])
    receiver.answerWith(() => new Promise((resolve) => setTimeout(() => resolve(200), 400)))
    const before = receiver.received.length
    const first = await serve(flags)
    const ids: Array<string> = []
    for (let index = 0; index < 12; index += 1) {
      const response = await fetch(`${first.url}/products`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ name: `Product ${index}` })
      })
      expect(response.status).toBe(201)
      ids.push(((await response.json()) as { id: string }).id)
    }
    // Some deliveries are in flight (the receiver takes 400 ms each): kill the host now.
    await eventually(() => receiver.received.length > before, 30_000, "a first delivery")
    const killed = new Promise((resolve) => first.child.once("exit", resolve))
    first.child.kill("SIGKILL")
    await killed
    const deliveredBeforeKill = new Set(receiver.received.slice(before).map((entry) => entry.payload.data.id))
    expect(deliveredBeforeKill.size).toBeLessThan(ids.length)

    const second = await serve(flags)
    try {
      await eventually(() => {
        const delivered = new Set(receiver.received.slice(before).filter((entry) => entry.verifiedWith.length === 1).map((entry) => entry.payload.data.id))
        return ids.every((id) => delivered.has(id))
      }, 60_000, "every event after the restart")
    } finally {
      await stop(second.child)
    }
    expect(second.child.exitCode).toBe(0)
    expect(receiver.failures).toEqual([])
  })
})
