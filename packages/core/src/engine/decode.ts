import { Effect, ParseResult, Schema } from "effect"
import { type FieldErrors, InvalidRequest } from "../errors.js"

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
  const raw: Record<string, Array<string>> = {}
  for (const issue of ParseResult.ArrayFormatter.formatErrorSync(error)) {
    const name = issue.path.length === 0 ? "body" : issue.path.map(String).join(".")
    const reasons = (raw[name] ??= [])
    const reason = describe(issue)
    if (!reasons.includes(reason)) reasons.push(reason)
  }
  const fields: Record<string, Array<string>> = {}
  const names = Object.keys(raw)
  for (const name of names) {
    const meaningful = raw[name].filter((reason) => !ABSENT_MEMBER.test(reason))
    const hasDeeper = names.some((other) => other.startsWith(`${name}.`))
    if (meaningful.length > 0) fields[name] = meaningful
    else if (!hasDeeper) fields[name] = raw[name]
  }
  return fields
}

/** Decodes a JSON request body with a resource's input schema; any problem is a 400 naming each field. */
export const decodeBody = <A, I>(schema: Schema.Schema<A, I>, body: unknown): Effect.Effect<A, InvalidRequest> => {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    return Effect.fail(new InvalidRequest({ message: "The request body must be a JSON object", code: "INVALID_BODY" }))
  }
  return Schema.decodeUnknown(schema, { errors: "all", onExcessProperty: "error" })(body).pipe(
    Effect.mapError((error) => {
      const fields = fieldErrors(error)
      const summary = Object.entries(fields).map(([field, reasons]) => `${field} ${reasons.join(", ")}`).join("; ")
      return new InvalidRequest({ message: `Invalid request body: ${summary}`, code: "INVALID_BODY", fields })
    })
  )
}
