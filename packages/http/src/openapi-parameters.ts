import { allowedOperators, type AnyResource, DEFAULT_LIMIT, MAX_LIMIT } from "@erp/core"

interface Parameter {
  readonly name: string
  readonly in: "query"
  readonly required: boolean
  readonly description: string
  readonly schema: Record<string, unknown>
  readonly style?: "form"
  readonly explode?: boolean
}

const query = (name: string, description: string, schema: Record<string, unknown> = { type: "string" }): Parameter => ({
  name,
  in: "query",
  required: false,
  description,
  schema
})

export const withDeletedParameter = query("with_deleted", "Include soft-deleted records (true or false).", { type: "boolean", default: false })

/**
 * `expand[]`, where the resource declares expansions: each names an embed answered as the
 * full record instead (`expand=customer` and comma lists are accepted too).
 */
export const expandParameters = (resource: AnyResource): ReadonlyArray<Parameter> =>
  resource.expansions.length === 0
    ? []
    : [{
      name: "expand[]",
      in: "query",
      required: false,
      style: "form",
      explode: true,
      description: `Answer these embeds as full records (as \`GET\` of their resource answers them), loaded in one query per expansion. ` +
        `Repeat it (\`expand[]=${resource.expansions[0].path}\`); \`expand=a,b\` is accepted too. Needs read permission on the expanded resource; anything else is 400.`,
      schema: { type: "array", items: { type: "string", enum: resource.expansions.map((expansion) => expansion.path) } }
    }]

/**
 * Query parameters of a list, derived from the resource's declared fields. The
 * engine reads the raw query string itself, so these document rather than decode.
 */
export const listParameters = (resource: AnyResource): ReadonlyArray<Parameter> => {
  const required = new Set(resource.requiredFilters ?? [])
  const sortable = Object.entries(resource.filters).filter(([, field]) => field.sortable).map(([name]) => name)
  const common = [
    query("cursor", "Opaque cursor from `next_cursor`, `previous_cursor`, `current_page_cursor` or `current_query_cursor` of a previous response; only valid with the same filters, sort and search."),
    query("limit", `Page size, ${1} to ${MAX_LIMIT}.`, { type: "integer", minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT }),
    query("sort", `\`field:asc\` or \`field:desc\`; sortable: ${sortable.join(", ")}. Default \`${resource.defaultSort.field}:${resource.defaultSort.order}\`; id breaks ties.`),
    ...(resource.search ? [query("search", "Full-text search, accent- and case-insensitive, every word as a prefix.")] : []),
    ...(resource.search?.payload ? [query("include_payload_search", "Search inside `metadata` too.", { type: "boolean", default: false })] : []),
    withDeletedParameter,
    ...expandParameters(resource),
    query("filter", "JSON filter form, URL-encoded: `{\"logic\":\"and\",\"conditions\":[{\"f\":\"field\",\"op\":\"gte\",\"v\":\"10\"}]}`; groups nest with `and`/`or`.")
  ]
  const fields = Object.entries(resource.filters).map(([name, field]) =>
    ({
      ...query(
      name,
      `${field.description ? `${field.description}. ` : ""}Filter on ${field.array ? "string array" : field.type}${field.nullable ? " (nullable)" : ""}: \`${name}=v\` or \`${name}[op]=v\` with op in ${allowedOperators(field).join(", ")}.`
      ),
      required: required.has(name)
    }) as Parameter
  )
  return [...common, ...fields]
}

/** The search route's parameters: `q` (required) and the list's own. */
export const searchParameters = (resource: AnyResource): ReadonlyArray<Parameter> => {
  const required = new Set(resource.searchRoute?.required ?? [])
  return [
    { ...query("q", "Search text (required)."), required: true } as Parameter,
    ...listParameters(resource)
      .filter((parameter) => parameter.name !== "search")
      .map((parameter) => (required.has(parameter.name) ? ({ ...parameter, required: true } as Parameter) : parameter))
  ]
}
