import type { Effect } from "effect"

/**
 * What the API's handlers read of a request (`apiRequestOf` makes one of the platform's): the
 * body read with a bound, and nothing else of the platform's request.
 */
export interface ApiRequest {
  readonly method: string
  /** Path and query, as the request line gave them. */
  readonly url: string
  /** Lower-case names; a header sent twice is one value (Node joins them). */
  readonly headers: Readonly<Record<string, string | undefined>>
  /**
   * The body's bytes, `undefined` when they are over `maxBytes` (declared, or counted as they
   * arrive; the rest is read and thrown away up to `DRAIN_LIMIT_BYTES`). Read once.
   */
  readonly body: (maxBytes: number) => Effect.Effect<Buffer | undefined, unknown>
}
