import createFetchClient, { type Client, type ClientPathsWithMethod, type FetchResponse, type HeadersOptions, type MaybeOptionalInit } from "openapi-fetch"
import { ErpApiError } from "./errors.js"
import type { paths } from "./generated/api.js"
import { type Fetch, retrying } from "./retry.js"

/** The `api-version` the types of this package were generated from. */
export const API_VERSION = "v1"

export interface ErpClientOptions {
  /** Where the API is: `https://erp.example.com`, or the base path an app mounts it under (`https://app.example.com/erp`). */
  readonly baseUrl: string
  /** An API key (`sk_…`) or an OAuth access token, sent as `Authorization: Bearer <token>`. */
  readonly token: string
  /** The `fetch` to call (default: the global one): a proxy agent, a test double, an instrumented fetch. */
  readonly fetch?: Fetch
  /** The `api-version` header of every request (default `v1`, the version of these types). */
  readonly apiVersion?: string
  /** Retries of a 429 or 503 after the first attempt (default 2; 0 turns retrying off). */
  readonly retries?: number
  /** The longest wait before a retry, in seconds (default 30): an answer asking for longer is thrown at once. */
  readonly maxRetryWaitSeconds?: number
  /** Headers for every request besides the credential's (`X-Tenant-Id` with a user's token). */
  readonly headers?: Readonly<Record<string, string>>
}

type Paths = Client<paths>
type Media = `${string}/${string}`
type Method = "get" | "post" | "patch" | "delete"

/** The options a call takes: optional when the operation needs no parameter or body. */
type InitParam<Init> = {} extends Init ? [init?: Init] : [init: Init]

/** What a successful call of `Operation` answers: the decoded JSON body, or `undefined` for a 204. */
export type ResponseData<Operation extends Record<string | number, unknown>, Init = {}> = FetchResponse<Operation, Init, Media> extends infer Response
  ? Response extends { readonly error?: never; readonly data: infer Data } ? [Data] extends [never] ? undefined : Data : never
  : never

/** The operation of a path and method (the document's `paths` type marks a method a path lacks as `never`). */
type Operation<Path extends keyof paths, M extends Method> = Extract<paths[Path][M], Record<string | number, unknown>>

/**
 * A typed method: the path is one of the API's, its parameters and body are the operation's,
 * and the promise resolves with the answer's data or rejects with `ErpApiError`.
 */
export type DataMethod<M extends Method> = <Path extends ClientPathsWithMethod<Paths, M>, Init extends MaybeOptionalInit<paths[Path], M>>(
  path: Path,
  ...init: InitParam<Init>
) => Promise<ResponseData<Operation<Path, M>, Init>>

type GetPath = ClientPathsWithMethod<Paths, "get">
type GetData<Path extends GetPath> = ResponseData<Operation<Path, "get">>

/** The paths whose GET answers a page: `{ data: [...], pagination: { next_cursor, has_next_page } }`. */
export type ListPath = {
  [Path in GetPath]: GetData<Path> extends { readonly data: ReadonlyArray<unknown>; readonly pagination: { readonly next_cursor: string | null; readonly has_next_page: boolean } } ? Path : never
}[GetPath]

/** The record type a list path's pages hold. */
export type ListItem<Path extends ListPath> = GetData<Path> extends { readonly data: ReadonlyArray<infer Item> } ? Item : never

type ListParameters<Path extends ListPath> = paths[Path]["get"]["parameters"]

/** What `paginate` takes: the list's query (filters, sort, `limit`) and path parameters, as the operation declares them. */
export type PaginateOptions<Path extends ListPath> = Pick<ListParameters<Path>, "query" | "path"> & {
  readonly headers?: HeadersOptions
  readonly signal?: AbortSignal
}

