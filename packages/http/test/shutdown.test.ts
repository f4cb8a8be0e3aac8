import * as net from "node:net"
import { describe, expect, it } from "vitest"
import { startTestHost } from "../../../test/support/host.js"
import { testStore } from "../../../test/support/stores.js"

/**
 * A host that stops lets the requests in flight finish, for a grace, then ends the connections
 * left: a client that never finishes sending its request must not keep it from stopping (Node's
 * own `close` waits for every connection, here until the 60 s headers timeout).
 */
describe("a host that stops", () => {
  it("ends a connection whose request never finishes once the grace is over", async () => {
    const host = await startTestHost(testStore("pglite"), { shutdownGraceMs: 500 })
    const port = Number(new URL(host.url).port)
    const stalled = net.connect(port, "127.0.0.1")
    await new Promise((resolve) => stalled.once("connect", resolve))
    stalled.write("GET /health HTTP/1.1\r\nHost: erp\r\n")
    const ended = new Promise((resolve) => stalled.once("close", resolve))
    // A request already answered on a kept-alive connection does not hold the stop either.
    expect((await fetch(`${host.url}/health`)).status).toBe(200)

    const started = Date.now()
    await host.close()
    await ended
    const took = Date.now() - started
    expect(took).toBeGreaterThanOrEqual(400)
    expect(took).toBeLessThan(10_000)
  }, 30_000)
})
