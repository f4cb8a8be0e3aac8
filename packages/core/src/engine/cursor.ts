import { Context, Result } from "effect"
import { createHash, createHmac, timingSafeEqual } from "node:crypto"
import { type InvalidRequest, invalid } from "../errors.js"

/** Where a page starts: after (or before) the row with this sort value and id; `null` is the query's start. */
export interface CursorPosition {
  readonly direction: "next" | "previous"
  readonly key: readonly [sortValue: unknown, id: string] | null
  /** Hash of filters, sort, search and flags: a cursor only works for the query that made it. */
  readonly query: string
}

/** The key that signs cursors, kept in the store so every host and every restart accepts the same cursors. */
export class CursorSecret extends Context.Service<CursorSecret, { readonly key: Buffer }>()("erp/core/CursorSecret") {}

const b64 = (data: Buffer | string) => Buffer.from(data).toString("base64url")
const sign = (secret: Buffer, body: string) => createHmac("sha256", secret).update(body).digest().subarray(0, 16)

export const encodeCursor = (secret: Buffer, position: CursorPosition): string => {
  const body = b64(JSON.stringify({ d: position.direction === "next" ? "n" : "p", k: position.key, q: position.query }))
  return `${body}.${b64(sign(secret, body))}`
}

const malformed = () => invalid("The cursor is malformed or was altered; take it from a previous response.", "INVALID_CURSOR")

export const decodeCursor = (secret: Buffer, text: string, query: string): Result.Result<CursorPosition, InvalidRequest> => {
  const [body, mac, extra] = text.split(".")
  if (!body || !mac || extra !== undefined) return Result.fail(malformed())
  const expected = sign(secret, body)
  const given = Buffer.from(mac, "base64url")
  // Only the canonical spelling counts: spare bits of the last character must not yield a second valid cursor.
  if (given.toString("base64url") !== mac) return Result.fail(malformed())
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return Result.fail(malformed())
  let payload: { d?: unknown; k?: unknown; q?: unknown }
  try {
    payload = JSON.parse(Buffer.from(body, "base64url").toString("utf8"))
  } catch {
    return Result.fail(malformed())
  }
  if (payload.q !== query) {
    return Result.fail(
      invalid("The cursor belongs to a different query: send the same filters, sort and search as the request that returned it.", "CURSOR_QUERY_MISMATCH")
    )
  }
  const key = payload.k
  const validKey = key === null || (Array.isArray(key) && key.length === 2 && typeof key[1] === "string")
  if ((payload.d !== "n" && payload.d !== "p") || !validKey) return Result.fail(malformed())
  return Result.succeed({
    direction: payload.d === "n" ? "next" : "previous",
    key: key as CursorPosition["key"],
    query
  })
}

/** Stable hash of everything that shapes a query (but not its page size). */
export const hashQuery = (shape: unknown): string =>
  createHash("sha256").update(JSON.stringify(shape)).digest("base64url").slice(0, 22)
