import { countries, defineResource, type Draft, embedMany, embedOne, id, products, text, timestamps } from "@erp/core"
import { Effect, Schema } from "effect"
import { describe, expect, it } from "vitest"

/**
 * A declaration names its fields, states and filters as types: each `@ts-expect-error` below is a
 * misspelt name that must not compile (tsconfig.test.json type-checks this file; an unused
 * directive is an error). The calls run too, so every rejected declaration is also shown to
 * be otherwise valid.
 */

const fields = {
  id: id(),
  title: text(100, { required: true }),
  status: text(20, { nullable: true }),
  record_number: text(20, { nullable: true }),
  country_id: text(36, { nullable: true }),
  deleted_by_user_id: text(36, { nullable: true }),
  ...timestamps()
}

const base = {
  name: "typed-notes",
  singular: "typed-note",
  title: "Typed note",
  description: "Declared only to check its names at compile time.",
  notFoundCode: "TYPED_NOTE_NOT_FOUND",
  table: "typed_notes",
  fields
} as const

const status = {
  field: "status",
  initial: "open",
  states: { open: { editable: "all" }, closed: { editable: ["title"] } },
  transitions: { open: ["closed"] }
} as const

describe("a declaration's names", () => {
  it("compiles with the declared names", () => {
    const notes = defineResource({
      ...base,
      defaultSort: { field: "created_at", order: "asc" },
      numbering: { field: "record_number" },
      stamps: { deleted: "deleted_by_user_id" },
      requiredFilters: ["country_id"],
      status: { ...status, derive: (draft) => (draft.values.title === "" ? "closed" : "open") },
      rules: (draft) => Effect.succeed({ ...draft, values: { ...draft.values, title: String(draft.input.title ?? draft.current?.title) } }),
      compute: (draft) => ({ values: { record_number: draft.values.record_number } })
    })
    expect(notes.status?.field).toBe("status")
  })

  it("refuses a misspelt status field", () => {
    // @ts-expect-error `state` is not a field
    expect(() => defineResource({ ...base, defaultSort: { field: "created_at", order: "asc" }, status: { ...status, field: "state" } })).not.toThrow()
  })

  it("refuses a misspelt editable name", () => {
    expect(() =>
      defineResource({
        ...base,
        defaultSort: { field: "created_at", order: "asc" },
        // @ts-expect-error `titel` is not a field
        status: { ...status, states: { open: { editable: "all" }, closed: { editable: ["titel"] } } }
      })
    ).not.toThrow()
  })

  it("refuses a transition to an undeclared state", () => {
    expect(() =>
      defineResource({
        ...base,
        defaultSort: { field: "created_at", order: "asc" },
        // @ts-expect-error `done` is not one of the states
        status: { ...status, transitions: { open: ["done"] } }
      })
    ).not.toThrow()
  })

  it("refuses a misspelt numbering field", () => {
    // @ts-expect-error `number` is not a field
    expect(() => defineResource({ ...base, defaultSort: { field: "created_at", order: "asc" }, numbering: { field: "number" } })).not.toThrow()
  })

  it("refuses a misspelt sort field", () => {
    // @ts-expect-error `createdAt` is not a field
    expect(() => defineResource({ ...base, defaultSort: { field: "createdAt", order: "asc" } })).not.toThrow()
  })

  it("refuses misspelt stamps and required filters", () => {
    // @ts-expect-error `deleted_by` is not a field
    expect(() => defineResource({ ...base, defaultSort: { field: "created_at", order: "asc" }, stamps: { deleted: "deleted_by" } })).not.toThrow()
    // @ts-expect-error `country` is neither a field nor a declared filter
    expect(() => defineResource({ ...base, defaultSort: { field: "created_at", order: "asc" }, requiredFilters: ["country"] })).not.toThrow()
  })

  it("refuses an expansion of a field it does not have", () => {
    // @ts-expect-error `contry` is not a field (and the compiler refuses it too: it is no embed)
    expect(() => defineResource({ ...base, defaultSort: { field: "created_at", order: "asc" }, expandable: ["contry"] })).toThrow(/expandable "contry"/)
  })

  it("refuses a misspelt key of a draft", () => {
    const rules = (draft: Draft<typeof fields>) => {
      // @ts-expect-error `titel` is not a field
      const misspelt = draft.values.titel
      // @ts-expect-error `titel` is not a field
      const sent = draft.input.titel
      // @ts-expect-error `titel` is not a field
      const before = draft.current?.titel
      return [misspelt, sent, before]
    }
    expect(rules({ operation: "create", current: undefined, input: {}, values: {}, children: {} })).toEqual([undefined, undefined, undefined])
    expect(() =>
      defineResource({
        ...base,
        defaultSort: { field: "created_at", order: "asc" },
        // @ts-expect-error `titel` is not a field of the draft a hook is given
        afterWriteApplies: (_operation, draft) => draft.values.titel !== undefined
      })
    ).not.toThrow()
  })

  it("refuses an embed's pick that the other resource does not answer", () => {
    embedOne({ key: "country_id", resource: () => countries, output: Schema.String, pick: "iso2" })
    // @ts-expect-error countries answer `iso2`, not `iso_2`
    embedOne({ key: "country_id", resource: () => countries, output: Schema.String, pick: "iso_2" })
    // @ts-expect-error products answer `name`, not `nome`
    expect(embedMany({ foreignKey: "product_id", resource: () => products, output: Schema.String, pick: ["id", "nome"] }).embed?.kind).toBe("many")
  })
})
