import { describe, expect, it } from "vitest"
import { answerEtag, canonicalJson, recordEtag } from "../src/index.js"

/** The form idempotency fingerprints were made with before: the same bytes keep a retried request's fingerprint across an upgrade. */
const before = (value: unknown): string => {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null"
  if (typeof (value as { toJSON?: unknown }).toJSON === "function") return before((value as { toJSON: () => unknown }).toJSON())
  if (Array.isArray(value)) return `[${value.map(before).join(",")}]`
  const object = value as Record<string, unknown>
  return `{${Object.keys(object).sort().filter((key) => object[key] !== undefined).map((key) => `${JSON.stringify(key)}:${before(object[key])}`).join(",")}}`
}

const order = {
  id: "0b7d2c4e-1f0a-4c3b-9d5e-6a7b8c9d0e1f",
  record_number: 42,
  status: "confirmed",
  total_amount: "157.500000",
  metadata: { "z-key": [1, "two", null, { b: true, a: false }], "ä é": "ünïcödé \"quoted\" \\ \n", "10": "numeric key", "2": "another" },
  items: [{ quantity: "1.000000", product_id: null, unit: undefined }, { quantity: "2.500000", tags: [] }],
  created_at: new Date("2026-11-23T07:30:00.123Z"),
  deleted_at: null,
  gone: undefined
}

describe("canonical JSON", () => {
  it("writes what the previous form wrote, sorted keys at every depth, dates as ISO text, undefined members left out", () => {
    expect(canonicalJson(order)).toBe(before(order))
    expect(canonicalJson(order)).toContain(`"created_at":"2026-11-23T07:30:00.123Z"`)
    expect(canonicalJson(order)).not.toContain("gone")
    expect(canonicalJson([undefined, 1])).toBe("[null,1]")
    expect(canonicalJson("x")).toBe(`"x"`)
  })

  it("is the same for the same value whatever order its keys were written in (an idempotent request's body)", () => {
    const reordered = Object.fromEntries(Object.entries(order).reverse())
    expect(canonicalJson(reordered)).toBe(canonicalJson(order))
  })
})

describe("a record's tag", () => {
  const fields = {} as Parameters<typeof recordEtag>[0]["fields"]
  const withSecret = { secret: { revealed: true } } as unknown as Parameters<typeof recordEtag>[0]["fields"]
  const record = { id: order.id, status: "confirmed", total_amount: "157.500000", metadata: { a: 1 } }

  it("hashes the record's JSON as answered: the same record the same tag, any changed value a new one", () => {
    expect(recordEtag({ fields }, { ...record })).toBe(recordEtag({ fields }, record))
    expect(recordEtag({ fields }, record)).toMatch(/^"[\w-]{32}"$/)
    expect(recordEtag({ fields }, { ...record, status: "cancelled" })).not.toBe(recordEtag({ fields }, record))
    expect(recordEtag({ fields }, { ...record, metadata: { a: 2 } })).not.toBe(recordEtag({ fields }, record))
  })

  it("is the hash of the answer's text, without the fields shown once on create", () => {
    const text = JSON.stringify(record)
    expect(answerEtag({ fields }, record, text)).toBe(recordEtag({ fields }, record))
    const created = { ...record, secret: "sk_shown_once" }
    expect(recordEtag({ fields: withSecret }, created)).toBe(recordEtag({ fields: withSecret }, record))
    expect(answerEtag({ fields: withSecret }, created, JSON.stringify(created))).toBe(recordEtag({ fields }, record))
  })
})
