import { expect } from "vitest"
import type { TestHost } from "./host.js"

/**
 * Calls on one resource's routes as a tenant: the host and token are read when a call
 * is made (tests assign them in `beforeAll`); `required` gives the fields a new record needs.
 */
export const resourceClient = (
  name: string,
  context: () => { readonly host: TestHost; readonly token: string },
  required: () => Record<string, unknown>
) => {
  const request = (method: string, path: string, body: unknown, token?: string) =>
    context().host.request(method, path, { token: token ?? context().token, body })
  const post = (body: unknown, token?: string) => request("POST", `/${name}`, body, token)
  const get = (id: string, query = "", token?: string) => request("GET", `/${name}/${id}${query}`, undefined, token)
  const patch = (id: string, body: unknown, token?: string) => request("PATCH", `/${name}/${id}`, body, token)
  const remove = (id: string, token?: string) => request("DELETE", `/${name}/${id}`, undefined, token)
  const list = (query = "", token?: string) => request("GET", `/${name}?limit=100${query}`, undefined, token)
  /** How many records the tenant holds, deleted ones included, walking every page. */
  const count = async (token?: string) => {
    let total = 0
    let cursor: string | null = null
    do {
      const response = await list(`&with_deleted=true${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`, token)
      expect(response.status).toBe(200)
      total += response.body.data.length
      cursor = response.body.pagination.next_cursor
    } while (cursor)
    return total
  }
  const create = async (body: Record<string, unknown> = {}, token?: string) => {
    const response = await post({ ...required(), ...body }, token)
    expect(response.status, JSON.stringify(response.body)).toBe(201)
    return response.body
  }
  return { post, get, patch, remove, list, count, create }
}
