import { Schema } from "effect"
import type { Field, Fields, RecordOf } from "./field.js"
import { recordSchema } from "./schemas.js"

/**
 * A collection of child rows (a document's items) in a table of their own, keyed
 * `(tenant_id, <parentKey>, id)` and ordered by `position`. Clients write it through
 * the parent's body: the whole list on create, the complete new list on PATCH.
 */
export const children = <CF extends Fields>(spec: {
  readonly table: string
  /** Column holding the parent's id, answered on every child (`quote_id`). */
  readonly parentKey: string
  readonly fields: CF
  /** Schema identifier stem, e.g. `QuoteItem`. */
  readonly identifier: string
  readonly maxItems: number
  /** At least one child on create. */
  readonly required?: boolean
  readonly softDelete?: boolean
  /** `false`: written by actions only (allocations), read-only in bodies. */
  readonly writable?: boolean
  readonly description?: string
}): Field<ReadonlyArray<RecordOf<CF>>, ReadonlyArray<Readonly<Record<string, unknown>>>> => {
  const item = recordSchema(spec.fields, { identifier: spec.identifier })
  const output = Schema.Array(item)
  return {
    output: spec.description ? output.annotate({ description: spec.description }) : output,
    children: {
      table: spec.table,
      parentKey: spec.parentKey,
      fields: spec.fields,
      maxItems: spec.maxItems,
      required: spec.required ?? false,
      softDelete: spec.softDelete ?? false,
      writable: spec.writable ?? true,
      identifier: spec.identifier
    }
  }
}
