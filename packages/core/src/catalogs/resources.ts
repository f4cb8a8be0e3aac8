import type { AnyResource } from "../engine/resource.js"

/** The reference catalogs, read-only for every tenant (spec "Reference catalogs"). */
export const catalogResources: ReadonlyArray<AnyResource> = []
