import { Schema } from "effect"

/** The list envelope (spec "Pagination response"), shared by every list. */
export const Pagination = Schema.Struct({
  limit: Schema.Int,
  has_next_page: Schema.Boolean,
  has_previous_page: Schema.Boolean,
  current_query_cursor: Schema.NullOr(Schema.String),
  current_page_cursor: Schema.NullOr(Schema.String),
  next_cursor: Schema.NullOr(Schema.String),
  previous_cursor: Schema.NullOr(Schema.String)
}).annotate({ identifier: "Pagination" })

export const PageMeta = Schema.Struct({
  filters: Schema.Record(Schema.String, Schema.Unknown),
  search: Schema.NullOr(Schema.String),
  sort: Schema.Struct({ field: Schema.String, order: Schema.Literals(["asc", "desc"]) })
}).annotate({ identifier: "PageMeta" })

export const pageOf = <S extends Schema.Top>(record: S, identifier: string) =>
  Schema.Struct({ data: Schema.Array(record), pagination: Pagination, meta: PageMeta }).annotate({ identifier })

export interface Page<A = unknown> {
  readonly data: ReadonlyArray<A>
  readonly pagination: typeof Pagination.Type
  readonly meta: typeof PageMeta.Type
}

/**
 * A page whose records are JSON text already (built by the store) as the envelope's two ends:
 * what goes before the first record and after the last, the records joined by commas between.
 * Each record is written as the store built it, never parsed and encoded again.
 */
export const pageEnvelope = (page: Page<string>): readonly [head: string, tail: string] => [
  '{"data":[',
  `],"pagination":${JSON.stringify(page.pagination)},"meta":${JSON.stringify(page.meta)}}`
]

/** A page of JSON-text records as one JSON text (`pageEnvelope` around the records). */
export const pageText = (page: Page<string>): string => {
  const [head, tail] = pageEnvelope(page)
  return `${head}${page.data.join(",")}${tail}`
}
