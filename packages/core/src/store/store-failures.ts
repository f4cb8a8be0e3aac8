import { Cause } from "effect"

/**
 * Failures of the store a client can do something about (wait and retry), told apart
 * from defects: PostgreSQL cancelled a statement at the timeout, no connection came free
 * in time, the connection died under the request, or two requests locked the same rows in
 * opposite orders (a deadlock or a serialization failure: PostgreSQL rolled one back).
 */
export type StoreFailure = "StatementTimeout" | "StoreBusy" | "ConnectionLost" | "Contention"

/** SQLSTATEs of a transaction PostgreSQL rolled back for another's sake: deadlock, serialization failure, lock not available. */
const CONTENTION_CODES = new Set(["40P01", "40001", "55P03"])

/** SQLSTATEs of a session that ended (admin shutdown, crash, idle transaction) or a broken link. */
const LOST_CODES = new Set(["57P01", "57P02", "57P03", "25P03", "08000", "08003", "08006", "ECONNRESET", "EPIPE", "ECONNREFUSED"])

const LOST_MESSAGES = /Connection terminated|connection error|Client was closed|terminating connection/i

const classify = (error: unknown): StoreFailure | undefined => {
  // The SqlError wraps the driver's error in `cause`; a few levels cover every wrapper we have.
  let current: unknown = error
  for (let depth = 0; depth < 5 && typeof current === "object" && current !== null; depth++) {
    const code = (current as { code?: unknown }).code
    const message = String((current as { message?: unknown }).message ?? "")
    if (code === "57014") return "StatementTimeout"
    if (typeof code === "string" && CONTENTION_CODES.has(code)) return "Contention"
    if (/timeout exceeded when trying to connect/i.test(message)) return "StoreBusy"
    if ((typeof code === "string" && LOST_CODES.has(code)) || LOST_MESSAGES.test(message)) return "ConnectionLost"
    current = (current as { cause?: unknown }).cause
  }
  return undefined
}

/** The store failure behind a cause (a defect, as SQL errors are), if it is one. */
export const storeFailureOf = (cause: Cause.Cause<unknown>): StoreFailure | undefined => {
  for (const reason of cause.reasons) {
    if (!Cause.isDieReason(reason)) continue
    const found = classify(reason.defect)
    if (found) return found
  }
  for (const reason of cause.reasons) {
    if (!Cause.isFailReason(reason)) continue
    const found = classify(reason.error)
    if (found) return found
  }
  return undefined
}
