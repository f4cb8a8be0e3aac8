import { Effect } from "effect"
import { authorize, type Principal } from "../../auth/principal.js"
import { type FieldErrors, invalid, type InvalidRequest } from "../../errors.js"
import { renameAliases } from "../aliases.js"
import { decodeBody } from "../decode.js"
import type { AnyResource, Row } from "../resource.js"
import { requireId, writable } from "./checks.js"

/*
 * A write's body before its unit of work: the caller's right to write, fields only the server
 * sets refused by name, aliases renamed, the input decoded by the resource's schema.
 */

/** Authorization, read-only fields and decoding: everything a create checks before its unit of work. */
export const decodeCreate = (resource: AnyResource, principal: Principal, body: unknown) =>
  Effect.gen(function* () {
    yield* authorize(principal, resource.permission, "create", resource.adminOnly)
    const write = yield* writable(resource)
    const named = yield* renameAliases(resource, body)
    yield* refuseReadOnly(resource, named, "create")
    return (yield* decodeBody(write.createInput, named)) as Row
  })

/** Authorization, read-only fields and decoding: everything an update checks before its unit of work. */
export const decodeUpdate = (resource: AnyResource, principal: Principal, id: string, body: unknown) =>
  Effect.gen(function* () {
    yield* authorize(principal, resource.permission, "update", resource.adminOnly)
    const write = yield* writable(resource)
    const checked = yield* requireId(resource, id)
    const named = yield* renameAliases(resource, body)
    yield* refuseReadOnly(resource, named, "update")
    return { id: checked, input: (yield* decodeBody(write.updateInput, named)) as Row }
  })

const isObject = (value: unknown): value is Row => typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * Fields the server computes, sent by a client: refused by name before anything
 * else (400), children included (`items.0.total`).
 */
const refuseReadOnly = (resource: AnyResource, body: unknown, operation: "create" | "update"): Effect.Effect<void, InvalidRequest> => {
  if (!isObject(body)) return Effect.void
  const fields: Record<string, Array<string>> = {}
  for (const name of resource.readOnly) {
    if (Object.prototype.hasOwnProperty.call(body, name)) fields[name] = ["is read-only: the server sets it"]
  }
  if (operation === "update") {
    for (const [name, field] of Object.entries(resource.fields)) {
      if (field.input?.on === "create" && field.output && Object.prototype.hasOwnProperty.call(body, name)) fields[name] = ["is set when the record is created and cannot change"]
    }
  }
  for (const collection of resource.children) {
    const items = body[collection.name]
    if (!collection.writable || !Array.isArray(items)) continue
    const readOnly = Object.entries(collection.fields).filter(([, field]) => field.output && !field.input).map(([name]) => name)
    items.forEach((item, index) => {
      if (!isObject(item)) return
      for (const name of readOnly) {
        if (name !== "id" && Object.prototype.hasOwnProperty.call(item, name)) fields[`${collection.name}.${index}.${name}`] = ["is read-only: the server sets it"]
      }
    })
  }
  const names = Object.keys(fields)
  return names.length === 0
    ? Effect.void
    : Effect.fail(invalid(`Invalid request body: ${names.join(", ")} ${names.length > 1 ? "are" : "is"} read-only`, "READ_ONLY_FIELD", fields as FieldErrors))
}

/** Values of `revealed` fields leave the draft before it is stored; the create's answer shows them. */
export const splitRevealed = (resource: AnyResource, values: Row): { readonly stored: Row; readonly shown: Row } => {
  const names = Object.entries(resource.fields).filter(([, field]) => field.revealed).map(([name]) => name)
  if (names.length === 0) return { stored: values, shown: {} }
  const stored: Record<string, unknown> = {}
  const shown: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(values)) (names.includes(name) ? shown : stored)[name] = value
  return { stored, shown }
}
