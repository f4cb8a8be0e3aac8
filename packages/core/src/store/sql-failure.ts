import {
  AuthenticationError,
  AuthorizationError,
  ConnectionError,
  ConstraintError,
  DeadlockError,
  LockTimeoutError,
  SerializationError,
  SqlError,
  type SqlErrorReason,
  SqlSyntaxError,
  StatementTimeoutError,
  UniqueViolation,
  UnknownError
} from "effect/sql/SqlError"

/** The SQLSTATE and constraint a driver's error carries (node-postgres and PGlite put them on the error). */
const fieldsOf = (cause: unknown): { readonly code?: unknown; readonly constraint?: unknown } =>
  typeof cause === "object" && cause !== null ? cause : {}

/** The reason of a failure, by its SQLSTATE, as `@effect/sql-pg` tells them apart. */
const reasonOf = (cause: unknown, message: string, operation: string): SqlErrorReason => {
  const { code, constraint } = fieldsOf(cause)
  const props = { cause, message, operation }
  if (typeof code !== "string") return new UnknownError(props)
  if (code.startsWith("08")) return new ConnectionError(props)
  if (code.startsWith("28")) return new AuthenticationError(props)
  if (code === "42501") return new AuthorizationError(props)
  if (code.startsWith("42")) return new SqlSyntaxError(props)
  if (code === "23505") return new UniqueViolation({ ...props, constraint: typeof constraint === "string" && constraint.trim() !== "" ? constraint : "unknown" })
  if (code.startsWith("23")) return new ConstraintError(props)
  if (code === "40P01") return new DeadlockError(props)
  if (code === "40001") return new SerializationError(props)
  if (code === "55P03") return new LockTimeoutError(props)
  if (code === "57014") return new StatementTimeoutError(props)
  return new UnknownError(props)
}

/** A driver's failure as a `SqlError`: its reason (by SQLSTATE) holds the driver's error as `cause`. */
export const sqlFailure = (cause: unknown, message: string, operation = "query"): SqlError =>
  new SqlError({ reason: reasonOf(cause, message, operation) })

/** A store that cannot be opened or reached: what the server answered (by its SQLSTATE), else a connection failure. */
export const connectionFailure = (cause: unknown, message: string): SqlError => {
  const { code } = fieldsOf(cause)
  return new SqlError({
    reason: typeof code === "string" && /^[0-9A-Z]{5}$/.test(code)
      ? reasonOf(cause, message, "connect")
      : new ConnectionError({ cause, message, operation: "connect" })
  })
}

/** The driver's own error behind a `SqlError` (its reason's cause). */
export const driverErrorOf = (error: SqlError): unknown => error.reason.cause
