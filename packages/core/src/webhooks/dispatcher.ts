import { SqlClient } from "effect/sql"
import { Duration, Effect, FiberSet, Layer, Queue, Ref, Schedule } from "effect"
import { randomUUID } from "node:crypto"
import { hostname } from "node:os"
import { SecretBox } from "../secrets/secret-box.js"
import { signingSecrets } from "./endpoints.js"
import { send, type SendResult } from "./send.js"
import { deliveryHeaders } from "./test-event.js"
import { urlProblem } from "./url-safety.js"
import { WebhookSettings } from "./settings.js"

/** After a failed attempt n, the next comes this long later; after the last, the delivery has failed (10 attempts in about 3.5 days). */
export const RETRY_DELAYS_MS: ReadonlyArray<number> = [
  5_000, 5 * 60_000, 30 * 60_000, 2 * 3600_000, 5 * 3600_000, 10 * 3600_000, 14 * 3600_000, 20 * 3600_000, 24 * 3600_000
]

/** An endpoint without a success for this long is disabled. */
export const FAILING_DAYS = 5

export interface DispatcherOptions {
  /** Names this worker's leases (default: host, pid and a random suffix). */
  readonly workerId?: string
  /** Attempts in flight per endpoint, across every worker (default 4). */
  readonly perEndpoint?: number
  /** Attempts in flight in this worker (default 16). */
  readonly concurrency?: number
  /** How often to look for due deliveries when there were none (default 1 s). */
  readonly pollMs?: number
  /** How long a claim holds; expired, another worker takes the delivery (default `ERP_WEBHOOKS_LEASE_SECONDS`). */
  readonly leaseMs?: number
  /** The whole exchange with a receiver (default 15 s). */
  readonly timeoutMs?: number
  /** The waits between attempts (default `RETRY_DELAYS_MS`); tests shorten them. */
  readonly retryDelaysMs?: ReadonlyArray<number>
  /** Private addresses and http allowed (default `ERP_WEBHOOKS_ALLOW_PRIVATE`). */
  readonly allowPrivate?: boolean
  /** On shutdown, how long attempts in flight may take to finish before they are cut and released (default 5 s). */
  readonly graceMs?: number
}

interface Claimed {
  readonly tenant_id: string
  readonly id: string
  readonly endpoint_id: string
  readonly event_id: string
  readonly event_type: string
  readonly resource: string
  readonly resource_id: string
  readonly action: string
  readonly event_created_at: Date | string
  readonly attempt_count: number
}

const iso = (value: Date | string) => new Date(value).toISOString()

/** The body sent: the event names the record, not its content (spec "Events"). */
export const payloadOf = (delivery: Claimed): string =>
  JSON.stringify({
    id: delivery.event_id,
    type: delivery.event_type,
    timestamp: iso(delivery.event_created_at),
    data: { id: delivery.resource_id, resource: delivery.resource, action: delivery.action, tenant_id: delivery.tenant_id }
  })

/** ±10 %, so receivers that failed together are not retried together. */
const jittered = (ms: number) => Math.round(ms * (0.9 + Math.random() * 0.2))

/**
 * How many due deliveries each endpoint gets, dealt one per endpoint per round in the order
 * given, up to `limit` in all, none past an endpoint's room or its due deliveries.
 */
const dealt = (
  endpoints: ReadonlyArray<{ readonly tenant_id: string; readonly id: string; readonly due: number }>,
  room: ReadonlyMap<string, number>,
  limit: number
): ReadonlyArray<{ readonly tenant_id: string; readonly endpoint_id: string; readonly take: number }> => {
  const quota = endpoints.map((endpoint) => Math.max(0, Math.min(room.get(endpoint.id) ?? 0, Number(endpoint.due))))
  const take = endpoints.map(() => 0)
  let left = limit
  while (left > 0) {
    let any = false
    for (let index = 0; index < endpoints.length && left > 0; index += 1) {
      if (take[index] >= quota[index]) continue
      take[index] += 1
      left -= 1
      any = true
    }
    if (!any) break
  }
  return endpoints.flatMap((endpoint, index) => (take[index] > 0 ? [{ tenant_id: endpoint.tenant_id, endpoint_id: endpoint.id, take: take[index] }] : []))
}

/**
 * Sends due deliveries: claims them in a short transaction (`FOR UPDATE SKIP LOCKED`,
 * a lease that expires if this worker dies), sends each outside any transaction, and
 * records the attempt in another short one. Any number of workers share one store.
 */
