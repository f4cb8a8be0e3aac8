import { allResources } from "@erp/core"
import { describe, expect, it } from "vitest"
import { flowChart, stackedChart } from "../src/panel/charts.js"
import { localeFrom, translator } from "../src/panel/i18n.js"
import { grantsFromForm, keyFormProblems, keyStatus } from "../src/panel/keys.js"
import { resourceLabel } from "../src/panel/kit.js"
import { bodyFromForm, formFields, problemsFromEngine } from "../src/panel/record-form.js"

const resource = (name: string) => allResources.find((item) => item.name === name)!

describe("the panel's language", () => {
  it.each([
    [undefined, "en"],
    ["", "en"],
    ["pt-BR,pt;q=0.9,en;q=0.8", "pt-BR"],
    ["pt-PT", "pt-BR"],
    ["en-US,pt;q=0.5", "en"],
    ["fr-FR,pt;q=0.4,en;q=0.3", "pt-BR"],
    ["fr, de", "en"],
    ["en;q=0.1, pt;q=0.2", "pt-BR"],
    ["pt;q=0, en", "en"]
  ])("reads %j as %s", (header, locale) => expect(localeFrom(header)).toBe(locale))
})

describe("API key screens", () => {
  it("calls a key revoked, expired at 00:00 UTC of its date, or active", () => {
    const now = new Date("2026-03-10T12:00:00Z")
    expect(keyStatus({ revoked_at: "2026-01-01T00:00:00Z", expires_at: null }, now)).toBe("revoked")
    expect(keyStatus({ revoked_at: null, expires_at: "2026-03-10" }, now)).toBe("expired")
    expect(keyStatus({ revoked_at: null, expires_at: "2026-03-11" }, now)).toBe("active")
    expect(keyStatus({ revoked_at: null, expires_at: null }, now)).toBe("active")
  })

  it("turns the ticked boxes into one grant per resource, and refuses an empty or past key", () => {
    const form = { "perm.products.read": "on", "perm.products.delete": "on", "perm.*.read": "on", "perm.nonsense.read": "on", "perm.reports.read": "on" }
    expect(grantsFromForm(allResources, form)).toEqual([
      { resource_code: "*", can_read: true, can_create: false, can_update: false, can_delete: false },
      { resource_code: "products", can_read: true, can_create: false, can_update: false, can_delete: true },
      { resource_code: "reports", can_read: true, can_create: false, can_update: false, can_delete: false }
    ])
    const now = new Date("2026-03-10T12:00:00Z")
    expect(keyFormProblems(allResources, { name: " ", expires_at: "2026-03-10" }, now)).toEqual({
      name: "is required",
      permissions: "choose at least one permission",
      expires_at: "must be a future date (YYYY-MM-DD)"
    })
    expect(keyFormProblems(allResources, { name: "ok", expires_at: "2026-02-30", "perm.products.read": "on" }, now)).toEqual({ expires_at: "must be a future date (YYYY-MM-DD)" })
    expect(keyFormProblems(allResources, { name: "ok", expires_at: "2026-03-11", "perm.products.read": "on" }, now)).toEqual({})
  })

  it("names resources for people", () => {
    expect(resourceLabel({ name: "fiscal-rules-br" })).toBe("Fiscal rules (BR)")
    expect(resourceLabel({ name: "webhook-endpoints" })).toBe("Webhook endpoints")
  })
})

describe("forms derived from a declaration", () => {
  it("types each input from the declaration's create schema", () => {
    const fields = Object.fromEntries(formFields(resource("products").write!.createInput).map((field) => [field.name, field]))
    expect(fields.name).toMatchObject({ required: true, nullable: false, input: { kind: "text" } })
    expect(fields.type.input).toEqual({ kind: "choice", options: ["goods", "service"] })
    expect(fields.tags.input).toEqual({ kind: "lines" })
    expect(fields.is_blocked.input).toEqual({ kind: "boolean" })
    expect(fields.metadata.input).toEqual({ kind: "json" })
    expect(fields.sale_price).toMatchObject({ nullable: true, input: { kind: "text" } })
    const plans = Object.fromEntries(formFields(resource("subscription-plans").write!.createInput).map((field) => [field.name, field]))
    expect(plans.trial_days.input).toEqual({ kind: "number", integer: true })
  })

  it("builds the engine's body from the typed values, clearing an emptied field on update only", () => {
    const fields = formFields(resource("subscription-plans").write!.createInput)
    const made = bodyFromForm(fields, { "f.name": "Gold", "f.amount": "10.50", "f.trial_days": "7", "f.is_active": "false", "f.code": "", "f.metadata": "{\"a\":1}" })
    expect(made).toEqual({ body: { name: "Gold", amount: "10.50", trial_days: 7, is_active: false, metadata: { a: 1 } }, problems: {} })
    expect(bodyFromForm(fields, { "f.trial_days": "1.5", "f.metadata": "{" }).problems).toEqual({ trial_days: "must be a whole number", metadata: "must be JSON" })
    expect(bodyFromForm(fields, { "f.code": "" }, { code: "GOLD" }).body).toEqual({ code: null })
    expect(bodyFromForm(fields, { "f.code": "" }, { code: null }).body).toEqual({})
  })

  it("puts a nested field's reason on its top field", () => {
    expect(problemsFromEngine({ "br_data.ncm_code": ["must be 8 digits"], name: ["is required"] })).toEqual({
      br_data: "br_data.ncm_code: must be 8 digits",
      name: "is required"
    })
  })
})

