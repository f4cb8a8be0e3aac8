import type { Constructor, Fragment } from "effect/sql/Statement"
import type { FilterNode } from "../../engine/filter.js"
import type { ListQuery } from "../../engine/list-query.js"
import { type AnyResource, isSoftDeleted, isTenantOwned } from "../../engine/resource.js"
import { compileFilter } from "./filter-compiler.js"

/** Rows of the caller's tenant (tenant resources), live unless asked otherwise, matching `filter`. */
export const scopeConditions = (
  sql: Constructor,
  resource: AnyResource,
  tenantId: string,
  options: { withDeleted?: boolean | undefined; filter?: FilterNode | undefined }
): Array<Fragment> => {
  const where: Array<Fragment> = []
  if (isTenantOwned(resource)) {
    where.push(sql`r.tenant_id = ${tenantId}::uuid`)
    if (!options.withDeleted && isSoftDeleted(resource)) where.push(sql`r.deleted_at IS NULL`)
  }
  if (options.filter) where.push(compileFilter(sql, resource.filters, options.filter))
  return where
}

/** The rows a list query matches: its scope, its filter and its search text. */
export const listConditions = (sql: Constructor, resource: AnyResource, tenantId: string, query: ListQuery): Array<Fragment> => {
  const where = scopeConditions(sql, resource, tenantId, { withDeleted: query.withDeleted, filter: query.filter })
  if (query.search) {
    // The search text goes through the same parser and dictionaries as the indexed
    // text, so "SKU-12345" or an email splits alike on both sides; each lexeme
    // then matches as a prefix. No lexeme at all yields NULL: nothing matches.
    const tsquery = sql`(SELECT to_tsquery('simple', string_agg(quote_literal(t.lexeme) || ':*', ' & ')) FROM unnest(to_tsvector('erp_search', ${query.search})) AS t)`
    where.push(
      query.includePayloadSearch && resource.search?.payload
        ? sql`coalesce(r.search_vector @@ ${tsquery} OR r.payload_vector @@ ${tsquery}, false)`
        : sql`coalesce(r.search_vector @@ ${tsquery}, false)`
    )
  }
  return where
}
