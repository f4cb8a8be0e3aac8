import { Effect, Schema } from "effect"
import { randomUUID } from "node:crypto"
import { column, id, revealed, stored, timestamps } from "../engine/field.js"
import { type ActionContext, type Draft, defineResource, type ResourceAction, type RecordType, type Row } from "../engine/resource.js"
import { unprocessable } from "../errors.js"
import { events } from "../events/events.js"
import { SecretBox } from "../secrets/secret-box.js"
import { sealContext, SEALED_COLUMNS } from "../store/sealed-secrets.js"
import { datetime, DateTimeString, flag, freeText, metadata, StringList, Text } from "../resources/common.js"
import { generateWebhookSecret } from "./signing.js"
import { urlProblem } from "./url-safety.js"
import { WebhookSettings } from "./settings.js"
import { webhookDeliveries } from "./deliveries.js"

/** Resources whose writes are events (spec "Events": all four actions), the names a subscription may use. */
export const SUBSCRIBABLE_RESOURCES = [
  "products", "customers", "suppliers", "financial-accounts", "financial-categories", "financial-transactions",
  "receivables", "payables", "quotes", "sales-orders", "invoices", "purchase-invoices", "fiscal-rules-br",
  "subscription-plans", "customer-subscriptions", "support-tickets", "email-dispatches", "tenant-email-identities"
] as const

const ACTIONS = ["create", "update", "delete", "restore"]

/** After a rotation the old secret signs too, for this long (receivers move to the new one meanwhile). */
export const PREVIOUS_SECRET_HOURS = 24

const eventPatternProblem = (pattern: string): string | undefined => {
  if (pattern === "*") return undefined
  const [resource, action, ...rest] = pattern.split(".")
  if (rest.length > 0 || action === undefined) return `"${pattern}" is not <resource>.<action>, <resource>.* or *`
  if (!(SUBSCRIBABLE_RESOURCES as ReadonlyArray<string>).includes(resource)) return `"${pattern}": ${resource} emits no events`
  if (action !== "*" && !ACTIONS.includes(action)) return `"${pattern}": the action is one of ${ACTIONS.join(", ")} or *`
  return undefined
}

// The description goes on the string, before the filter: JSON Schema shows no annotations of a filter it cannot express.
const EventPattern = Schema.String.annotate({ description: "products.update, payables.* or * (every event)" }).check(
  Schema.makeFilter((pattern: string) => eventPatternProblem(pattern) ?? true)
)

const eventPatterns = (description: string) =>
  StringList(EventPattern, 100).check(Schema.isMinLength(1, { message: "must name at least one event (or *)" })).annotate({ description })

const EventPatterns = eventPatterns("The events sent to this endpoint: resource/action pairs like sales-orders.update, payables.* or *")

const WebhookUrl = Text(2048).annotate({ description: "Where events are POSTed: https, not a private or loopback address" })

const endpointSecret = SEALED_COLUMNS.webhookSecrets
const previousSecret = SEALED_COLUMNS.webhookPreviousSecrets

/** The URL must be safe to call (422 naming `url`); a new secret is made and sealed on create; re-enabling clears the failure record. */
const rules = (draft: Draft<typeof endpointFields>) =>
  Effect.gen(function* () {
    const url = draft.values.url as string | undefined
    if (url !== undefined && url !== draft.current?.url) {
      const problem = urlProblem(url, (yield* WebhookSettings).allowPrivate)
      if (problem) return yield* Effect.fail(unprocessable(`The webhook URL is refused: it ${problem}`, { url: [problem] }, "WEBHOOK_URL_REFUSED"))
    }
    if (draft.operation === "update") {
      const reenabled = draft.input.enabled === true && draft.current?.enabled === false
      return reenabled ? { ...draft, values: { ...draft.values, disabled_reason: null, failing_since: null } } : draft
    }
    const box = yield* SecretBox
    const endpointId = randomUUID()
    const secret = generateWebhookSecret()
    return {
      ...draft,
      values: { ...draft.values, id: endpointId, secret, secret_sealed: box.seal(secret, sealContext(endpointSecret, endpointId)) }
    }
  })

