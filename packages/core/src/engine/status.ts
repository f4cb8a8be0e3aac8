import { Result } from "effect"
import { type FieldErrors, type Unprocessable, unprocessable } from "../errors.js"
import type { Row, StatusMachine } from "./resource.js"

/** The state a record is in (its status field), as answered. */
export const stateOf = (machine: StatusMachine, record: Row): string => String(record[machine.field] ?? machine.initial)

/**
 * Which of the fields sent a PATCH may change in the record's state: any other is
 * refused by name (422, spec "States and transitions"). A state that allows none
 * refuses even an empty body.
 */
export const checkEditable = (machine: StatusMachine, current: Row, sent: ReadonlyArray<string>): Result.Result<void, Unprocessable> => {
  const state = stateOf(machine, current)
  const editable = machine.states[state]?.editable ?? "all"
  if (editable === "all") return Result.void
  if (editable === "none") {
    const fields: Record<string, Array<string>> = sent.length === 0
      ? { [machine.field]: [`is ${state}: nothing can be changed`] }
      : Object.fromEntries(sent.map((name) => [name, [`cannot be changed while ${machine.field} is ${state}`]]))
    return Result.fail(unprocessable(`A record whose ${machine.field} is ${state} cannot be changed`, fields as FieldErrors, "NOT_EDITABLE"))
  }
  const refused = sent.filter((name) => !editable.includes(name) && name !== machine.field)
  if (refused.length === 0) return Result.void
  const allowed = editable.length > 0 ? ` Editable now: ${editable.join(", ")}.` : ""
  return Result.fail(
    unprocessable(
      `${refused.join(", ")} cannot be changed while ${machine.field} is ${state}.${allowed}`,
      Object.fromEntries(refused.map((name) => [name, [`cannot be changed while ${machine.field} is ${state}`]])) as FieldErrors,
      "NOT_EDITABLE"
    )
  )
}

/** A status a PATCH sends must be reachable from the current one along the declared transitions. */
export const checkTransition = (machine: StatusMachine, from: string, to: string): Result.Result<void, Unprocessable> => {
  if (from === to) return Result.void
  const allowed = machine.transitions?.[from] ?? []
  if (allowed.includes(to)) return Result.void
  const options = allowed.length > 0 ? `it can move to ${allowed.join(" or ")}` : "it cannot move from there"
  return Result.fail(
    unprocessable(`${machine.field} cannot change from ${from} to ${to}: ${options}`, { [machine.field]: [`cannot change from ${from} to ${to}`] }, "INVALID_TRANSITION")
  )
}
