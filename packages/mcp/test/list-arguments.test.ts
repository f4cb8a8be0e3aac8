import { products } from "@erp/core"
import { toQueryParams } from "@erp/mcp"
import { Option, Result } from "effect"
import { describe, expect, it } from "vitest"
import { describeFilterFields } from "../src/list-arguments.js"

const pairs = (args: Parameters<typeof toQueryParams>[0]) => Result.getOrThrow(toQueryParams(args))
const refusal = (args: Parameters<typeof toQueryParams>[0]) => Option.getOrUndefined(Result.getFailure(toQueryParams(args)))

describe("list tool arguments as query parameters", () => {
  it("passes the common parameters as text, leaving out what was not given", () => {
    expect(pairs({ limit: 5, cursor: "abc", sort: "name:desc", search: "chair", with_deleted: true, include_payload_search: false }))
      .toEqual([["limit", "5"], ["cursor", "abc"], ["sort", "name:desc"], ["search", "chair"], ["with_deleted", "true"], ["include_payload_search", "false"]])
    expect(pairs({})).toEqual([])
  })

  it("sends the JSON filter form as JSON text, whether given as an object or as text", () => {
    const filter = { logic: "or", conditions: [{ f: "name", op: "eq", v: "a" }] }
    expect(pairs({ filter })).toEqual([["filter", JSON.stringify(filter)]])
    expect(pairs({ filter: "{\"f\":\"name\"}" })).toEqual([["filter", "{\"f\":\"name\"}"]])
  })

  it("turns filters into bracket keys: plain values, repeated values and operator objects", () => {
    expect(pairs({
      filters: { name: "Chair", "sale_price[gte]": 10, is_blocked: false, tags: ["a", "b"], created_at: { gte: "2024-01-01", lt: "2025-01-01" } }
    })).toEqual([
      ["name", "Chair"],
      ["sale_price[gte]", "10"],
      ["is_blocked", "false"],
      ["tags", "a"],
      ["tags", "b"],
      ["created_at[gte]", "2024-01-01"],
      ["created_at[lt]", "2025-01-01"]
    ])
  })

  it("refuses a filter key that would pose as a list parameter", () => {
    for (const key of ["limit", "cursor", "filter", "sort[eq]"]) {
      expect(refusal({ filters: { [key]: "1" } })).toMatchObject({ _tag: "InvalidRequest", code: "INVALID_FILTER" })
    }
    expect(refusal({ filters: { "sale_price[gte]": { lt: "1" } } })?.message).toContain("sale_price[gte]")
  })

  it("lists every filterable field of a resource with its type and operators", () => {
    const text = describeFilterFields(products)
    expect(text).toContain("- sale_price (number: eq, neq, gt, gte, lt, lte, is_null, is_not_null)")
    expect(text).toContain("- name (string: eq, neq, contains, not_contains)")
    expect(text.split("\n")).toHaveLength(Object.keys(products.filters).length)
  })
})
