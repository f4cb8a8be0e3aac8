import { Effect, Schema, SchemaIssue } from "effect"
import { type FieldErrors, InvalidRequest } from "../errors.js"
import { capFieldErrors, checkUntrustedJson } from "./untrusted-input.js"

/** A missing key and an unknown one in the API's words; other leaves as the schema words them. */
const formatIssues = SchemaIssue.makeFormatterStandardSchemaV1({
  leafHook: (issue) => {
    switch (issue._tag) {
      case "MissingKey":
        return "is required"
      case "UnexpectedKey":
        return "is not a field of this request"
      default:
        return SchemaIssue.defaultLeafHook(issue)
    }
  }
})

/**
 * Turns a schema failure into field name -> reasons (nested fields dotted, array
 * items indexed). A union of several members that could have matched explains itself once
 * per member: each distinct reason is kept once.
 */
export const fieldErrors = (error: Schema.SchemaError): FieldErrors => {
  const fields: Record<string, Array<string>> = {}
  for (const issue of formatIssues(error.issue).issues) {
    const path = issue.path ?? []
    const name = path.length === 0 ? "body" : path.map((segment) => String(typeof segment === "object" ? segment.key : segment)).join(".")
    const reasons = (fields[name] ??= [])
    // Reasons per field are few (one per union member); the list stays short.
    if (!reasons.includes(issue.message)) reasons.push(issue.message)
  }
  return fields
}

/** The 400 for a schema failure: each field named, at most `INPUT_LIMITS.maxFieldErrors` of them. */
export const invalidFields = (error: Schema.SchemaError, what: string, code: string): InvalidRequest => {
  const { fields, omitted } = capFieldErrors(fieldErrors(error))
  const summary = Object.entries(fields).map(([field, reasons]) => `${field} ${reasons.join(", ")}`).join("; ")
  const more = omitted > 0 ? ` (and ${omitted} more field${omitted === 1 ? "" : "s"})` : ""
  return new InvalidRequest({ message: `${what}: ${summary}${more}`, code, fields })
}

/**
 * A body as JSON carries it: a key whose value is `undefined` (in an object built in process: the
 * admin facade's caller, a rule creating a record) is left out, as `JSON.stringify` leaves it out,
 * so an optional key takes it. The value itself when there is none (every parsed JSON body).
 * Called on checked bodies only: their nesting is bounded.
 */
const withoutUndefined = (value: unknown): unknown => {
  if (typeof value !== "object" || value === null) return value
  if (Array.isArray(value)) {
    let items: Array<unknown> | undefined
    value.forEach((item, index) => {
      const kept = withoutUndefined(item)
      if (kept !== item) (items ??= [...value])[index] = kept
    })
    return items ?? value
  }
  let members: Record<string, unknown> | undefined
  for (const [key, item] of Object.entries(value)) {
    if (item === undefined) {
      delete (members ??= { ...value })[key]
      continue
    }
    const kept = withoutUndefined(item)
    if (kept !== item) (members ??= { ...value })[key] = kept
  }
  return members ?? value
}

/** Decodes a JSON request body with a resource's input schema; any problem is a 400 naming each field. */
export const decodeBody = <A>(schema: Schema.Decoder<A>, body: unknown): Effect.Effect<A, InvalidRequest> => {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    return Effect.fail(new InvalidRequest({ message: "The request body must be a JSON object", code: "INVALID_BODY" }))
  }
  const untrusted = checkUntrustedJson(body)
  if (untrusted) return Effect.fail(untrusted)
  return Schema.decodeUnknownEffect(schema, { errors: "all", onExcessProperty: "error" })(withoutUndefined(body)).pipe(
    Effect.mapError((error) => invalidFields(error, "Invalid request body", "INVALID_BODY"))
  )
}
