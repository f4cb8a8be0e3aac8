import { createServer, type IncomingHttpHeaders, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { Webhook } from "standardwebhooks"

export interface Received {
  readonly id: string
  readonly headers: IncomingHttpHeaders
  readonly body: string
  readonly payload: { id: string; type: string; timestamp: string; data: { id: string; resource: string; action: string; tenant_id: string } }
  /** Which of the secrets verified the signature (every one given must). */
  readonly verifiedWith: ReadonlyArray<string>
}

/**
 * A webhook receiver on loopback that verifies every delivery with the `standardwebhooks`
 * package, as a receiver would. `answer` decides the status per delivery (default 200).
 */
export const startReceiver = async () => {
  const received: Array<Received> = []
  const failures: Array<string> = []
  let secrets: ReadonlyArray<string> = []
  let answer: (delivery: { id: string; count: number }) => number | Promise<number> = () => 200
  const counts = new Map<string, number>()
  let inFlight = 0
  let maxInFlight = 0
  const inFlightIds = new Set<string>()
  const overlaps: Array<string> = []

  const server: Server = createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", async () => {
      const body = Buffer.concat(chunks).toString("utf8")
      const id = String(request.headers["webhook-id"])
      if (inFlightIds.has(id)) overlaps.push(id)
      inFlightIds.add(id)
      inFlight += 1
      maxInFlight = Math.max(maxInFlight, inFlight)
      const verifiedWith: Array<string> = []
      for (const secret of secrets) {
        try {
          new Webhook(secret).verify(body, request.headers as Record<string, string>)
          verifiedWith.push(secret)
        } catch (error) {
          failures.push(`${id}: ${(error as Error).message}`)
        }
      }
      const count = (counts.get(id) ?? 0) + 1
      counts.set(id, count)
      received.push({ id, headers: request.headers, body, payload: JSON.parse(body), verifiedWith })
      const status = await answer({ id, count })
      inFlight -= 1
      inFlightIds.delete(id)
      response.writeHead(status, { "content-type": "text/plain" }).end(`answered ${status}`)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as AddressInfo).port
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    failures,
    overlaps,
    maxInFlight: () => maxInFlight,
    verifyWith: (list: ReadonlyArray<string>) => void (secrets = list),
    answerWith: (fn: typeof answer) => void (answer = fn),
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

/** Polls until `check` holds (or fails with its last message after `ms`). */
export const eventually = async (check: () => boolean | Promise<boolean>, ms = 15_000, what = "condition") => {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    if (await check()) return
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error(`timed out waiting for ${what}`)
}