export interface ErpClient {
  /** `GET` a path: the record or page it answers. */
  readonly GET: DataMethod<"get">
  /** `POST` to a path (a create or an action): what it answers. */
  readonly POST: DataMethod<"post">
  /** `PATCH` a record: the updated record. */
  readonly PATCH: DataMethod<"patch">
  /** `DELETE` a record: `undefined` (204). */
  readonly DELETE: DataMethod<"delete">
  /**
   * Every record of a list, page after page: each page's `pagination.next_cursor` is sent as
   * `cursor` with the same query until `has_next_page` is false. Pages are fetched as the
   * iteration reaches them, `limit` records at a time (the query's `limit`, else the API's default).
   */
  paginate<Path extends ListPath>(path: Path, ...options: InitParam<PaginateOptions<Path>>): AsyncIterableIterator<ListItem<Path>>
  /**
   * The underlying `openapi-fetch` client with the same credential, version and retries: it
   * throws nothing and answers `{ data, error, response }`, for the response's headers
   * (`ETag`, `RateLimit-*`) or status.
   */
  readonly raw: Client<paths, Media>
}

/**
 * A client of the API for one credential. Methods resolve with the answer's data and throw
 * `ErpApiError` for any other answer; a 429 or 503 is retried first (`retries`, honouring
 * `Retry-After`), with one `Idempotency-Key` across the attempts of a POST, PATCH or DELETE.
 *
 * ```ts
 * const erp = createClient({ baseUrl: "https://erp.example.com", token: "sk_…" })
 * const product = await erp.POST("/products", { body: { name: "Espresso 1 kg", type: "goods" } })
 * for await (const order of erp.paginate("/sales-orders", { query: { limit: 100 } })) console.log(order.record_number)
 * ```
 */
export const createClient = (options: ErpClientOptions): ErpClient => {
  const policy = {
    retries: Math.max(0, Math.min(10, Math.floor(options.retries ?? 2))),
    maxWaitMs: Math.max(0, (options.maxRetryWaitSeconds ?? 30) * 1000),
    baseDelayMs: 500
  }
  const baseFetch: Fetch = options.fetch ?? ((request) => globalThis.fetch(request))
  const raw = createFetchClient<paths, Media>({
    baseUrl: options.baseUrl,
    fetch: retrying(baseFetch, policy),
    headers: { ...options.headers, authorization: `Bearer ${options.token}`, "api-version": options.apiVersion ?? API_VERSION }
  })

  const call = async (method: Uppercase<Method>, path: string, init: unknown): Promise<unknown> => {
    const { data, error, response } = await (raw.request as (method: string, path: string, init: unknown) => Promise<{ data?: unknown; error?: unknown; response: Response }>)(method, path, init)
    if (response.ok) return data
    throw new ErpApiError(response.status, error, response.headers)
  }
  // Interop point: one untyped call serves the generic method type openapi-fetch derives per path,
  // which no function body can satisfy for every path at once; callers are checked against it.
  const method = <M extends Method>(name: Uppercase<M>): DataMethod<M> => ((path: string, init?: unknown) => call(name, path, init)) as unknown as DataMethod<M>

  async function* paginate(path: string, options: { query?: Record<string, unknown>; path?: Record<string, unknown>; headers?: HeadersOptions; signal?: AbortSignal } = {}) {
    let cursor: unknown = options.query?.cursor
    for (;;) {
      const query = { ...options.query, ...(cursor === undefined ? {} : { cursor }) }
      const page = (await call("GET", path, {
        params: { query, ...(options.path ? { path: options.path } : {}) },
        ...(options.headers ? { headers: options.headers } : {}),
        ...(options.signal ? { signal: options.signal } : {})
      })) as { data: ReadonlyArray<unknown>; pagination: { has_next_page: boolean; next_cursor: string | null } }
      yield* page.data
      if (!page.pagination.has_next_page || !page.pagination.next_cursor) return
      cursor = page.pagination.next_cursor
    }
  }

  return {
    GET: method("GET"),
    POST: method("POST"),
    PATCH: method("PATCH"),
    DELETE: method("DELETE"),
    paginate: paginate as ErpClient["paginate"],
    raw
  }
}
