import type { AnyResource } from "../engine/resource.js"
import { customers } from "./customers.js"
import { products } from "./products.js"

/** Every business resource, in the order transports present them. Adding a resource is adding it here. */
export const resources: ReadonlyArray<AnyResource> = [products, customers] as ReadonlyArray<AnyResource>

export { customers, products }
