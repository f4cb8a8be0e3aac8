import type { AnyResource } from "../engine/resource.js"
import { catalogResources } from "../catalogs/resources.js"
import { customers } from "./customers.js"
import { products } from "./products.js"

/** Every business resource, in the order transports present them. Adding a resource is adding it here. */
export const resources: ReadonlyArray<AnyResource> = [products, customers] as ReadonlyArray<AnyResource>

/** Business resources and the read-only reference catalogs: what every transport serves. */
export const allResources: ReadonlyArray<AnyResource> = [...resources, ...catalogResources]

export { customers, products }
