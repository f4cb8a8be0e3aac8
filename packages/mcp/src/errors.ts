import { type ErrorBody, errorBody } from "@erp/core"

export { domainErrorBody, type ErrorBody, errorBody } from "@erp/core"

/** A defect: the agent learns that it failed, the operator's log learns why. */
export const internalErrorBody = (): ErrorBody =>
  errorBody(500, "The server failed while running this tool; the failure was logged", "INTERNAL_ERROR")
