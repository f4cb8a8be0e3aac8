import type { AnyResource } from "@erp/core"
import { randomUUID } from "node:crypto"

/**
 * A create body from a resource's declared example that a tenant can send as is:
 * fields naming another resource's record get a fresh one (made from that
 * resource's own example, through `create`), unique keys a fresh UUID.
 */
export const exampleBody = async (
  resource: AnyResource,
  create: (resource: AnyResource, body: Record<string, unknown>) => Promise<{ id: string }>
): Promise<Record<string, unknown>> => {
  const write = resource.write!
  const body: Record<string, unknown> = { ...write.example }
  for (const [field, target] of Object.entries(write.exampleReferences ?? {})) {
    const other = target()
    body[field] = (await create(other, await exampleBody(other, create))).id
  }
  for (const field of write.exampleUnique ?? []) body[field] = randomUUID()
  return body
}
