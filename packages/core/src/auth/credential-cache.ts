import { sha256 } from "../sha256.js"

/**
 * How long an authenticated API key is trusted from memory before the store is asked again.
 * A key revoked (or a tenant's rate limit changed) by another process — the CLI, another
 * host — is refused by this host within this bound; one revoked through this process's
 * own services is refused at once (the cache is cleared).
 */
export const CREDENTIAL_CACHE_TTL_MS = 5_000

/** Memory bound: beyond it the oldest entries go first. */
const MAX_ENTRIES = 10_000

interface Entry<V> {
  readonly value: V
  readonly until: number
  readonly keyId: string
  readonly tenantId: string
}

/**
 * Authenticated credentials by the SHA-256 of their full token: a hit proves the caller sent
 * the very token that was checked against the store moments ago, so no secret comparison is
 * skipped. Only successes are kept; a refused token always goes to the store.
 */
export class CredentialCache<V> {
  private readonly entries = new Map<string, Entry<V>>()

  constructor(
    private readonly ttlMs: number = CREDENTIAL_CACHE_TTL_MS,
    private readonly now: () => number = Date.now
  ) {}

  static tokenHash(token: string): string {
    return sha256(token, "base64")
  }

  get(tokenHash: string): V | undefined {
    const entry = this.entries.get(tokenHash)
    if (!entry) return undefined
    if (entry.until <= this.now()) {
      this.entries.delete(tokenHash)
      return undefined
    }
    return entry.value
  }

  set(tokenHash: string, value: V, owner: { readonly keyId: string; readonly tenantId: string }): void {
    if (this.ttlMs <= 0) return
    this.entries.delete(tokenHash)
    if (this.entries.size >= MAX_ENTRIES) {
      const oldest = this.entries.keys().next()
      if (!oldest.done) this.entries.delete(oldest.value)
    }
    this.entries.set(tokenHash, { value, until: this.now() + this.ttlMs, ...owner })
  }

  /** Forgets one key (revoked) or every key of a tenant (its limits changed). */
  forget(owner: { readonly keyId?: string; readonly tenantId?: string }): void {
    for (const [hash, entry] of this.entries) {
      if (entry.keyId === owner.keyId || entry.tenantId === owner.tenantId) this.entries.delete(hash)
    }
  }

  clear(): void {
    this.entries.clear()
  }
}

/**
 * When each key's `last_used_at` was last written by this process: at most once a minute per
 * key, so a read does not turn into a write.
 */
export class LastUseThrottle {
  private readonly written = new Map<string, number>()

  constructor(
    private readonly intervalMs: number = 60_000,
    private readonly now: () => number = Date.now
  ) {}

  /** True when the key's use should be written now (and notes that it is). */
  due(keyId: string): boolean {
    const at = this.now()
    const last = this.written.get(keyId)
    if (last !== undefined && at - last < this.intervalMs) return false
    if (this.written.size >= MAX_ENTRIES) this.written.clear()
    this.written.set(keyId, at)
    return true
  }
}
