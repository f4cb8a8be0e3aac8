import { ALL_PERMISSIONS } from "@erp/core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { PairUnavailable, type PostgresPair, startPostgresPair } from "../../../scripts/postgres-pair.mjs"
import { startTestHost, type TestHost, type TestTenant } from "../../../test/support/host.js"

/**
 * Reads on a streaming standby (`ERP_DATABASE_READ_URL`), made here with `pg_basebackup` from a
 * primary of its own: a credential reads its own writes even while the standby's replay is
 * paused, other credentials read what the standby has replayed, and a standby that goes away
 * leaves every read answered by the primary.
 *
 * It needs PostgreSQL's server programs on this machine; without them it is skipped with the
 * reason, unless `ERP_REQUIRE_STANDBY=1` (`.ci/run`).
 */
let pair: PostgresPair | undefined
let missing: string | undefined

describe("reads on a read replica", () => {
  let host: TestHost
  let tenant: TestTenant
  let other: string

  beforeAll(async () => {
    try {
      pair = await startPostgresPair()
    } catch (error) {
      if (!(error instanceof PairUnavailable) || process.env.ERP_REQUIRE_STANDBY === "1") throw error
      missing = `needs a primary and a standby made here: ${error.message}`
      return
    }
    host = await startTestHost({ kind: "postgres", url: pair.primaryUrl, replicas: { urls: [pair.standbyUrl], waitMs: 100 } })
    tenant = await host.createTenant()
    const created = await host.createKey(tenant.id, ALL_PERMISSIONS, { name: "other reader" })
    other = created.token
  }, 60_000)
  afterAll(async () => {
    await host?.close()
    pair?.stop()
  })

  /** What another credential reads, once the standby has replayed what it is waited for. */
  const eventually = async (read: () => Promise<boolean>) => {
    const deadline = Date.now() + 10_000
    while (!(await read())) {
      if (Date.now() > deadline) throw new Error("the standby did not catch up in 10 s")
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  }

  it("answers the writer its own writes while replay is paused, and other credentials what the standby holds", async (context) => {
    if (missing) return context.skip(missing)
    const before = await host.request("POST", "/customers", { token: tenant.token, body: { legal_name: "Replayed" } })
    expect(before.status).toBe(201)
    await eventually(async () => (await host.request("GET", `/customers/${String(before.body.id)}`, { token: other })).status === 200)

    pair!.pauseReplay()
    const written = await host.request("POST", "/customers", { token: tenant.token, body: { legal_name: "Written while paused" } })
    expect(written.status).toBe(201)
    const id = String(written.body.id)

    // The writer: its read, its list and its next write all see the new record.
    const own = await host.request("GET", `/customers/${id}`, { token: tenant.token })
    expect(own.status).toBe(200)
    expect(own.body.legal_name).toBe("Written while paused")
    const ownList = await host.request("GET", "/customers?limit=100", { token: tenant.token })
    expect(ownList.status).toBe(200)
    expect(ownList.body.data.map((customer: { id: string }) => customer.id)).toContain(id)
    const changed = await host.request("PATCH", `/customers/${id}`, { token: tenant.token, body: { trade_name: "Changed" } })
    expect(changed.status).toBe(200)
    const ownAgain = await host.request("GET", `/customers/${id}`, { token: tenant.token })
    expect(ownAgain.body.trade_name).toBe("Changed")

    // Another credential reads the standby, whose replay stopped before the write.
    const theirs = await host.request("GET", `/customers/${id}`, { token: other })
    expect(theirs.status).toBe(404)
    const theirList = await host.request("GET", "/customers?limit=100", { token: other })
    expect(theirList.status).toBe(200)
    expect(theirList.body.data.map((customer: { id: string }) => customer.id)).toEqual([String(before.body.id)])
    // The standby holds what it replayed before the pause, and nothing since.
    expect(pair!.psql("standby", `SELECT count(*) FROM customers WHERE id = '${id}'`)).toBe("0")

    pair!.resumeReplay()
    await eventually(async () => {
      const read = await host.request("GET", `/customers/${id}`, { token: other })
      return read.status === 200 && read.body.trade_name === "Changed"
    })
  })

  it("answers every read from the primary while the standby is down, and uses it again once it is back", async (context) => {
    if (missing) return context.skip(missing)
    pair!.stopStandby()
    const written = await host.request("POST", "/customers", { token: tenant.token, body: { legal_name: "Standby down" } })
    expect(written.status).toBe(201)
    for (const token of [tenant.token, other]) {
      const read = await host.request("GET", `/customers/${String(written.body.id)}`, { token })
      expect(read.status).toBe(200)
      const list = await host.request("GET", "/customers?limit=100&sort=legal_name:asc", { token })
      expect(list.status).toBe(200)
      expect(list.body.data.map((customer: { legal_name: string }) => customer.legal_name)).toContain("Standby down")
    }

    pair!.startStandby()
    pair!.pauseReplay()
    const unseen = await host.request("POST", "/customers", { token: tenant.token, body: { legal_name: "After the standby came back" } })
    expect(unseen.status).toBe(201)
    // Back in use: the other credential reads the standby's state again (the host asks it every 200 ms).
    await eventually(async () => (await host.request("GET", `/customers/${String(unseen.body.id)}`, { token: other })).status === 404)
    expect((await host.request("GET", `/customers/${String(unseen.body.id)}`, { token: tenant.token })).status).toBe(200)
    pair!.resumeReplay()
  })
})
