import type { SqlError } from "@effect/sql/SqlError"
import { Conflict } from "../errors.js"

interface PgErrorFields {
  readonly code?: string
  readonly detail?: string
  readonly constraint?: string
}

export const pgError = (error: SqlError): PgErrorFields => {
  const cause = error.cause
  return typeof cause === "object" && cause !== null ? (cause as PgErrorFields) : {}
}

export const isUniqueViolation = (error: SqlError): boolean => pgError(error).code === "23505"

/** A unique violation a user caused, named by its columns (tenant scoping left out). */
export const conflictFrom = (error: SqlError, title: string): Conflict => {
  const detail = pgError(error).detail ?? ""
  const columns = /^Key \(([^)]*)\)/.exec(detail)?.[1]
    ?.split(",")
    .map((column) => column.trim())
    .filter((column) => column !== "tenant_id" && !column.startsWith("("))
  const named = columns && columns.length > 0 ? ` with this ${columns.join(" and ")}` : ""
  return new Conflict({ message: `A ${title.toLowerCase()}${named} already exists`, code: "DUPLICATE" })
}