const RotatedSecret = Schema.Struct({
  secret: Schema.String.annotate({ description: "The new signing secret (whsec_…): shown this once" }),
  previous_secret_expires_at: Schema.String.annotate({ description: "Until when the previous secret also signs deliveries" })
}).annotate({ identifier: "WebhookEndpointSecret" })

const rotateSecret: ResourceAction = {
  name: "rotate-secret",
  method: "POST",
  path: "rotate-secret",
  permission: "update",
  summary: "Rotate a webhook endpoint's signing secret",
  description: `Makes a new signing secret and answers it (the only time it is shown). For ${PREVIOUS_SECRET_HOURS} hours deliveries carry ` +
    "a signature with each secret (Standard Webhooks allows several), so receivers can switch without missing one.",
  output: RotatedSecret,
  successStatus: 200,
  emits: false,
  run: (context: ActionContext) =>
    Effect.gen(function* () {
      const box = yield* SecretBox
      const endpointId = String(context.current.id)
      const old = yield* box.open(String(context.current.secret_sealed), sealContext(endpointSecret, endpointId)).pipe(Effect.orDie)
      const secret = generateWebhookSecret()
      const expires = new Date(Date.now() + PREVIOUS_SECRET_HOURS * 3600_000).toISOString()
      yield* context.store.update(context.resource, endpointId, {
        secret_sealed: box.seal(secret, sealContext(endpointSecret, endpointId)),
        previous_secret_sealed: box.seal(old, sealContext(previousSecret, endpointId)),
        previous_secret_expires_at: expires
      })
      return { secret, previous_secret_expires_at: expires }
    })
}

/** How many events one replay re-sends at most; ask again from the last one's time for more. */
export const REPLAY_LIMIT = 1000

// A body is documented by its encoded side, where a datetime's description sits.
const ReplayInput = Schema.Struct({
  since: DateTimeString.pipe(Schema.annotateEncoded({ description: "Events recorded at or after this time" })),
  until: Schema.optionalKey(DateTimeString.pipe(Schema.annotateEncoded({ description: "… and before this time (default now)" }))),
  types: Schema.optionalKey(eventPatterns("Only these events (default: every event the endpoint subscribes to)"))
})

const Replayed = Schema.Struct({
  replayed: Schema.Int.annotate({ description: "Deliveries created (one per event)" }),
  truncated: Schema.Boolean.annotate({ description: `More than ${REPLAY_LIMIT} events matched: replay again from the last one` })
}).annotate({ identifier: "WebhookReplay" })

const matches = (patterns: ReadonlyArray<string>, type: string) => {
  const [resource] = type.split(".")
  return patterns.includes("*") || patterns.includes(type) || patterns.includes(`${resource}.*`)
}

const replay: ResourceAction = {
  name: "replay",
  method: "POST",
  path: "replay",
  permission: "update",
  summary: "Send a webhook endpoint past events again",
  description: `Creates a new delivery for every event of the change feed between since and until that the endpoint subscribes to ` +
    `(and that types names, when given), oldest first, at most ${REPLAY_LIMIT}. The feed keeps events 30 days.`,
  input: ReplayInput,
  example: { since: "2026-08-01T00:00:00Z", types: ["sales-orders.*"] },
  output: Replayed,
  successStatus: 200,
  emits: false,
  run: (context, body) =>
    Effect.gen(function* () {
      const input = body as typeof ReplayInput.Type
      const until = input.until ?? new Date().toISOString()
      const found = yield* context.store.findMany(events, {
        kind: "group",
        logic: "and",
        conditions: [
          { kind: "condition", field: "created_at", op: "gte", value: input.since },
          { kind: "condition", field: "created_at", op: "lt", value: until }
        ]
      }, { limit: REPLAY_LIMIT * 4 })
      const subscribed = context.current.events as ReadonlyArray<string>
      const wanted = found.filter((event) => matches(subscribed, String(event.type)) && (!input.types || matches(input.types, String(event.type))))
      const chosen = wanted.slice(0, REPLAY_LIMIT)
      for (const event of chosen) yield* context.store.insert(webhookDeliveries, deliveryOf(String(context.current.id), event))
      return { replayed: chosen.length, truncated: wanted.length > REPLAY_LIMIT || found.length === REPLAY_LIMIT * 4 }
    })
}

