import { Result } from "effect"
import { type FieldErrors, invalid, type InvalidRequest, type Unprocessable, unprocessable } from "../errors.js"
import type { AnyField, Fields } from "./field.js"
import type { ChildCollection, ChildDraft, Computed, Draft, Row } from "./resource.js"

/**
 * JSON merge patch (RFC 7396) one level deep: keys given replace, `null` removes,
 * keys not given stay.
 */
export const mergePatch = (current: Row | null | undefined, patch: Row): Record<string, unknown> => {
  const merged: Record<string, unknown> = { ...(current ?? {}) }
  for (const [key, value] of Object.entries(patch)) {
    if (value === undefined) continue
    if (value === null) delete merged[key]
    else merged[key] = value
  }
  return merged
}

/** Drops nulls so a stored object holds only what was set. */
export const compact = (block: Row): Record<string, unknown> =>
  Object.fromEntries(Object.entries(block).filter(([, value]) => value !== null && value !== undefined))

const isObject = (value: unknown): value is Row => typeof value === "object" && value !== null && !Array.isArray(value)

const withoutKeys = (value: Row, keys: ReadonlyArray<string> | undefined): Row => {
  if (!keys?.length) return value
  const copy: Record<string, unknown> = { ...value }
  for (const key of keys) delete copy[key]
  return copy
}

/** A field's current value in the form updates build on (a block without its owner key and nulls). */
const storedForm = (field: AnyField, value: unknown) => (field.normalize ? field.normalize(value) : value)

/** Names of the fields the engine writes (stored, not generated, not derived by SQL). */
const writableNames = (fields: Fields): ReadonlyArray<string> =>
  Object.entries(fields).filter(([, field]) => field.column && !field.column.generated && !field.column.virtual).map(([name]) => name)

/**
 * The stored state after applying `input` onto `current`: on create only what was
 * sent (the store's defaults fill the rest); on update every stored field, with what
 * was sent replacing or merging into the current value.
 */
export const applyInput = (fields: Fields, input: Row, current: Row | undefined): Row => {
  const values: Record<string, unknown> = {}
  for (const name of writableNames(fields)) {
    const field = fields[name]
    const base = current === undefined ? undefined : storedForm(field, current[name])
    if (current !== undefined) values[name] = base
    const sent = input[name]
    if (sent === undefined || !field.input) continue
    if (field.input.patch === "merge") {
      values[name] = sent === null ? {} : compact(mergePatch(isObject(base) ? base : {}, withoutKeys(sent as Row, field.inputOnlyKeys)))
    } else values[name] = sent
  }
  return values
}

/** The record's current children in the form updates build on. */
const childState = (fields: Fields, child: Row): Row => applyInput(fields, {}, child)

type DraftError = InvalidRequest | Unprocessable

/**
 * The children a write will leave, in order. On create every sent child is new.
 * On update a sent list is the complete new list: a child with a known `id` is kept
 * and changed, one without is added, one left out is removed; an unsent list keeps
 * the children as they are.
 */
export const applyChildren = (
  collection: ChildCollection,
  sent: ReadonlyArray<Row> | undefined,
  current: ReadonlyArray<Row> | undefined
): Result.Result<ReadonlyArray<ChildDraft>, DraftError> => {
  const existing = current ?? []
  if (sent === undefined) {
    return Result.succeed(existing.map((child) => ({ id: child.id as string, current: child, values: childState(collection.fields, child) })))
  }
  const byId = new Map(existing.map((child) => [String(child.id), child]))
  const seen = new Set<string>()
  const missing: Record<string, Array<string>> = {}
  const unknown: Record<string, Array<string>> = {}
  const drafts: Array<ChildDraft> = []
  sent.forEach((item, index) => {
    const at = `${collection.name}.${index}`
    const { id, ...rest } = item
    if (typeof id === "string") {
      const key = id.toLowerCase()
      const child = byId.get(key)
      if (!child) unknown[`${at}.id`] = [`does not name an item of this record`]
      else if (seen.has(key)) unknown[`${at}.id`] = ["names an item already listed"]
      else {
        seen.add(key)
        drafts.push({ id: key, current: child, values: applyInput(collection.fields, rest, child) })
      }
      return
    }
    for (const [name, field] of Object.entries(collection.fields)) {
      if (field.input?.required && (rest[name] === undefined || rest[name] === null)) missing[`${at}.${name}`] = ["is required"]
    }
    drafts.push({ id: undefined, current: undefined, values: applyInput(collection.fields, rest, undefined) })
  })
  if (Object.keys(missing).length > 0) {
    const summary = Object.keys(missing).map((name) => `${name} is required`).join("; ")
    return Result.fail(invalid(`Invalid request body: ${summary}`, "INVALID_BODY", missing as FieldErrors))
  }
  if (Object.keys(unknown).length > 0) {
    return Result.fail(unprocessable(`An item id does not belong to this record`, unknown as FieldErrors, "UNKNOWN_ITEM"))
  }
  return Result.succeed(drafts)
}

/** Merges what `compute` returned into the draft: header values, and per collection each child's by position. */
export const withComputed = (draft: Draft, computed: Computed): Draft => ({
  ...draft,
  values: { ...draft.values, ...computed.values },
  children: Object.fromEntries(
    Object.entries(draft.children).map(([name, children]) => {
      const changes = computed.children?.[name]
      return [name, changes ? children.map((child, index) => ({ ...child, values: { ...child.values, ...changes[index] } })) : children]
    })
  )
})

const same = (left: unknown, right: unknown) =>
  left === right || (typeof left === "object" && typeof right === "object" && JSON.stringify(left) === JSON.stringify(right))

/** The stored values that differ from `current` (all of them on create). */
export const changedValues = (values: Row, current: Row | undefined, fields: Fields): Row => {
  if (current === undefined) return values
  const changed: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(values)) {
    if (!same(value, storedForm(fields[name], current[name]))) changed[name] = value
  }
  return changed
}

/** What a write does to a collection: rows to insert, rows to change (by id) and ids to remove. */
export interface ChildPlan {
  readonly insert: ReadonlyArray<Row>
  readonly update: ReadonlyArray<{ readonly id: string; readonly values: Row }>
  readonly remove: ReadonlyArray<string>
}

/** Positions follow the list's order; a child that did not move and did not change is left alone. */
export const childPlan = (collection: ChildCollection, drafts: ReadonlyArray<ChildDraft>, current: ReadonlyArray<Row> | undefined): ChildPlan => {
  const positioned = "position" in collection.fields
  const kept = new Set(drafts.flatMap((draft) => (draft.id ? [draft.id] : [])))
  const insert: Array<Row> = []
  const update: Array<{ id: string; values: Row }> = []
  drafts.forEach((draft, index) => {
    const values = positioned ? { ...draft.values, position: index } : draft.values
    if (draft.id === undefined) insert.push(values)
    else {
      const changed = changedValues(values, draft.current, collection.fields)
      if (Object.keys(changed).length > 0) update.push({ id: draft.id, values: changed })
    }
  })
  const remove = (current ?? []).map((child) => String(child.id)).filter((id) => !kept.has(id))
  return { insert, update, remove }
}

export const emptyPlan = (plan: ChildPlan) => plan.insert.length === 0 && plan.update.length === 0 && plan.remove.length === 0