describe("the panel's charts", () => {
  const t = translator("en")
  /** Every number a chart's rectangles and lines are drawn at, and the viewBox they must stay in. */
  const geometry = (svg: string) => {
    const [, , , width, height] = /viewBox="(\d+) (\d+) (\d+) (\d+)"/.exec(svg)!.map(Number)
    const shapes = [...svg.matchAll(/<rect class="([^"]+)" x="([-\d.]+)" y="([-\d.]+)" width="([-\d.]+)" height="([-\d.]+)"/g)]
      .map(([, kind, x, y, w, h]) => ({ kind, x: Number(x), y: Number(y), width: Number(w), height: Number(h) }))
    // Grid lines are rectangles one unit high, centred on their value.
    const lines = shapes.filter((shape) => shape.kind === "grid-line").map((line) => line.y + line.height / 2)
    return { width, height, rects: shapes.filter((shape) => shape.kind !== "grid-line"), lines }
  }

  it("draws money out below the zero line and a negative balance inside the chart", () => {
    const svg = flowChart({ t }, [
      { start: "2026-01-05", in: "100.000000", out: "250.000000", balance: "-150.000000" },
      { start: "2026-01-12", in: "0.000000", out: "0.000000", balance: "-150.000000" },
      { start: "2026-01-19", in: "400.000000", out: "50.000000", balance: "200.000000" }
    ], "flow", "Cash flow").toString()
    expect(svg).toContain('role="img"')
    expect(svg).toContain("<title")
    const { width, height, rects } = geometry(svg)
    const points = /points="([^"]+)"/.exec(svg)![1].split(" ").map((point) => point.split(",").map(Number))
    for (const rect of rects) {
      expect(rect.height).toBeGreaterThanOrEqual(0)
      expect(rect.y).toBeGreaterThanOrEqual(0)
      expect(rect.y + rect.height).toBeLessThanOrEqual(height)
      expect(rect.x + rect.width).toBeLessThanOrEqual(width)
    }
    for (const [x, y] of points) {
      expect(x).toBeLessThanOrEqual(width)
      expect(y).toBeGreaterThanOrEqual(0)
      expect(y).toBeLessThanOrEqual(height)
    }
    // Money in rises to the zero line, money out hangs from it; the negative balance is below it.
    const firstIn = rects.find((rect) => rect.kind === "in")!
    const firstOut = rects.find((rect) => rect.kind === "out")!
    const zero = firstOut.y
    expect(firstIn.y + firstIn.height).toBeCloseTo(zero, 0)
    expect(firstOut.height).toBeCloseTo(firstIn.height * 2.5, 0)
    expect(points[0][1]).toBeGreaterThan(zero)
    expect(points[2][1]).toBeLessThan(zero)
  })

  it("stacks a bucket's parties, a negative amount below zero, and escapes their names", () => {
    const svg = stackedChart([
      { label: "current", amounts: ["100.000000", "50.000000"] },
      { label: "1-30", amounts: ["-30.000000", "0.000000"] }
    ], ["<b>Acme</b>", "Others"], "aging", "Aging", "Open amounts").toString()
    expect(svg).not.toContain("<b>")
    expect(svg).toContain("&lt;b&gt;Acme&lt;/b&gt;")
    const { height, rects, lines } = geometry(svg)
    expect(rects).toHaveLength(4)
    for (const rect of rects) expect(rect.height).toBeGreaterThanOrEqual(0)
    const [acme, others, credit] = rects
    expect(others.y + others.height).toBeCloseTo(acme.y, 0)
    expect(credit.y).toBeCloseTo(acme.y + acme.height, 0)
    expect(credit.y + credit.height).toBeLessThanOrEqual(height)
    expect(lines.some((line) => Math.abs(line - credit.y) < 0.2)).toBe(true)
  })
})
