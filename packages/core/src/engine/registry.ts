import type { AnyResource } from "./resource.js"

/**
 * Declarations that point at each other (an account and its transactions, an order and its
 * invoices) name the other resource instead of importing it, so the modules form no circle.
 * The registry (`resources/index.ts`) fills this map when it is loaded; the names are looked
 * up only when a write or read runs, long after every declaration exists.
 */
const byName = new Map<string, AnyResource>()

export const registerResources = (resources: ReadonlyArray<AnyResource>): void => {
  for (const resource of resources) byName.set(resource.name, resource)
}

/** The declared resource with this name; a misspelt name fails loudly the first time it is used. */
export const resourceNamed = (name: string): AnyResource => {
  const found = byName.get(name)
  if (!found) throw new Error(`No resource named "${name}" is registered (resources/index.ts registers them)`)
  return found
}
