import type { SqlError } from "effect/sql/SqlError"
import { Conflict, type FieldErrors, type Unprocessable, unprocessable } from "../errors.js"

interface PgErrorFields {
  readonly code?: string
  readonly detail?: string
  readonly constraint?: string
  readonly column?: string
  readonly table?: string
}

/** PostgreSQL's fields of the driver's error behind `error` (its reason's cause). */
export const pgError = (error: SqlError): PgErrorFields => {
  const cause = error.reason.cause
  return typeof cause === "object" && cause !== null ? (cause as PgErrorFields) : {}
}

export const isUniqueViolation = (error: SqlError): boolean => pgError(error).code === "23505"

/** The columns a constraint's detail names (`Key (tenant_id, sku)=(…)`), tenant scoping left out. */
const keyColumns = (detail: string | undefined): ReadonlyArray<string> =>
  /^Key \(([^)]*)\)/.exec(detail ?? "")?.[1]
    ?.split(",")
    .map((column) => column.trim())
    .filter((column) => column !== "tenant_id" && !column.startsWith("(")) ?? []

/** A unique violation a user caused, named by its columns. */
export const conflictFrom = (error: SqlError, title: string): Conflict => {
  const columns = keyColumns(pgError(error).detail)
  const named = columns.length > 0 ? ` with this ${columns.join(" and ")}` : ""
  return new Conflict({ message: `A ${title.toLowerCase()}${named} already exists`, code: "DUPLICATE" })
}

/** The declared field a constraint is about: named in its detail, as its column, or inside its name. */
const fieldsOf = (fields: PgErrorFields, known: ReadonlyArray<string>): ReadonlyArray<string> => {
  const fromDetail = keyColumns(fields.detail).filter((column) => known.includes(column))
  if (fromDetail.length > 0) return fromDetail
  if (fields.column && known.includes(fields.column)) return [fields.column]
  const named = known.filter((name) => fields.constraint?.includes(`_${name}_`) || fields.constraint?.endsWith(`_${name}`))
  return named.length > 0 ? [named.sort((a, b) => b.length - a.length)[0]] : ["body"]
}

const reasons = (names: ReadonlyArray<string>, reason: string): FieldErrors => Object.fromEntries(names.map((name) => [name, [reason]]))

/**
 * A constraint the database enforced on what a client sent, as the error the
 * client gets: unique → 409; foreign key, check, not null, out of range → 422
 * naming the field. Anything else is not the client's doing (undefined).
 */
export const constraintError = (error: SqlError, title: string, known: ReadonlyArray<string>): Conflict | Unprocessable | undefined => {
  const fields = pgError(error)
  switch (fields.code) {
    case "23505":
      return conflictFrom(error, title)
    case "23503": {
      if (/still referenced/.test(fields.detail ?? "")) {
        return new Conflict({ message: `This ${title.toLowerCase()} is still referenced by other records`, code: "STILL_REFERENCED" })
      }
      const names = fieldsOf(fields, known)
      return unprocessable("A referenced record does not exist", reasons(names, "does not match any record"), "REFERENCE_NOT_FOUND")
    }
    case "23502": {
      const names = fieldsOf(fields, known)
      return unprocessable("A required value is missing", reasons(names, "is required"), "VALIDATION_FAILED")
    }
    case "23514": {
      const names = fieldsOf(fields, known)
      return unprocessable("A value breaks a rule of this record", reasons(names, "is not allowed"), "VALIDATION_FAILED")
    }
    case "22003":
      return unprocessable("A value is out of the range the store holds", { body: ["a number is too large"] }, "VALUE_OUT_OF_RANGE")
    default:
      return undefined
  }
}
