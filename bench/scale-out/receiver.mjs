// The scale-out bench's webhook receiver: an HTTP server in the bench's process that verifies each
// delivery with the `standardwebhooks` package (what a receiver would use, not the product's own
// signing code) and records every arrival by delivery id, so the checks can tell a delivery sent
// twice from two deliveries of one event.
import * as http from "node:http"
import { Webhook } from "standardwebhooks"

export const startReceiver = async () => {
  /** Delivery id → { count, eventId, type }. */
  const received = new Map()
  const badSignatures = []
  let verifier
  const server = http.createServer((incoming, answer) => {
    const chunks = []
    incoming.on("data", (chunk) => chunks.push(chunk))
    incoming.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8")
      const id = String(incoming.headers["webhook-id"])
      let event
      try {
        event = verifier.verify(body, incoming.headers)
      } catch (error) {
        badSignatures.push(`${id}: ${error instanceof Error ? error.message : String(error)}`)
        event = JSON.parse(body)
      }
      const seen = received.get(id)
      received.set(id, { count: (seen?.count ?? 0) + 1, eventId: event.id, type: event.type })
      // 2xx whatever the signature said: a bad one is counted, and a retry would only count it again.
      answer.writeHead(200).end()
    })
  })
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${server.address().port}/hooks`,
    received,
    badSignatures,
    /** The endpoint's signing secret (`whsec_…`), known once the endpoint is created through the API. */
    setSecret: (secret) => { verifier = new Webhook(secret) },
    close: () => new Promise((resolve) => server.close(resolve))
  }
}
