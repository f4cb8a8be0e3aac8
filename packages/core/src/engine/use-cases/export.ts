import { Effect, Fiber } from "effect"
import { authorize, type Principal } from "../../auth/principal.js"
import type { Forbidden, InvalidRequest } from "../../errors.js"
import { parseListQuery, type QueryParams } from "../list-query.js"
import { CHUNK_TEXT, type PageLines } from "../repository.js"
import { type AnyResource, present, type Row } from "../resource.js"
import { listShape, requireFilters } from "./checks.js"
import type { EngineContext } from "./context.js"

/** A walk over every record a list query matches, in pages of `size`, each record as an `A`; answers how many. */
export type Walk<A> = <E>(
  resource: AnyResource,
  principal: Principal,
  params: QueryParams,
  size: number,
  onPage: (records: ReadonlyArray<A>) => Effect.Effect<void, E>,
  /** Told first how many records the walk will meet (one count query), for a progress bar. */
  onTotal?: (total: number) => void
) => Effect.Effect<number, InvalidRequest | Forbidden | E>

/** `Walk` with each page as NDJSON lines in chunks (`PageLines`: joined by line breaks, none after the last) and its number of records. */
export type LinesWalk = <E>(
  resource: AnyResource,
  principal: Principal,
  params: QueryParams,
  size: number,
  onPage: (chunks: ReadonlyArray<string>, count: number) => Effect.Effect<void, E>,
  onTotal?: (total: number) => void
) => Effect.Effect<number, InvalidRequest | Forbidden | E>

/** Exports: every record a list query matches, page after page, with the list's checks; the next pages read while one is written. */
export const makeExports = ({ repo, secret }: EngineContext) => {
  /** What every walk checks first: the caller's right to read, the filters, the query (the caller's visibility included). */
  const walkQuery = (resource: AnyResource, principal: Principal, params: QueryParams) =>
    Effect.gen(function* () {
      yield* authorize(principal, resource.permission, "read", resource.adminOnly)
      yield* requireFilters(resource, params)
      const scope = resource.visibility?.list ? resource.visibility.filter(principal) : undefined
      return yield* Effect.fromResult(parseListQuery(listShape(resource), params, secret, scope))
    })

  /** Pages of `size` one after another from the keyset, the next read while this one is handed on. */
  const walkPages = <T extends { readonly key: readonly [unknown, string] }, E>(
    fetchPage: (key: readonly [unknown, string] | null) => Effect.Effect<ReadonlyArray<T>>,
    size: number,
    onPage: (rows: ReadonlyArray<T>) => Effect.Effect<void, E>
  ) =>
    Effect.gen(function* () {
      let rows = yield* fetchPage(null)
      let count = 0
      while (true) {
        // The next page is read while this one is written: the store and the writer work at once.
        const next = rows.length < size ? undefined : yield* Effect.forkChild(fetchPage(rows[rows.length - 1].key))
        if (rows.length > 0) yield* onPage(rows).pipe(Effect.onError(() => next ? Fiber.interrupt(next) : Effect.void))
        count += rows.length
        if (!next) return count
        rows = yield* Fiber.join(next)
      }
    })

  const walk = <E>(resource: AnyResource, principal: Principal, params: QueryParams, size: number, onPage: (records: ReadonlyArray<Row>) => Effect.Effect<void, E>, onTotal?: (total: number) => void) =>
    Effect.gen(function* () {
      const query = yield* walkQuery(resource, principal, params)
      if (onTotal) onTotal(yield* repo.count(resource, principal.tenantId, query))
      return yield* walkPages((key) => repo.page(resource, principal.tenantId, query, { direction: "next", key, take: size }), size,
        (rows) => onPage(rows.map((row) => present(resource, row.record))))
    })

  /** Answers joined into chunks of about `CHUNK_TEXT` characters (`PageLines`). */
  const chunked = (answers: ReadonlyArray<string>): ReadonlyArray<string> => {
    const chunks: Array<string> = []
    let start = 0
    let size = 0
    answers.forEach((answer, index) => {
      size += answer.length + 1
      if (size < CHUNK_TEXT && index < answers.length - 1) return
      chunks.push(answers.slice(start, index + 1).join("\n"))
      start = index + 1
      size = 0
    })
    return chunks
  }

  /** Ranges of a walk built at once, ahead of the one being written. */
  const RANGES_AHEAD = 2

  /**
   * About how much text a range holds once the first has shown how large the records are
   * (within the caller's most). Each range costs the store two statements to plan and run, so
   * ranges are large; the host holds three at a time, in chunks that die young, so its peak
   * memory barely follows their size (bench/README.md).
   */
  const RANGE_TEXT = 2 * 1024 * 1024
  const FIRST_RANGE = 100

  /**
   * Building answers is the costliest part of an export, and the store's: where the sort bounds
   * ranges (not a nullable field), the next ranges are found by their keys alone and built on
   * other connections while this one is written, in order. Each range comes as a few chunks of
   * lines the store joined (`PageLines`), so the host handles a few strings per range, not one
   * per record.
   */
  const walkAnswers = <E>(resource: AnyResource, principal: Principal, params: QueryParams, most: number, onPage: (chunks: ReadonlyArray<string>, count: number) => Effect.Effect<void, E>, onTotal?: (total: number) => void) =>
    Effect.gen(function* () {
      const query = yield* walkQuery(resource, principal, params)
      const tenantId = principal.tenantId
      if (onTotal) onTotal(yield* repo.count(resource, tenantId, query))
      if (query.sort.field !== "id" && resource.filters[query.sort.field]?.nullable) {
        // No range ends on a nullable key: pages one after another, each positioned by the last one's key.
        return yield* walkPages((key) => repo.pageAnswers(resource, tenantId, query, { direction: "next", key, take: most }), most,
          (rows) => onPage(chunked(rows.map((row) => row.answer)), rows.length))
      }
      return yield* Effect.scoped(Effect.gen(function* () {
        const pending: Array<Fiber.Fiber<PageLines>> = []
        let after: readonly [unknown, string] | null = null
        let ended = false
        let count = 0
        // The first ranges are few records, whose text sizes the next.
        let size = Math.min(most, FIRST_RANGE)
        while (true) {
          while (!ended && pending.length < RANGES_AHEAD) {
            // (after, end]: a range the next cannot overlap, whatever is written meanwhile.
            const end: readonly [unknown, string] | null = yield* repo.rangeEnd(resource, tenantId, query, after, size)
            pending.push(yield* Effect.forkScoped(repo.pageLines(resource, tenantId, query, { direction: "next", key: after, take: size, ...(end ? { until: end } : {}) })))
            if (end) after = end
            else ended = true
          }
          const next = pending.shift()
          if (!next) return count
          const range = yield* Fiber.join(next)
          if (range.count > 0) {
            // Growing by at most four times a range: a short export is not two large ranges one after the other.
            const text = range.chunks.reduce((sum, chunk) => sum + chunk.length, 0)
            size = Math.max(1, Math.min(most, size * 4, Math.round((RANGE_TEXT * range.count) / text)))
            yield* onPage(range.chunks, range.count)
          }
          count += range.count
        }
      }))
    })

  return { walk, walkAnswers }
}
