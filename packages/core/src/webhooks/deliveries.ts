import { Effect, Option, Schema } from "effect"
import { children } from "../engine/children.js"
import { column, id, stored, timestamp } from "../engine/field.js"
import { defineResource, type RecordType, type ResourceAction } from "../engine/resource.js"
import { Conflict } from "../errors.js"
import { resourceNamed } from "../engine/registry.js"

const attemptFields = {
  id: id(),
  delivery_id: stored("uuid", Schema.String),
  attempt_number: stored("integer", Schema.Int, { description: "1 for the first attempt" }),
  status_code: stored("integer", Schema.Int, { nullable: true, description: "The receiver's HTTP status; null when no answer came (timeout, connection refused)" }),
  latency_ms: stored("integer", Schema.Int, { description: "Milliseconds from sending to the answer (or the failure)" }),
  error: stored("text", Schema.String, { nullable: true, description: "Why it failed, when it did" }),
  response_body: stored("text", Schema.String, { nullable: true, description: "The first 4 KiB of the answer" }),
  created_at: timestamp()
}

const retry: ResourceAction = {
  name: "retry",
  method: "POST",
  path: "retry",
  permission: "update",
  summary: "Send a webhook delivery again now",
  description: "Queues the delivery for an attempt at once, whatever its status (a succeeded one is sent again; receivers deduplicate by webhook-id). " +
    "409 while an attempt is in flight. Its attempts so far stay in its log.",
  output: Schema.suspend((): Schema.Codec<unknown, unknown> => webhookDeliveries.record),
  successStatus: 200,
  emits: false,
  run: (context) =>
    Effect.gen(function* () {
      const deliveryId = String(context.current.id)
      const leased = context.current.lease_until !== null && Date.parse(String(context.current.lease_until)) > Date.now()
      if (leased) return yield* Effect.fail(new Conflict({ message: "This delivery is being attempted now; retry it once the attempt ends", code: "DELIVERY_IN_FLIGHT" }))
      yield* context.store.update(context.resource, deliveryId, { status: "pending", next_attempt_at: new Date().toISOString() })
      return Option.getOrThrow(yield* context.store.findById(context.resource, deliveryId))
    })
}

/**
 * One event for one endpoint, and every attempt to send it. Created with the event (in
 * its transaction) for each enabled endpoint subscribed to it, or by a replay; sent by
 * the dispatcher. Part of its endpoint: read with the `webhook-endpoints` read permission,
 * retried with its update permission; never written by clients otherwise.
 */
export const webhookDeliveries = defineResource({
  name: "webhook-deliveries",
  singular: "webhook-delivery",
  title: "Webhook delivery",
  description: "One event sent to one webhook endpoint, with each attempt (status code, latency, error, the first 4 KiB of the answer). " +
    "Filter by endpoint_id, status and event_type. Read with the webhook-endpoints read permission, retried with its update permission.",
  notFoundCode: "WEBHOOK_DELIVERY_NOT_FOUND",
  permission: "webhook-endpoints",
  nestedUnder: { parent: () => resourceNamed("webhook-endpoints"), key: "endpoint_id", segment: "deliveries" },
  table: "webhook_deliveries",
  softDelete: false,
  fields: {
    id: id(),
    endpoint_id: stored("uuid", Schema.String, { filter: true, description: "The webhook endpoint" }),
    event_id: stored("uuid", Schema.String, { filter: true, description: "The event of the change feed (GET /events/{id})" }),
    event_type: stored("text", Schema.String, { filter: true, description: "<resource>.<action>" }),
    resource: stored("text", Schema.String),
    resource_id: stored("text", Schema.String),
    action: stored("text", Schema.String),
    event_created_at: stored("timestamptz", Schema.String, { description: "When the event happened (the payload's timestamp)" }),
    status: stored("text", Schema.Literals(["pending", "succeeded", "retrying", "failed"]), {
      filter: true,
      description: "pending (not tried yet, or queued again), succeeded (a 2xx answer), retrying (failed, another attempt at next_attempt_at), failed (no more attempts)"
    }),
    attempt_count: stored("integer", Schema.Int, { description: "Attempts made" }),
    next_attempt_at: stored("timestamptz", Schema.String, { nullable: true, description: "When the next attempt is due (pending and retrying)" }),
    lease_until: column<string, never, true>({ type: "timestamptz", output: Schema.String, input: false, nullable: true, hidden: true }),
    last_status_code: stored("integer", Schema.Int, { nullable: true }),
    last_error: stored("text", Schema.String, { nullable: true }),
    last_attempt_at: stored("timestamptz", Schema.String, { nullable: true }),
    succeeded_at: stored("timestamptz", Schema.String, { nullable: true }),
    attempts: children({
      table: "webhook_delivery_attempts",
      parentKey: "delivery_id",
      fields: attemptFields,
      identifier: "WebhookDeliveryAttempt",
      maxItems: 100,
      writable: false,
      description: "Every attempt, oldest first"
    }),
    created_at: timestamp(),
    updated_at: timestamp()
  },
  defaultSort: { field: "created_at", order: "desc" },
  actions: [retry]
})

export type WebhookDelivery = RecordType<typeof webhookDeliveries>
