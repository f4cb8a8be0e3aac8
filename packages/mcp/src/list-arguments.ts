import {
  allowedOperators,
  type AnyResource,
  COMMON_LIST_PARAMETERS,
  DEFAULT_LIMIT,
  type InvalidRequest,
  invalid,
  MAX_LIMIT,
  type QueryParams
} from "@erp/core"
import { Result, Schema } from "effect"

const Scalar = Schema.Union([Schema.String, Schema.Finite, Schema.Boolean])
const Scalars = Schema.Union([Schema.String, Schema.Finite, Schema.Boolean, Schema.Array(Scalar)])
type Scalars = typeof Scalars.Type

/** One entry of `filters`: a value (`eq`), several (repeated), or operators to values (the `meta.filters` echo shape). */
const FilterArgument = Schema.Union([...Scalars.members, Schema.Record(Schema.String, Scalars)])
type FilterArgument = typeof FilterArgument.Type

const sortValues = (resource: AnyResource): ReadonlyArray<string> =>
  Object.entries(resource.filters)
    .filter(([, field]) => field.sortable)
    .flatMap(([name]) => [`${name}:asc`, `${name}:desc`])

/** `name (string: eq, neq, contains, not_contains)`, one line per filterable field. */
export const describeFilterFields = (resource: AnyResource): string =>
  Object.entries(resource.filters)
    .map(([name, field]) =>
      `- ${name} (${field.type}${field.array ? " list" : ""}: ${allowedOperators(field).join(", ")})${field.description ? `: ${field.description}` : ""}`
    )
    .join("\n")

/**
 * A filter taken as an argument of its own (a parameter the REST route requires, a lookup's
 * selector): its declared description, its type, and the one operator it is compared with.
 */
export const describeFilterArgument = (resource: AnyResource, name: string, required: boolean): string => {
  const field = resource.filters[name]
  const text = field?.description ?? `The ${name} filter.`
  const said = required && !/^required\b/i.test(text) ? `Required. ${text}` : text
  return `${said}${/[.!?]$/.test(said) ? "" : "."} A ${field?.type ?? "string"}, compared with eq${field?.caseInsensitive ? " (any case)" : ""}.`
}

/** `expand`: embeds answered as full records (the resource's declared expansions; anything else is refused). */
export const expandArgument = (resource: AnyResource) =>
  Schema.optionalKey(Schema.Array(Schema.String).annotate({
    description: `Answer these embeds as full records instead: ${resource.expansions.map((expansion) => expansion.path).join(", ") || "none"}.`
  }))

/**
 * The arguments of `list_<resource>`: the spec's common list parameters, plus
 * `filters` as a JSON object instead of query-string keys. Descriptions are per
 * resource because agents choose sort fields and filters from them.
 */
export const listArguments = (resource: AnyResource) => {
  const sorts = sortValues(resource)
  const sort: Schema.Codec<string> = sorts.length > 0 ? Schema.Literals(sorts) : Schema.String
  return Schema.Struct({
    limit: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: MAX_LIMIT })).annotate({
      title: "Page size",
      description: `Page size, 1 to ${MAX_LIMIT} (default ${DEFAULT_LIMIT}).`
    })),
    cursor: Schema.optionalKey(Schema.String.annotate({
      description: "pagination.next_cursor (or previous_cursor) of the previous page, with the same other arguments; omit for the first page."
    })),
    sort: Schema.optionalKey(sort.annotate({
      description: `field:asc or field:desc (default ${resource.defaultSort.field}:${resource.defaultSort.order}); ties are broken by id.`
    })),
    search: Schema.optionalKey(Schema.String.annotate({ description: "Full-text search: every word must match the start of a word." })),
    with_deleted: Schema.optionalKey(Schema.Boolean.annotate({ description: "Include soft-deleted records (default false)." })),
    expand: expandArgument(resource),
    include_payload_search: Schema.optionalKey(Schema.Boolean.annotate({
      description: "Let search also match inside metadata (default false)."
    })),
    filter: Schema.optionalKey(
      Schema.Union([Schema.Record(Schema.String, Schema.Unknown), Schema.String]).annotate({
        description: "JSON filter form, as an object or its JSON text: " +
          `{"logic":"and"|"or","conditions":[{"f":"<field>","op":"<operator>","v":<value>}, <nested group>...]}; ` +
          "for is_null and is_not_null omit v. Combined with filters by AND."
      })
    ),
    filters: Schema.optionalKey(
      Schema.Record(Schema.String, FilterArgument).annotate({
        description: 'Conditions combined by AND, keyed like the query string: {"name": "Chair", "sale_price[gte]": "10", ' +
          '"deleted_at[is_null]": true}, or by operator: {"sale_price": {"gte": "10", "lt": "100"}}. An array repeats the condition. ' +
          `Fields and their operators:\n${describeFilterFields(resource)}`
      })
    )
  })
}

export type ListArguments = ReturnType<typeof listArguments>["Type"]

/** Arguments a list cannot take, so the tool does not advertise them. */
export const unsupportedListArguments = (resource: AnyResource): ReadonlyArray<string> => [
  ...(resource.search ? [] : ["search"]),
  ...(resource.search?.payload ? [] : ["include_payload_search"]),
  ...(resource.expansions.length > 0 ? [] : ["expand"])
]

const reserved: ReadonlySet<string> = new Set(COMMON_LIST_PARAMETERS)

const filterPairs = (key: string, argument: FilterArgument): Result.Result<QueryParams, InvalidRequest> => {
  const field = key.replace(/\[.*$/, "")
  if (reserved.has(field)) {
    return Result.fail(invalid(`filters.${key} is not a filter: pass ${field} as its own argument`, "INVALID_FILTER"))
  }
  const repeated = (name: string, values: Scalars): QueryParams =>
    (Array.isArray(values) ? values : [values]).map((value) => [name, String(value)] as const)
  if (typeof argument === "object" && !Array.isArray(argument)) {
    if (key !== field) return Result.fail(invalid(`filters.${key} takes a value, not operators`, "INVALID_FILTER"))
    return Result.succeed(Object.entries(argument).flatMap(([op, values]) => repeated(`${field}[${op}]`, values)))
  }
  return Result.succeed(repeated(key, argument as Scalars))
}

/** The query-string pairs `ResourceEngine.list` takes, so lists validate and page exactly as over HTTP. */
export const toQueryParams = (args: ListArguments): Result.Result<QueryParams, InvalidRequest> =>
  Result.gen(function* () {
    const pairs: Array<readonly [string, string]> = []
    const add = (name: string, value: string | number | boolean | undefined) => {
      if (value !== undefined) pairs.push([name, String(value)])
    }
    add("limit", args.limit)
    add("cursor", args.cursor)
    add("sort", args.sort)
    add("search", args.search)
    add("with_deleted", args.with_deleted)
    add("include_payload_search", args.include_payload_search)
    for (const path of args.expand ?? []) add("expand[]", path)
    add("filter", typeof args.filter === "object" ? JSON.stringify(args.filter) : args.filter)
    for (const [key, argument] of Object.entries(args.filters ?? {})) pairs.push(...(yield* filterPairs(key, argument)))
    return pairs
  })
