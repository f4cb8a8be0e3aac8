import type { HttpServerRequest } from "effect/http"
import { textProblem } from "@erp/core"
import { Effect } from "effect"
import { MAX_BODY_BYTES, readBounded } from "../body.js"

export class FormError {
  readonly _tag = "FormError"
  constructor(readonly message: string) {}
}

/**
 * An `application/x-www-form-urlencoded` body (RFC 6749 sends every OAuth request
 * so). A parameter sent twice is refused, as RFC 6749 section 3.1 asks.
 */
export const readForm = (request: HttpServerRequest.HttpServerRequest) =>
  Effect.gen(function* () {
    const type = request.headers["content-type"] ?? ""
    if (!type.toLowerCase().startsWith("application/x-www-form-urlencoded")) {
      return yield* Effect.fail(new FormError("The body must be application/x-www-form-urlencoded"))
    }
    const bytes = yield* readBounded(request, MAX_BODY_BYTES).pipe(Effect.mapError(() => new FormError("The body could not be read")))
    if (bytes === undefined) return yield* Effect.fail(new FormError("The body is too large"))
    const text = bytes.toString("utf8")
    // No prototype: a field named `constructor` or `__proto__` is just a field.
    const form: Record<string, string> = Object.create(null)
    for (const [name, value] of new URLSearchParams(text)) {
      const problem = textProblem(name) ?? textProblem(value)
      if (problem) return yield* Effect.fail(new FormError(`${textProblem(name) ? "a field name" : name} ${problem}`))
      if (Object.hasOwn(form, name)) return yield* Effect.fail(new FormError(`${name} is sent more than once`))
      form[name] = value
    }
    return form as Readonly<Record<string, string | undefined>>
  })

/** RFC 6749 2.3.1: HTTP Basic with the form-urlencoded client id and secret. */
export const basicCredentials = (authorization: string | undefined): { clientId: string; secret: string } | undefined => {
  const match = /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(authorization?.trim() ?? "")
  if (!match) return undefined
  const decoded = Buffer.from(match[1], "base64").toString("utf8")
  const colon = decoded.indexOf(":")
  if (colon < 0) return undefined
  try {
    const clientId = decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, " "))
    const secret = decodeURIComponent(decoded.slice(colon + 1).replace(/\+/g, " "))
    // Text PostgreSQL cannot take names no client: the credentials are simply not valid.
    if (textProblem(clientId) || textProblem(secret)) return undefined
    return { clientId, secret }
  } catch {
    return undefined
  }
}
