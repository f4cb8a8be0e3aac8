import type { QueryParams } from "@erp/core"
import type { ApiRequest } from "./api-request.js"

/** Query string pairs in order, repeated keys kept. */
export const queryParams = (request: Pick<ApiRequest, "url">): QueryParams => {
  const query = request.url.indexOf("?")
  return query < 0 ? [] : [...new URLSearchParams(request.url.slice(query + 1)).entries()]
}
