import { Effect, ParseResult, Schema } from "effect"
import { type FieldErrors, InvalidRequest } from "../errors.js"
import { capFieldErrors, checkUntrustedJson } from "./untrusted-input.js"

const describe = (issue: ParseResult.ArrayFormatterIssue): string => {
  switch (issue._tag) {
    case "Missing":
      return "is required"
    case "Unexpected":
      return "is not a field of this request"
    default:
      return issue.message
  }
}

/** What an optional, nullable field's other union members say; noise next to the real reason. */
const ABSENT_MEMBER = /^Expected (null|undefined), actual /

/**
 * Turns a schema failure into field name -> reasons (nested fields dotted, array
 * items indexed). A field that is optional or nullable fails every member of its
 * union; only the member that could have matched explains anything, so the
 * "expected null / undefined" reasons are dropped, and so is a parent block whose
 * only complaint is that it is not null when one of its keys is the real problem.
 */
export const fieldErrors = (error: ParseResult.ParseError): FieldErrors => {
  const raw = new Map<string, Array<string>>()
  for (const issue of ParseResult.ArrayFormatter.formatErrorSync(error)) {
    const name = issue.path.length === 0 ? "body" : issue.path.map(String).join(".")
    let reasons = raw.get(name)
    if (!reasons) raw.set(name, (reasons = []))
    const reason = describe(issue)
    // Reasons per field are few (one per union member); the list stays short.
    if (!reasons.includes(reason)) reasons.push(reason)
  }
  // Every proper prefix of every name, once: "has a deeper field" in one pass, not a scan per name.
  const parents = new Set<string>()
  for (const name of raw.keys()) {
    for (let dot = name.indexOf("."); dot >= 0; dot = name.indexOf(".", dot + 1)) parents.add(name.slice(0, dot))
  }
  const fields: Record<string, Array<string>> = {}
  for (const [name, reasons] of raw) {
    const meaningful = reasons.filter((reason) => !ABSENT_MEMBER.test(reason))
    if (meaningful.length > 0) fields[name] = meaningful
    else if (!parents.has(name)) fields[name] = reasons
  }
  return fields
}

/** The 400 for a schema failure: each field named, at most `INPUT_LIMITS.maxFieldErrors` of them. */
export const invalidFields = (error: ParseResult.ParseError, what: string, code: string): InvalidRequest => {
  const { fields, omitted } = capFieldErrors(fieldErrors(error))
  const summary = Object.entries(fields).map(([field, reasons]) => `${field} ${reasons.join(", ")}`).join("; ")
  const more = omitted > 0 ? ` (and ${omitted} more field${omitted === 1 ? "" : "s"})` : ""
  return new InvalidRequest({ message: `${what}: ${summary}${more}`, code, fields })
}

/** Decodes a JSON request body with a resource's input schema; any problem is a 400 naming each field. */
export const decodeBody = <A, I>(schema: Schema.Schema<A, I>, body: unknown): Effect.Effect<A, InvalidRequest> => {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    return Effect.fail(new InvalidRequest({ message: "The request body must be a JSON object", code: "INVALID_BODY" }))
  }
  const untrusted = checkUntrustedJson(body)
  if (untrusted) return Effect.fail(untrusted)
  return Schema.decodeUnknown(schema, { errors: "all", onExcessProperty: "error" })(body).pipe(
    Effect.mapError((error) => invalidFields(error, "Invalid request body", "INVALID_BODY"))
  )
}
