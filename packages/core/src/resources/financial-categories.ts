import { Effect, Option } from "effect"
import { id, timestamps } from "../engine/field.js"
import type { ResourceRef } from "../engine/field.js"
import { type ActionStore, type AnyResource, defineResource, type RecordType, type Row } from "../engine/resource.js"
import { unprocessable } from "../errors.js"
import { choice, flag, integer, metadata, reference, text } from "./common.js"

/** How deep the tree goes (Conta Azul and Omie use two or three levels; QuickBooks five). */
export const MAX_CATEGORY_DEPTH = 5

const refuse = (field: string, reason: string, code = "VALIDATION_FAILED") =>
  Effect.fail(unprocessable(`The category cannot be saved: ${field} ${reason}`, { [field]: [reason] }, code))

/**
 * The tree stays a tree: walking up from the new parent never meets the category
 * itself, ends within `MAX_CATEGORY_DEPTH` levels (counting the category's own
 * subtree), and every category has its parent's type.
 */
const checkTree = (store: ActionStore, categories: AnyResource, id: string, values: Row) =>
  Effect.gen(function* () {
    // The new parent's ancestors, nearest first (the write is already applied, so a cycle would come back to `id`).
    const ancestors: Array<Row> = []
    let parentId = values.parent_id as string | null | undefined
    while (parentId !== null && parentId !== undefined && ancestors.length <= MAX_CATEGORY_DEPTH) {
      if (parentId === id) return yield* refuse("parent_id", "would make the category its own ancestor", "CATEGORY_CYCLE")
      const parent = Option.getOrUndefined(yield* store.findById(categories, parentId, { withDeleted: true }))
      if (!parent) break
      ancestors.push(parent)
      parentId = parent.parent_id as string | null
    }
    const parent = ancestors[0]
    if (parent && parent.type !== values.type) return yield* refuse("parent_id", `is a category of type ${String(parent.type)}; this one is ${String(values.type)}`)
    const below = ancestors.length > 0 ? yield* subtreeDepth(store, categories, id) : 0
    if (ancestors.length + 1 + below > MAX_CATEGORY_DEPTH) {
      return yield* refuse("parent_id", `would make the tree deeper than ${MAX_CATEGORY_DEPTH} levels`, "CATEGORY_TOO_DEEP")
    }
  })

/** Levels below a category (0 for a leaf), walking its subtree level by level; bounded by the maximum depth. */
const subtreeDepth = (store: ActionStore, categories: AnyResource, id: string): Effect.Effect<number> =>
  Effect.gen(function* () {
    let level: ReadonlyArray<string> = [id]
    let depth = 0
    while (level.length > 0 && depth <= MAX_CATEGORY_DEPTH) {
      const next: Array<string> = []
      for (const parent of level) {
        const children = yield* store.findMany(categories, { kind: "condition", field: "parent_id", op: "eq", value: parent }, { limit: 1000 })
        next.push(...children.map((row) => String(row.id)))
      }
      if (next.length === 0) break
      level = next
      depth++
    }
    return depth
  })

const hasChildren = (store: ActionStore, categories: AnyResource, id: string) =>
  Effect.map(store.findOne(categories, { kind: "condition", field: "parent_id", op: "eq", value: id }), Option.isSome)

export const financialCategories = defineResource({
  name: "financial-categories",
  singular: "financial-category",
  title: "Financial category",
  description: "The chart of income and expense categories, as a tree (parent_id), for payables, receivables and purchase invoices.",
  notFoundCode: "FINANCIAL_CATEGORY_NOT_FOUND",
  events: true,
  table: "financial_categories",
  fields: {
    id: id(),
    name: text(120, { required: true, filter: { sortable: true } }),
    type: choice(["income", "expense"], { required: true, description: "income or expense; a subcategory has its parent's type" }),
    parent_id: reference((): ResourceRef => financialCategories, { description: "The parent category (same type); null at the top" }),
    code: text(30, { nullable: true, filter: { sortable: true }, description: "Chart code, e.g. 2.01.03" }),
    position: integer({ filter: { sortable: true }, description: "Order among its siblings" }),
    is_blocked: flag(),
    metadata: metadata(),
    ...timestamps()
  },
  defaultSort: { field: "position", order: "asc" },
  search: { payload: true },
  writes: { example: { name: "Despesas administrativas", type: "expense", code: "2.01", position: 1 } },
  // Refused before the write: the table's own check would refuse it too, but without naming the field.
  rules: (draft) =>
    draft.current !== undefined && draft.values.parent_id === draft.current.id
      ? refuse("parent_id", "is the category itself: a category cannot be its own parent", "CATEGORY_CYCLE")
      : Effect.succeed(draft),
  afterWrite: ({ resource, operation, id, draft, store }) =>
    Effect.gen(function* () {
      const current = draft.current
      const moved = operation === "create" || current?.parent_id !== draft.values.parent_id || current?.type !== draft.values.type
      if (!moved) return
      if (operation === "update" && current?.type !== draft.values.type && (yield* hasChildren(store, resource, id))) {
        return yield* refuse("type", "cannot change while the category has subcategories")
      }
      yield* checkTree(store, resource, id, draft.values)
    }),
  beforeRemove: ({ resource, current, store }) =>
    Effect.flatMap(hasChildren(store, resource, String(current.id)), (has) =>
      has ? Effect.fail(unprocessable("This category has subcategories: move or delete them first", { id: ["has subcategories"] }, "CATEGORY_HAS_CHILDREN")) : Effect.void)
})

export type FinancialCategory = RecordType<typeof financialCategories>
