import { Effect } from "effect"
import type { FilterNode } from "../engine/filter.js"
import type { Fields } from "../engine/field.js"
import type { Draft, WriteContext } from "../engine/resource.js"
import { type FieldErrors, invalid } from "../errors.js"
import { products } from "./products.js"

const blank = (value: unknown) => value === undefined || value === null

/**
 * A document's item without its own text takes its product's name: an item made from the
 * catalog needs no copy of it. An item with neither is a 400 naming `items.N.item_description`;
 * a product that does not exist is left to the reference check (422 naming `items.N.product_id`).
 * The products are read in one statement.
 */
export const describeItems = <F extends Fields>(draft: Draft<F>, context: WriteContext) =>
  Effect.gen(function* () {
    const items = draft.children.items ?? []
    const missing = items.flatMap((item, index) => (blank(item.values.item_description) ? [index] : []))
    if (missing.length === 0) return draft
    const unnamed = missing.filter((index) => typeof items[index].values.product_id !== "string")
    if (unnamed.length > 0) {
      const fields = Object.fromEntries(unnamed.map((index) => [`items.${index}.item_description`, ["is required unless product_id is given"]]))
      return yield* Effect.fail(invalid(`Invalid request body: ${Object.keys(fields).join(", ")} ${unnamed.length > 1 ? "are" : "is"} required unless product_id is given`, "INVALID_BODY", fields as FieldErrors))
    }
    if (!context.store) return draft
    const ids = [...new Set(missing.map((index) => String(items[index].values.product_id)))]
    const filter: FilterNode = { kind: "group", logic: "or", conditions: ids.map((id) => ({ kind: "condition", field: "id", op: "eq", value: id })) }
    const found = yield* context.store.findMany(products, filter, { limit: ids.length })
    const names = new Map(found.map((product) => [String(product.id), String(product.name)]))
    const named = items.map((item) => {
      const name = blank(item.values.item_description) ? names.get(String(item.values.product_id)) : undefined
      return name === undefined ? item : { ...item, values: { ...item.values, item_description: name } }
    })
    return { ...draft, children: { ...draft.children, items: named } }
  })