export const makeDispatcher = (options: DispatcherOptions = {}) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const box = yield* SecretBox
    const settings = yield* WebhookSettings
    const workerId = options.workerId ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`
    const perEndpoint = options.perEndpoint ?? 4
    const concurrency = options.concurrency ?? 16
    const leaseMs = options.leaseMs ?? settings.leaseSeconds * 1000
    const timeoutMs = options.timeoutMs ?? 15_000
    const delays = options.retryDelaysMs ?? RETRY_DELAYS_MS
    const allowPrivate = options.allowPrivate ?? settings.allowPrivate

    /**
     * Up to `limit` due deliveries, dealt fairly: endpoints with due work and room take turns, each
     * tenant's endpoint whose oldest due delivery is oldest first, then every tenant's second, and
     * one delivery per endpoint per round. At most `perEndpoint` are in flight per endpoint, across
     * workers: its row is locked while its attempts are counted and claimed. An endpoint's backlog
     * never costs more than its first due rows (index `webhook_deliveries_claim_idx`).
     *
     * Times compare with `now()`, the claim's start, a few milliseconds behind the clock: a value
     * stable in the statement bounds the index scans, where the clock would be a filter.
     */
    const claim = (limit: number) =>
      sql.withTransaction(Effect.gen(function* () {
        // Every endpoint with pending deliveries, one index probe each (a loose scan); of those with
        // due work and room, `limit` in turn order. NO KEY UPDATE: claims of one endpoint queue here
        // (other workers skip it), writes recording deliveries (KEY SHARE) do not.
        const ready = yield* sql<{ tenant_id: string; id: string; due: number }>`
          WITH RECURSIVE pending AS (
            (SELECT tenant_id, endpoint_id FROM webhook_deliveries WHERE status IN ('pending', 'retrying') ORDER BY tenant_id, endpoint_id LIMIT 1)
            UNION ALL
            SELECT next.tenant_id, next.endpoint_id FROM pending p CROSS JOIN LATERAL (
              SELECT tenant_id, endpoint_id FROM webhook_deliveries
              WHERE status IN ('pending', 'retrying') AND (tenant_id, endpoint_id) > (p.tenant_id, p.endpoint_id)
              ORDER BY tenant_id, endpoint_id LIMIT 1) next
          ), due AS (
            SELECT p.tenant_id, p.endpoint_id, first.oldest, first.due,
              row_number() OVER (PARTITION BY p.tenant_id ORDER BY first.oldest, p.endpoint_id) AS turn
            FROM pending p CROSS JOIN LATERAL (
              SELECT min(next_attempt_at) AS oldest, count(*)::int AS due FROM (
                SELECT x.next_attempt_at FROM webhook_deliveries x
                WHERE x.tenant_id = p.tenant_id AND x.endpoint_id = p.endpoint_id AND x.status IN ('pending', 'retrying')
                  AND x.next_attempt_at <= now() AND (x.lease_until IS NULL OR x.lease_until < now())
                ORDER BY x.next_attempt_at, x.id LIMIT ${perEndpoint}) head) first
            WHERE first.due > 0 AND (SELECT count(*) FROM webhook_deliveries l WHERE l.tenant_id = p.tenant_id AND l.endpoint_id = p.endpoint_id
              AND l.lease_until IS NOT NULL AND l.lease_until > now()) < ${perEndpoint}
          )
          SELECT w.tenant_id, w.id, due.due FROM due JOIN webhook_endpoints w ON w.tenant_id = due.tenant_id AND w.id = due.endpoint_id
          ORDER BY due.turn, due.oldest, w.id LIMIT ${limit}
          FOR NO KEY UPDATE OF w SKIP LOCKED`
        if (ready.length === 0) return []
        // Counted in a statement of its own, after the lock: its snapshot sees the leases of a claim that held the lock
        // and committed meanwhile (counted in the locking statement, they would be missed and one attempt past `perEndpoint` would go out).
        const busy = yield* sql<{ id: string; busy: number }>`
          SELECT w.id, (SELECT count(*) FROM webhook_deliveries x WHERE x.tenant_id = w.tenant_id AND x.endpoint_id = w.id
            AND x.lease_until IS NOT NULL AND x.lease_until > now())::int AS busy
          FROM webhook_endpoints w WHERE w.id IN ${sql.in(ready.map((row) => row.id))}`
        const shares = dealt(ready, new Map(busy.map((row) => [row.id, perEndpoint - Number(row.busy)])), limit)
        if (shares.length === 0) return []
        return yield* sql<Claimed>`
          UPDATE webhook_deliveries u SET lease_until = clock_timestamp() + ${`${leaseMs} milliseconds`}::interval, leased_by = ${workerId}
          FROM (
            SELECT c.tenant_id, c.id FROM jsonb_to_recordset(${JSON.stringify(shares)}::jsonb) AS e(tenant_id uuid, endpoint_id uuid, take int)
            CROSS JOIN LATERAL (
              SELECT x.tenant_id, x.id FROM webhook_deliveries x
              WHERE x.tenant_id = e.tenant_id AND x.endpoint_id = e.endpoint_id AND x.status IN ('pending', 'retrying')
                AND x.next_attempt_at <= now() AND (x.lease_until IS NULL OR x.lease_until < now())
              ORDER BY x.next_attempt_at, x.id LIMIT e.take FOR UPDATE SKIP LOCKED) c
          ) chosen
          WHERE u.tenant_id = chosen.tenant_id AND u.id = chosen.id
          RETURNING u.tenant_id, u.id, u.endpoint_id, u.event_id, u.event_type, u.resource, u.resource_id, u.action, u.event_created_at, u.attempt_count`
      }))

    const record = (delivery: Claimed, result: SendResult, attempt: number) =>
      sql.withTransaction(Effect.gen(function* () {
        yield* sql`INSERT INTO webhook_delivery_attempts (tenant_id, delivery_id, attempt_number, status_code, latency_ms, error, response_body)
          VALUES (${delivery.tenant_id}::uuid, ${delivery.id}::uuid, ${attempt}, ${result.statusCode}, ${result.latencyMs}, ${result.error}, ${result.body})`
        const ok = result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300
        const gone = result.statusCode === 410
        const delay = delays[attempt - 1]
        const status = ok ? "succeeded" : gone || delay === undefined ? "failed" : "retrying"
        const next = status === "retrying" ? new Date(Date.now() + jittered(delay!)).toISOString() : null
        yield* sql`UPDATE webhook_deliveries SET status = ${status}, attempt_count = ${attempt}, next_attempt_at = ${next}::timestamptz,
            lease_until = NULL, leased_by = NULL, last_status_code = ${result.statusCode}, last_error = ${result.error},
            last_attempt_at = clock_timestamp(), succeeded_at = ${ok ? sql`clock_timestamp()` : sql`succeeded_at`}, updated_at = clock_timestamp()
          WHERE tenant_id = ${delivery.tenant_id}::uuid AND id = ${delivery.id}::uuid AND leased_by = ${workerId}`
        if (ok) {
          yield* sql`UPDATE webhook_endpoints SET failing_since = NULL WHERE tenant_id = ${delivery.tenant_id}::uuid AND id = ${delivery.endpoint_id}::uuid AND failing_since IS NOT NULL`
          return
        }
        // A 410, or failures and no success for FAILING_DAYS: the endpoint is turned off, once, and the feed says so.
        const disabled = yield* sql<{ id: string }>`UPDATE webhook_endpoints SET failing_since = coalesce(failing_since, clock_timestamp()),
            enabled = false, disabled_reason = ${gone ? "gone" : "failing"}, updated_at = clock_timestamp()
          WHERE tenant_id = ${delivery.tenant_id}::uuid AND id = ${delivery.endpoint_id}::uuid AND enabled
            AND (${gone}::boolean OR failing_since <= clock_timestamp() - ${`${FAILING_DAYS} days`}::interval)
          RETURNING id`
        if (disabled.length > 0) {
          yield* sql`INSERT INTO events (tenant_id, type, resource, resource_id, action, actor_kind, actor_id)
            VALUES (${delivery.tenant_id}::uuid, 'webhook_endpoint.disabled', 'webhook-endpoints', ${delivery.endpoint_id}, 'disabled', 'system', 'webhooks')`
          return
        }
        yield* sql`UPDATE webhook_endpoints SET failing_since = clock_timestamp()
          WHERE tenant_id = ${delivery.tenant_id}::uuid AND id = ${delivery.endpoint_id}::uuid AND failing_since IS NULL`
      }))

    /** A delivery whose endpoint is gone or disabled is not sent: it fails with the reason. */
    const abandon = (delivery: Claimed, reason: string) =>
      sql`UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL, lease_until = NULL, leased_by = NULL,
          last_error = ${reason}, updated_at = clock_timestamp()
        WHERE tenant_id = ${delivery.tenant_id}::uuid AND id = ${delivery.id}::uuid AND leased_by = ${workerId}`

    const attempt = (delivery: Claimed) =>
      Effect.gen(function* () {
        const rows = yield* sql<Record<string, unknown>>`SELECT id, url, enabled, deleted_at, secret_sealed, previous_secret_sealed, previous_secret_expires_at
          FROM webhook_endpoints WHERE tenant_id = ${delivery.tenant_id}::uuid AND id = ${delivery.endpoint_id}::uuid`
        const endpoint = rows[0]
        if (!endpoint || endpoint.deleted_at !== null) return yield* abandon(delivery, "the endpoint was deleted")
        if (endpoint.enabled !== true) return yield* abandon(delivery, "the endpoint is disabled")
        const number = Number(delivery.attempt_count) + 1
        const problem = urlProblem(String(endpoint.url), allowPrivate)
        const secrets = yield* Effect.provideService(signingSecrets(endpoint), SecretBox, box)
        const body = payloadOf(delivery)
        const result: SendResult = problem
          ? { statusCode: null, latencyMs: 0, error: `refused: the URL ${problem}`, body: null }
          : yield* send(new URL(String(endpoint.url)), deliveryHeaders(secrets, delivery.id, body), body, { timeoutMs, allowPrivate })
        yield* record(delivery, result, number)
      }).pipe(
        Effect.catchCause((cause) => Effect.logWarning(`webhook delivery ${delivery.id} could not be attempted`, cause)),
        Effect.withSpan("webhooks.attempt")
      )

    /** Gives back what this worker holds and has not finished: another worker (or this one, restarted) sends it. */
    const release = sql`UPDATE webhook_deliveries SET lease_until = NULL, leased_by = NULL
      WHERE lease_until IS NOT NULL AND leased_by = ${workerId} AND status IN ('pending', 'retrying')`.pipe(Effect.asVoid)

    return { workerId, claim, attempt, release, concurrency, pollMs: options.pollMs ?? 1000, graceMs: options.graceMs ?? 5000 }
  })

/**
 * The dispatcher as a background part of a host (`erp serve`) or alone (`erp worker`).
 * Shutting down stops claiming, lets attempts in flight finish for a grace period,
 * cuts the rest and releases their leases.
 */
export const layerWebhookDispatcher = (options: DispatcherOptions = {}) =>
  Layer.effectDiscard(Effect.gen(function* () {
    const dispatcher = yield* makeDispatcher(options)
    const inFlight = yield* FiberSet.make()
    const stopping = yield* Ref.make(false)
    const running = yield* Ref.make(0)

    yield* Effect.addFinalizer(() =>
      Effect.gen(function* () {
        yield* Ref.set(stopping, true)
        // Finalizers run uninterruptibly: the wait must be made interruptible for its timeout to cut it.
        yield* Effect.interruptible(Ref.get(running).pipe(Effect.repeat({ until: (count) => count === 0, schedule: Schedule.spaced(Duration.millis(50)) }))).pipe(
          Effect.timeout(Duration.millis(dispatcher.graceMs)),
          Effect.ignore
        )
        yield* FiberSet.clear(inFlight)
        yield* dispatcher.release.pipe(Effect.ignore)
      }))

    // An attempt that ends wakes the loop: its endpoint may have room again, or a retry may be due at once.
    const wake = yield* Queue.sliding<void>(1)
    const loop = Effect.gen(function* () {
      while (!(yield* Ref.get(stopping))) {
        const free = dispatcher.concurrency - (yield* Ref.get(running))
        const claimed = free > 0
          ? yield* dispatcher.claim(free).pipe(Effect.catchCause((cause) => Effect.as(Effect.logWarning("claiming webhook deliveries failed", cause), [])))
          : []
        for (const delivery of claimed) {
          yield* Ref.update(running, (count) => count + 1)
          yield* FiberSet.run(inFlight, dispatcher.attempt(delivery).pipe(
            Effect.ensuring(Effect.andThen(Ref.update(running, (count) => count - 1), Queue.offer(wake, undefined)))
          ))
        }
        if (claimed.length === 0) yield* Effect.raceFirst(Effect.sleep(Duration.millis(dispatcher.pollMs)), Queue.take(wake))
      }
    })
    yield* Effect.forkScoped(loop)
  }))
