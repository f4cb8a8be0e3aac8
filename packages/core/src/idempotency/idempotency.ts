import { Context, type Effect } from "effect"

/** How long the first answer to a key is kept (Stripe keeps 24 hours too). */
export const IDEMPOTENCY_RETENTION_HOURS = 24

/**
 * How long a request holds its key while it runs. Past it (the host died mid-request)
 * a retry with the same body may take the key over and run the request again, unless the
 * request's write had committed (`IdempotentWrite`).
 */
export const IDEMPOTENCY_LEASE_SECONDS = 300

/** Longest key accepted; Stripe's limit too. */
export const IDEMPOTENCY_KEY_MAX_LENGTH = 255

/** An answer as kept for replay: status, the headers that describe the body, and the body. */
export interface StoredResponse {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: string | null
}

/** What claiming a key found. */
export type IdempotencyClaim =
  /** The key is new (or expired, or abandoned by a host that died): run the request. */
  | { readonly kind: "claimed" }
  /** The same request finished before: answer as it was answered. */
  | { readonly kind: "replay"; readonly response: StoredResponse }
  /** The key was used for another request (method, path or body differ). */
  | { readonly kind: "reused" }
  /** The same request is still running. */
  | { readonly kind: "in_use" }
  /**
   * The same request's write committed, and its answer was never kept (its host stopped between
   * the two): running it again would write twice. `record` names what it wrote first.
   */
  | { readonly kind: "committed"; readonly record: { readonly resource: string; readonly id: string } | undefined }

/**
 * The key a write runs under, set by the transport around a request that carries one: the unit of
 * work marks the key committed in the write's own transaction, so a retry after a crash between
 * the commit and the kept answer is never run again.
 */
export const IdempotentWrite = Context.Reference<{ readonly tenantId: string; readonly key: string; readonly fingerprint: string } | undefined>(
  "erp/core/IdempotentWrite",
  { defaultValue: () => undefined }
)

/**
 * Idempotency keys per tenant, in the store so that a retry reaching another host finds
 * the first answer. `fingerprint` identifies the request (a hash of method, path and body).
 */
export class IdempotencyKeys extends Context.Service<IdempotencyKeys, {
  readonly claim: (tenantId: string, key: string, fingerprint: string) => Effect.Effect<IdempotencyClaim>
  /** Keeps the answer of a claimed key for replay. */
  readonly complete: (tenantId: string, key: string, fingerprint: string, response: StoredResponse) => Effect.Effect<void>
  /** Gives a claimed key up (the request failed in a way a retry may fix): the next try runs again, unless its write committed. */
  readonly release: (tenantId: string, key: string, fingerprint: string) => Effect.Effect<void>
}>()("erp/core/IdempotencyKeys") {}
