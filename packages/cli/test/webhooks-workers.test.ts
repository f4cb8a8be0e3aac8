import { type ChildProcess, spawn } from "node:child_process"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { BIN, erp, json, serve, stop } from "../../../test/support/cli.js"
import { eventually, startReceiver } from "../../../test/support/webhook-receiver.js"

/** Starts `erp worker` and resolves once it says it is sending. */
const worker = (args: ReadonlyArray<string>) =>
  new Promise<ChildProcess>((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args, "worker", "--allow-private-webhooks"], { env: { ...process.env, DATABASE_URL: "" } })
    let output = ""
    const timer = setTimeout(() => reject(new Error(`worker did not start: ${output}`)), 60_000)
    const onData = (chunk: Buffer) => {
      output += chunk
      if (output.includes("erp worker sending webhooks")) {
        clearTimeout(timer)
        resolve(child)
      }
    }
    child.stdout.on("data", onData)
    child.stderr.on("data", onData)
    child.on("exit", (code) => reject(new Error(`worker exited with ${code}: ${output}`)))
  })

/** Separate processes on one PostgreSQL: the host and two `erp worker`s share the deliveries. */
describe.runIf(process.env.TEST_DATABASE_URL)("erp serve and two erp workers on one PostgreSQL", () => {
  const flags = ["--database-url", process.env.TEST_DATABASE_URL!]
  let receiver: Awaited<ReturnType<typeof startReceiver>>
  const children: Array<ChildProcess> = []

  beforeAll(async () => {
    process.env.ERP_WEBHOOKS_ALLOW_PRIVATE = "true"
    receiver = await startReceiver()
  })
  afterAll(async () => {
    await Promise.all(children.map(stop))
    await receiver?.close()
    delete process.env.ERP_WEBHOOKS_ALLOW_PRIVATE
  })

  it("delivers every event once, never the same delivery twice at once, at most 4 in flight for the endpoint", async () => {
    const tenantId = json(await erp([...flags, "tenants", "create", "--name", "Workers Ltda", "--country", "BR", "--json"])).id
    const token = json(await erp([...flags, "keys", "create", "--tenant", tenantId, "--name", "writer", "--all", "--json"])).token
    const endpoint = json(await erp([...flags, "webhooks", "create", "--tenant", tenantId, "--url", receiver.url, "--events", "products.create", "--json"]))
    receiver.verifyWith([endpoint.secret])
    receiver.answerWith(() => new Promise((resolve) => setTimeout(() => resolve(200), 150)))
    const host = await serve(flags, ["--allow-private-webhooks"])
    children.push(host.child)
    children.push(...(await Promise.all([worker(flags), worker(flags)])))
    const ids: Array<string> = []
    for (let index = 0; index < 30; index += 1) {
      const response = await fetch(`${host.url}/products`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ name: `Product ${index}` })
      })
      expect(response.status).toBe(201)
      ids.push(((await response.json()) as { id: string }).id)
    }
    const mine = () => receiver.received.filter((entry) => entry.verifiedWith.length === 1)
    await eventually(() => new Set(mine().map((entry) => entry.payload.data.id)).size === ids.length, 60_000, "30 deliveries")
    await new Promise((resolve) => setTimeout(resolve, 500))
    expect(new Set(mine().map((entry) => entry.payload.data.id))).toEqual(new Set(ids))
    expect(mine().length).toBe(ids.length)
    expect(receiver.overlaps).toEqual([])
    expect(receiver.maxInFlight()).toBeLessThanOrEqual(4)
    expect(receiver.failures).toEqual([])
  })
})
