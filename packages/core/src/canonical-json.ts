/** Quoted keys with their colon, kept for the keys records repeat on every request (bounded: bodies bring keys of their own). */
const quotedKeys = new Map<string, string>()
const QUOTED_KEYS_KEPT = 4_096

const quotedKey = (key: string): string => {
  let quoted = quotedKeys.get(key)
  if (quoted === undefined) {
    quoted = `${JSON.stringify(key)}:`
    if (quotedKeys.size < QUOTED_KEYS_KEPT) quotedKeys.set(key, quoted)
  }
  return quoted
}

/**
 * JSON with object keys sorted, so the same value hashes alike whichever order its keys were
 * written in: a record's ETag (whichever path read it) and an idempotent request's body (whatever
 * the client's key order). Values serialise as `JSON.stringify` would (`toJSON`: dates as ISO
 * text; `undefined` members left out). Built by hand, without intermediate arrays: it runs for
 * every record answered, a sales order's items included.
 */
export const canonicalJson = (value: unknown): string => {
  if (value === null) return "null"
  if (typeof value !== "object") return JSON.stringify(value) ?? "null"
  if (typeof (value as { toJSON?: unknown }).toJSON === "function") return canonicalJson((value as { toJSON: () => unknown }).toJSON())
  if (Array.isArray(value)) {
    let out = "["
    for (let index = 0; index < value.length; index++) out += (index === 0 ? "" : ",") + canonicalJson(value[index] === undefined ? null : value[index])
    return `${out}]`
  }
  const object = value as Record<string, unknown>
  const keys = Object.keys(object).sort()
  let out = "{"
  let first = true
  for (const key of keys) {
    const item = object[key]
    if (item === undefined) continue
    out += (first ? "" : ",") + quotedKey(key) + canonicalJson(item)
    first = false
  }
  return `${out}}`
}
