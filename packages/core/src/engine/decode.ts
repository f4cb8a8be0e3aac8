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

/** Turns a schema failure into field name -> reasons (nested fields dotted, array items indexed). */
export const fieldErrors = (error: ParseResult.ParseError): FieldErrors => {
  const fields: Record<string, Array<string>> = {}
  for (const issue of ParseResult.ArrayFormatter.formatErrorSync(error)) {
    const name = issue.path.length === 0 ? "body" : issue.path.map(String).join(".")
    const reasons = (fields[name] ??= [])
    const reason = describe(issue)
    if (!reasons.includes(reason)) reasons.push(reason)
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
