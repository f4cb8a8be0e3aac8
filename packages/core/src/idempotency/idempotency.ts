import { Context, type Effect } from "effect"

/** How long the first answer to a key is kept (Stripe keeps 24 hours too). */
export const IDEMPOTENCY_RETENTION_HOURS = 24

/**
 * How long a request holds its key while it runs. Past it (the host died mid-request)
 * a retry with the same body may take the key over and run the request again.
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
 * Idempotency keys per tenant, in the store so that a retry reaching another host finds
 * the first answer. `fingerprint` identifies the request (a hash of method, path and body).
 */
export class IdempotencyKeys extends Context.Service<IdempotencyKeys, {
  readonly claim: (tenantId: string, key: string, fingerprint: string) => Effect.Effect<IdempotencyClaim>
  /** Keeps the answer of a claimed key for replay. */
  readonly complete: (tenantId: string, key: string, fingerprint: string, response: StoredResponse) => Effect.Effect<void>
  /** Gives a claimed key up (the request failed in a way a retry may fix): the next try runs again. */
  readonly release: (tenantId: string, key: string, fingerprint: string) => Effect.Effect<void>
}>()("erp/core/IdempotencyKeys") {}
