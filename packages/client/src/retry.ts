/** A `fetch` as the client calls it: one `Request` in, its `Response` out. */
export type Fetch = (request: Request) => Promise<Response>

export interface RetryPolicy {
  /** Retries after the first attempt (0 turns retrying off). */
  readonly retries: number
  /** The longest wait before a retry, in milliseconds: a `Retry-After` beyond it is not waited for. */
  readonly maxWaitMs: number
  /** The first backoff when an answer has no `Retry-After`, in milliseconds; it doubles each retry. */
  readonly baseDelayMs: number
}

/** The answers a retry may change: too many requests, and a host or store busy for a moment. */
const RETRIED_STATUSES: ReadonlySet<number> = new Set([429, 503])

/** Methods that change nothing: they need no idempotency key to be retried. */
const SAFE_METHODS: ReadonlySet<string> = new Set(["GET", "HEAD", "OPTIONS"])

/**
 * The wait a `Retry-After` value asks for, in milliseconds: delay-seconds or an HTTP date
 * (RFC 9110 §10.2.3). `undefined` when the header is absent or neither.
 */
export const retryAfterMs = (value: string | null, now = Date.now()): number | undefined => {
  if (value === null) return undefined
  const trimmed = value.trim()
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000
  const date = Date.parse(trimmed)
  return Number.isNaN(date) ? undefined : Math.max(0, date - now)
}

/**
 * How long to wait before retry number `retry` (0 for the first), or `undefined` to stop:
 * the answer's `Retry-After` when it has one (not waited for past `maxWaitMs`), else an
 * exponential backoff with jitter (half the step plus a random part of the other half).
 */
export const retryDelay = (response: Response, retry: number, policy: RetryPolicy, random = Math.random): number | undefined => {
  const asked = retryAfterMs(response.headers.get("retry-after"))
  if (asked !== undefined) return asked <= policy.maxWaitMs ? asked : undefined
  const step = Math.min(policy.maxWaitMs, policy.baseDelayMs * 2 ** retry)
  return step / 2 + random() * (step / 2)
}

const sleep = (ms: number, signal: AbortSignal | null) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason)
    const onAbort = () => {
      clearTimeout(timer)
      reject(signal!.reason)
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort)
      resolve()
    }, ms)
    signal?.addEventListener("abort", onAbort, { once: true })
  })

/**
 * `fetch` with retries of 429 and 503. A request that may change something (POST, PATCH,
 * DELETE) gets an `Idempotency-Key` first, a random UUID unless the caller set one, so every
 * attempt carries the same key and the API runs it at most once. Retries stop after
 * `policy.retries`, or at once when the answer asks for a longer wait than `policy.maxWaitMs`;
 * the last answer is returned as it is. The request's abort signal cuts a wait short.
 */
export const retrying = (fetch: Fetch, policy: RetryPolicy): Fetch => async (input) => {
  if (policy.retries <= 0) return fetch(input)
  let request = input
  if (!SAFE_METHODS.has(request.method) && !request.headers.has("idempotency-key")) {
    const headers = new Headers(request.headers)
    headers.set("idempotency-key", crypto.randomUUID())
    request = new Request(request, { headers })
  }
  for (let retry = 0; ; retry++) {
    const last = retry >= policy.retries
    // Every attempt but the last sends a copy, so the body is still there for the next one.
    const response = await fetch(last ? request : request.clone())
    if (last || !RETRIED_STATUSES.has(response.status)) return response
    const wait = retryDelay(response, retry, policy)
    if (wait === undefined) return response
    await response.body?.cancel()
    await sleep(wait, request.signal)
  }
}
