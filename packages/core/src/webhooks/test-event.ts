import { SqlClient } from "effect/sql"
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { NotFound } from "../errors.js"
import { signingSecrets } from "./endpoints.js"
import { send, type SendResult } from "./send.js"
import { signatureHeader } from "./signing.js"
import { urlProblem } from "./url-safety.js"
import { WebhookSettings } from "./settings.js"

export const USER_AGENT = "erp-webhooks/0.1 (+Standard Webhooks)"

/** The headers of a signed delivery (Standard Webhooks). */
export const deliveryHeaders = (secrets: ReadonlyArray<string>, messageId: string, body: string, now = Date.now()) => {
  const timestamp = Math.floor(now / 1000)
  return {
    "content-type": "application/json",
    "user-agent": USER_AGENT,
    "webhook-id": messageId,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": signatureHeader(secrets, messageId, timestamp, body)
  }
}

/**
 * Sends one signed `webhook.test` event to an endpoint now, outside the delivery log, and
 * answers what the receiver said: an operator's check that a receiver verifies our signatures.
 */
export const sendTestEvent = (tenantId: string, endpointId: string, options: { readonly timeoutMs?: number } = {}) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<Record<string, unknown>>`SELECT id, url, secret_sealed, previous_secret_sealed, previous_secret_expires_at
      FROM webhook_endpoints WHERE tenant_id = ${tenantId}::uuid AND id = ${endpointId}::uuid AND deleted_at IS NULL`.pipe(Effect.orDie)
    const endpoint = rows[0]
    if (!endpoint) return yield* Effect.fail(new NotFound({ message: "Webhook endpoint not found", code: "WEBHOOK_ENDPOINT_NOT_FOUND" }))
    const { allowPrivate } = yield* WebhookSettings
    const problem = urlProblem(String(endpoint.url), allowPrivate)
    if (problem) return { statusCode: null, latencyMs: 0, error: `refused: the URL ${problem}`, body: null } satisfies SendResult
    const secrets = yield* signingSecrets(endpoint).pipe(Effect.orDie)
    const id = randomUUID()
    const body = JSON.stringify({ id, type: "webhook.test", timestamp: new Date().toISOString(), data: { id: endpointId, resource: "webhook-endpoints", action: "test", tenant_id: tenantId } })
    return yield* send(new URL(String(endpoint.url)), deliveryHeaders(secrets, id, body), body, { timeoutMs: options.timeoutMs ?? 15_000, allowPrivate })
  })
