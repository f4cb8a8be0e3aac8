import { type AnyField, type AnyResource, type ChildCollection, type Fields, objectKeysOf, type Row } from "@erp/core"

/**
 * How a record of any declared resource travels through files: its CSV columns and
 * the API body it is imported with, read from the declaration alone (no resource is
 * named here).
 */

const entries = (fields: Fields) => Object.entries(fields) as Array<[string, AnyField]>

/** The columns of a resource's CSV: every answered field but its child collections (those get a file of their own). */
export const csvColumns = (fields: Fields): ReadonlyArray<string> =>
  entries(fields).filter(([, field]) => field.output && !field.children).map(([name]) => name)

/** Child collections answered in the record (items, allocations), each exported as a second CSV. */
export const exportedCollections = (resource: AnyResource): ReadonlyArray<ChildCollection> =>
  resource.children.filter((collection) => resource.fields[collection.name]?.output !== undefined)

const isObject = (value: unknown): value is Row => typeof value === "object" && value !== null && !Array.isArray(value)

/** Key fields whose record the answer embeds instead (`city_id` answered as `city: { id, name }`). */
const embeddedKeys = (fields: Fields) =>
  new Map(entries(fields).flatMap(([name, field]) => (field.embed?.kind === "one" ? [[field.embed.key, name] as const] : [])))

/** An answered object (a block with its owner id) cut to the keys its input takes; nulls dropped, as "not sent". */
const sendable = (field: AnyField, value: unknown): unknown => {
  if (!isObject(value)) return value
  // The keys an object input accepts (a country block's), read from its schema.
  const keys = objectKeysOf(field.input!.schema.ast, "encoded")
  if (!keys || keys.length === 0) return value
  return Object.fromEntries(Object.entries(value).filter(([key, inner]) => keys.includes(key) && inner !== null))
}

/**
 * The create (or update) body that reproduces an exported record: the fields clients
 * may send, keys taken back from their embeds, writable children with their own
 * inputs; server-set fields (id, totals, numbers, timestamps) are left to the server.
 */
export const inputOf = (fields: Fields, record: Row, operation: "create" | "update"): Record<string, unknown> => {
  const body: Record<string, unknown> = {}
  const keys = embeddedKeys(fields)
  for (const [name, field] of entries(fields)) {
    if (field.children) {
      const items = record[name]
      if (field.children.writable && Array.isArray(items)) body[name] = items.map((item: Row) => inputOf(field.children!.fields, item, "create"))
      continue
    }
    if (!field.input || (operation === "update" && field.input.on !== "both")) continue
    let value = record[name]
    // An embed answered as an object is sent back through its key.
    if (field.embed?.kind === "one" && (isObject(value) || Array.isArray(value))) continue
    if (value === undefined && keys.has(name)) {
      const embedded = record[keys.get(name)!]
      value = isObject(embedded) && "id" in embedded ? embedded.id : embedded === null ? null : undefined
    }
    if (value === undefined || (value === null && !field.input.nullable)) continue
    body[name] = sendable(field, value)
  }
  return body
}

/** A CSV cell back to the value the record answers, by the field's stored type. */
const parseCell = (field: AnyField | undefined, text: string): unknown => {
  if (text === "") return null
  const type = field?.column?.type
  if (type === "jsonb" || field?.embed || ((text.startsWith("{") || text.startsWith("[")) && type !== "text")) {
    try {
      return JSON.parse(text)
    } catch {
      return text
    }
  }
  if (type === "integer") return /^-?\d+$/.test(text) ? Number(text) : text
  if (type === "boolean") return text === "true" ? true : text === "false" ? false : text
  return text
}

/** A CSV row (cells under `header`) as the record it was exported from. */
export const recordFromCells = (fields: Fields, header: ReadonlyArray<string>, cells: ReadonlyArray<string>): Record<string, unknown> =>
  Object.fromEntries(header.map((name, index) => [name, parseCell(fields[name], cells[index] ?? "")]))
