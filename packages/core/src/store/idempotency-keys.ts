import * as SqlClient from "effect/sql/SqlClient"
import { Effect, Layer } from "effect"
import { SecretBox, type SecretUnreadable } from "../secrets/secret-box.js"
import { IDEMPOTENCY_LEASE_SECONDS, IDEMPOTENCY_RETENTION_HOURS, type IdempotencyClaim, IdempotencyKeys } from "../idempotency/idempotency.js"

interface KeyRow {
  readonly fingerprint: string
  readonly status_code: number | null
  readonly response_headers: Readonly<Record<string, string>> | string | null
  readonly response_body: string | null
  readonly committed: boolean
  readonly committed_resource: string | null
  readonly committed_id: string | null
}

/** A claim that found the row gone (its request failed and released it) tries again; past this, the caller hears "in use". */
const CLAIM_ATTEMPTS = 3

/**
 * Idempotency keys in `idempotency_keys`. A claim is one upsert: a new key, an expired one,
 * or one whose request was abandoned before its write committed (lease over, same request) is taken; any other
 * existing row is read back and says replay, reused or in use. Concurrent claims of one
 * key serialise on its primary key, so exactly one of them runs the request.
 *
 * Kept bodies are sealed with the store's key (`SecretBox`), bound to the tenant and key: an
 * answer may carry a secret shown once (a webhook endpoint's signing secret). After a key
 * rotation, keep `ERP_SECRET_KEY_PREVIOUS` for a day, the time kept answers live.
 */
export const layerIdempotencyKeysSql = Layer.effect(
  IdempotencyKeys,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const box = yield* SecretBox
    const context = (tenantId: string, key: string) => `idempotency_keys.response_body:${tenantId}:${key}`
    const lease = `${IDEMPOTENCY_LEASE_SECONDS} seconds`
    const retention = `${IDEMPOTENCY_RETENTION_HOURS} hours`

    const take = (tenantId: string, key: string, fingerprint: string) =>
      sql<{ taken: number }>`INSERT INTO idempotency_keys AS k (tenant_id, key, fingerprint, locked_until, expires_at)
        VALUES (${tenantId}::uuid, ${key}, ${fingerprint}, now() + ${lease}::interval, now() + ${retention}::interval)
        ON CONFLICT (tenant_id, key) DO UPDATE SET fingerprint = excluded.fingerprint, status_code = NULL, response_headers = NULL,
          response_body = NULL, locked_until = excluded.locked_until, created_at = now(), expires_at = excluded.expires_at,
          committed_at = NULL, committed_resource = NULL, committed_id = NULL
        WHERE k.expires_at <= now() OR (k.status_code IS NULL AND k.committed_at IS NULL AND k.locked_until <= now() AND k.fingerprint = excluded.fingerprint)
        RETURNING 1 AS taken`.pipe(Effect.map((rows) => rows.length > 0))

    const existing = (tenantId: string, key: string) =>
      sql<KeyRow>`SELECT fingerprint, status_code, response_headers, response_body, committed_at IS NOT NULL AS committed, committed_resource, committed_id FROM idempotency_keys
        WHERE tenant_id = ${tenantId}::uuid AND key = ${key} AND expires_at > now()`.pipe(Effect.map((rows) => rows[0]))

    const verdict = (row: KeyRow, tenantId: string, key: string, fingerprint: string): Effect.Effect<IdempotencyClaim, SecretUnreadable> => {
      if (row.fingerprint !== fingerprint) return Effect.succeed({ kind: "reused" })
      const status = row.status_code
      if (status === null && row.committed) {
        const record = row.committed_resource !== null && row.committed_id !== null ? { resource: row.committed_resource, id: row.committed_id } : undefined
        return Effect.succeed({ kind: "committed", record })
      }
      if (status === null) return Effect.succeed({ kind: "in_use" })
      const headers = typeof row.response_headers === "string" ? JSON.parse(row.response_headers) as Record<string, string> : row.response_headers ?? {}
      const body = row.response_body === null ? Effect.succeed(null) : box.open(row.response_body, context(tenantId, key))
      return Effect.map(body, (opened) => ({ kind: "replay", response: { status, headers, body: opened } }))
    }

    const claim = (tenantId: string, key: string, fingerprint: string): Effect.Effect<IdempotencyClaim> =>
      Effect.gen(function* () {
        for (let attempt = 0; attempt < CLAIM_ATTEMPTS; attempt++) {
          if (yield* take(tenantId, key, fingerprint)) return { kind: "claimed" } as const
          const row = yield* existing(tenantId, key)
          if (row) return yield* verdict(row, tenantId, key, fingerprint)
        }
        return { kind: "in_use" } as const
      }).pipe(Effect.orDie, Effect.withSpan("IdempotencyKeys.claim"))

    return IdempotencyKeys.of({
      claim,
      complete: (tenantId, key, fingerprint, response) =>
        sql`UPDATE idempotency_keys SET status_code = ${response.status}, response_headers = ${JSON.stringify(response.headers)}::jsonb,
            response_body = ${response.body === null ? null : box.seal(response.body, context(tenantId, key))}, locked_until = now()
          WHERE tenant_id = ${tenantId}::uuid AND key = ${key} AND fingerprint = ${fingerprint}`.pipe(Effect.asVoid, Effect.orDie),
      release: (tenantId, key, fingerprint) =>
        sql`DELETE FROM idempotency_keys WHERE tenant_id = ${tenantId}::uuid AND key = ${key} AND fingerprint = ${fingerprint}
          AND status_code IS NULL AND committed_at IS NULL`.pipe(Effect.asVoid, Effect.orDie)
    })
  })
)

/** Slices, as for events: a store that was off for days never runs one long statement. */
const SLICE = 5_000

/** Deletes expired idempotency keys (a claim already treats them as absent); returns how many went. */
export const pruneIdempotencyKeys = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  let total = 0
  for (;;) {
    const rows = yield* sql<{ count: number }>`WITH old AS (
        SELECT tenant_id, key FROM idempotency_keys WHERE expires_at <= now() LIMIT ${SLICE})
      , gone AS (DELETE FROM idempotency_keys k USING old WHERE k.tenant_id = old.tenant_id AND k.key = old.key RETURNING 1)
      SELECT count(*)::int AS count FROM gone`
    total += rows[0].count
    if (rows[0].count < SLICE) return total
  }
}).pipe(Effect.orDie, Effect.withSpan("pruneIdempotencyKeys"))
