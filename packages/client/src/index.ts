export { API_VERSION, createClient, type DataMethod, type ErpClient, type ErpClientOptions, type ListItem, type ListPath, type PaginateOptions, type ResponseData } from "./client.js"
export { ErpApiError, type ErrorBody, type FieldErrors } from "./errors.js"
export type { components, operations, paths } from "./generated/api.js"
export type { Fetch } from "./retry.js"

import type { components } from "./generated/api.js"

/** A schema of the API by its name in the OpenAPI document: `ErpSchema<"Product">`, `ErpSchema<"SalesOrderCreate">`. */
export type ErpSchema<Name extends keyof components["schemas"]> = components["schemas"][Name]