const deliveryOf = (endpointId: string, event: Row): Row => ({
  endpoint_id: endpointId,
  event_id: event.id,
  event_type: event.type,
  resource: event.resource,
  resource_id: event.resource_id,
  action: event.action,
  event_created_at: event.created_at
})

/** The fields of a webhook endpoint, named so that its rules take a draft keyed by them. */
const endpointFields = {
  id: id(),
  url: column<string, string>({ type: "text", output: Schema.String, inputSchema: WebhookUrl, required: true, filter: true, description: "Where events are POSTed (https)" }),
  description: freeText(500),
  events: column<ReadonlyArray<string>, ReadonlyArray<string>>({
    type: "jsonb",
    output: Schema.Array(Schema.String),
    inputSchema: EventPatterns,
    required: true,
    array: true,
    filter: true,
    description: "The events sent here: sales-orders.update, payables.*, or *"
  }),
  enabled: flag({ description: "Disabled endpoints get no deliveries (a 410 answer or 5 days of failures disable one)" }),
  disabled_reason: stored("text", Schema.String, { nullable: true, description: "Why the server disabled it: gone (410) or failing (5 days without a success)" }),
  failing_since: stored("timestamptz", Schema.String, { nullable: true, description: "First failure since the last success" }),
  metadata: metadata(),
  secret: revealed(Schema.String, "The signing secret (whsec_…): answered by the create only; rotate-secret makes a new one"),
  secret_sealed: column<string, never>({ type: "text", output: Schema.String, input: false, hidden: true }),
  previous_secret_sealed: column<string, never, true>({ type: "text", output: Schema.String, input: false, hidden: true, nullable: true }),
  previous_secret_expires_at: datetime({ nullable: true, input: false, description: "After a rotation, until when the previous secret also signs" }),
  ...timestamps()
}

/**
 * Where the tenant's events are POSTed, signed (Standard Webhooks). Its permission code is
 * granted like any other, so an integration platform subscribes and unsubscribes with the
 * key a user connected (Zapier's REST hooks, n8n and Make triggers); it governs the
 * endpoint's deliveries too. Writing an endpoint records no event (spec "Events", rule 4).
 */
export const webhookEndpoints = defineResource({
  name: "webhook-endpoints",
  singular: "webhook-endpoint",
  title: "Webhook endpoint",
  description: "A URL the tenant's events are POSTed to, signed with its secret (Standard Webhooks). Needs the webhook-endpoints permission " +
    "(read, create, update, delete), which also governs the endpoint's deliveries; no events are recorded for these writes.",
  notFoundCode: "WEBHOOK_ENDPOINT_NOT_FOUND",
  table: "webhook_endpoints",
  fields: endpointFields,
  defaultSort: { field: "created_at", order: "asc" },
  writes: { example: { url: "https://hooks.example.com/erp", events: ["products.*", "sales-orders.update"], description: "Shop sync" } },
  rules,
  actions: [rotateSecret, replay]
})

export type WebhookEndpoint = RecordType<typeof webhookEndpoints>

/** The endpoint's secrets that sign now: the current one, and the previous one until it expires. */
export const signingSecrets = (endpoint: Row, now = Date.now()) =>
  Effect.gen(function* () {
    const box = yield* SecretBox
    const endpointId = String(endpoint.id)
    const current = yield* box.open(String(endpoint.secret_sealed), sealContext(endpointSecret, endpointId))
    const expires = endpoint.previous_secret_expires_at ? Date.parse(String(endpoint.previous_secret_expires_at)) : 0
    if (!endpoint.previous_secret_sealed || expires <= now) return [current]
    const previous = yield* box.open(String(endpoint.previous_secret_sealed), sealContext(previousSecret, endpointId))
    return [current, previous]
  })
