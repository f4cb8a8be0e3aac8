import {
  allResources,
  publicResources,
  type AnyResource,
  pageOf,
  pageText,
  checkUntrustedJson,
  invalidFields,
  type InvalidRequest,
  actionParameters,
  invalid,
  type Lookup,
  type ResourceAction,
  type QueryParams,
  ResourceEngine
} from "@erp/core"
import { Effect, Schema } from "effect"
import { JsonAnswer } from "./json-answer.js"
import { ANY_OBJECT, inputJsonSchema, type ObjectJsonSchema, outputJsonSchema } from "./json-schema.js"
import { describeFilterArgument, expandArgument, listArguments, toQueryParams, unsupportedListArguments } from "./list-arguments.js"
import { describeProperties } from "./property-descriptions.js"
import { reportTools } from "./report-tools.js"
import type { ToolArguments, ToolDefinition } from "./tool-definition.js"


type Writes = NonNullable<AnyResource["write"]>

export type { ToolArguments, ToolDefinition } from "./tool-definition.js"

/** A tool as one resource makes it; `resourceTools` names the resource. */
type ResourceTool = Omit<ToolDefinition, "resource">

/** Tool names allow letters, digits and `_`: `sales-orders` becomes `sales_orders`. */
const toolName = (verb: string, noun: string) => `${verb}_${noun.replace(/[^A-Za-z0-9]+/g, "_")}`

const plural = (resource: AnyResource) => resource.name.replace(/-/g, " ")

/** Tool arguments are checked like an HTTP body: every problem named, unknown names refused. */
const decodeArguments = <S extends Schema.ConstraintDecoder<unknown>>(schema: S, args: ToolArguments): Effect.Effect<S["Type"], InvalidRequest> => {
  const untrusted = checkUntrustedJson(args, "arguments")
  if (untrusted) return Effect.fail(untrusted)
  return Schema.decodeUnknownEffect(schema, { errors: "all", onExcessProperty: "error" })(args).pipe(
    Effect.mapError((error) => invalidFields(error, "Invalid arguments", "INVALID_ARGUMENTS"))
  )
}

const withoutProperties = (schema: ObjectJsonSchema, names: ReadonlyArray<string>): ObjectJsonSchema => ({
  ...schema,
  properties: Object.fromEntries(Object.entries(schema.properties).filter(([name]) => !names.includes(name))),
  required: schema.required.filter((name) => !names.includes(name))
})

const idArgument = (resource: AnyResource) =>
  resource.idType === "integer"
    ? Schema.Union([Schema.Int, Schema.String]).annotate({ description: `Integer id of the ${resource.singular}` })
    : Schema.String.annotate({ description: `UUID of the ${resource.singular}` })

const withEngine = <A, E>(use: (engine: ResourceEngine["Service"]) => Effect.Effect<A, E>) => Effect.flatMap(ResourceEngine, use)

/**
 * The arguments of a list or search tool: the common list arguments, plus the parameters the
 * REST route requires at top level (`state_id` of cities), named alike. The required ones are
 * decoded as optional so a missing one gets the engine's answer, the same body as over HTTP.
 */
const listParameters = (resource: AnyResource, required: ReadonlyArray<string>) => {
  const topLevel = Object.fromEntries(required.map((name) => [
    name,
    Schema.optionalKey(Schema.Union([Schema.String, Schema.Finite]).annotate({ description: describeFilterArgument(resource, name, true) }))
  ]))
  const args = Schema.Struct({ ...listArguments(resource).fields, ...topLevel })
  const schema = withoutProperties(inputJsonSchema(args), unsupportedListArguments(resource))
  return {
    inputSchema: { ...schema, required: [...new Set([...required, ...schema.required])] },
    decode: (input: ToolArguments) =>
      decodeArguments(args, input).pipe(
        Effect.flatMap((decoded) =>
          Effect.map(Effect.fromResult(toQueryParams(decoded)), (params): QueryParams => [
            ...required.flatMap((name) => {
              const value = (decoded as Readonly<Record<string, unknown>>)[name]
              return value === undefined ? [] : [[name, String(value)] as const]
            }),
            ...params
          ]))
      )
  }
}

const listTool = (resource: AnyResource): ResourceTool => {
  const { inputSchema, decode } = listParameters(resource, resource.requiredFilters ?? [])
  const { field, order } = resource.defaultSort
  const required = resource.requiredFilters?.length ? ` Requires ${resource.requiredFilters.join(", ")}, as over REST.` : ""
  return {
    name: toolName("list", resource.name),
    title: `List ${plural(resource)}`,
    description: `${resource.description} Returns one page as {data, pagination, meta}, ordered by ${field} ${order} unless sort says ` +
      "otherwise. While pagination.has_next_page is true, call again with cursor set to pagination.next_cursor. " +
      `See the filters argument for the fields you can filter on.${required}`,
    inputSchema,
    outputSchema: outputJsonSchema(pageOf(resource.record, `${resource.title}Page`)),
    annotations: { title: `List ${plural(resource)}`, readOnlyHint: true, openWorldHint: false },
    run: (principal, input) =>
      decode(input).pipe(Effect.flatMap((params) => withEngine((engine) => Effect.map(engine.listAnswers(resource, principal, params), (page) => new JsonAnswer(pageText(page))))))
  }
}

const getTool = (resource: AnyResource): ResourceTool => {
  const args = Schema.Struct({
    id: idArgument(resource),
    with_deleted: Schema.optionalKey(Schema.Boolean.annotate({ description: "Also find it when soft-deleted (default false)." })),
    expand: expandArgument(resource)
  })
  return {
    name: toolName("get", resource.singular),
    title: `Get a ${resource.singular}`,
    description: `One ${resource.singular} by id. ${resource.description}`,
    inputSchema: withoutProperties(inputJsonSchema(args), resource.expansions.length > 0 ? [] : ["expand"]),
    outputSchema: outputJsonSchema(resource.record),
    annotations: { title: `Get a ${resource.singular}`, readOnlyHint: true, openWorldHint: false },
    run: (principal, input) =>
      decodeArguments(args, input).pipe(
        Effect.flatMap(({ id, with_deleted, expand }) =>
          withEngine((engine) =>
            engine.get(resource, principal, String(id), [
              ...(with_deleted === undefined ? [] : [["with_deleted", String(with_deleted)] as const]),
              ...(expand ?? []).map((path) => ["expand[]", path] as const)
            ])
          )
        )
      )
  }
}

const searchTool = (resource: AnyResource, required: ReadonlyArray<string>): ResourceTool => {
  const list = listTool(resource)
  const requiredParameters = [...new Set([...required, ...(resource.requiredFilters ?? [])])]
  const { inputSchema, decode } = listParameters(resource, requiredParameters)
  const q = Schema.Struct({ q: Schema.String.annotate({ description: "Search text (required): accent- and case-insensitive, every word as a prefix." }) })
  const alsoRequired = requiredParameters.length > 0 ? ` Also requires ${requiredParameters.join(", ")}, as over REST.` : ""
  return {
    ...list,
    name: toolName("search", resource.name),
    title: `Search ${plural(resource)}`,
    description: `Searches ${plural(resource)} by text (q), with the list's other arguments.${alsoRequired} ${resource.description}`,
    inputSchema: {
      ...inputSchema,
      properties: { ...inputJsonSchema(q).properties, ...withoutProperties(inputSchema, ["search"]).properties },
      required: ["q", ...inputSchema.required]
    },
    annotations: { ...list.annotations, title: `Search ${plural(resource)}` },
    // The engine's search route checks q and the required parameters exactly as HTTP does.
    run: (principal, { q: text, ...rest }) =>
      decode(rest).pipe(
        Effect.flatMap((params) =>
          withEngine((engine) => engine.search(resource, principal, [...params, ...(typeof text === "string" ? [["q", text] as const] : [])]))
        )
      )
  }
}

const lookupTool = (resource: AnyResource, lookup: Lookup): ResourceTool => {
  const selectors = lookup.selectors ?? []
  const args = Schema.Struct({
    [lookup.parameter]: Schema.String.annotate({ description: lookup.description }),
    ...Object.fromEntries(
      selectors.map((name) => [name, Schema.optionalKey(Schema.Union([Schema.String, Schema.Finite]).annotate({ description: describeFilterArgument(resource, name, false) }))])
    )
  })
  return {
    name: toolName(`get_${resource.singular.replace(/-/g, "_")}_by`, lookup.name),
    title: `Get a ${resource.singular} by ${lookup.name}`,
    description: `${lookup.description} ${resource.description}`,
    inputSchema: inputJsonSchema(args),
    outputSchema: outputJsonSchema(resource.record),
    annotations: { title: `Get a ${resource.singular} by ${lookup.name}`, readOnlyHint: true, openWorldHint: false },
    run: (principal, input) =>
      decodeArguments(args, input).pipe(
        Effect.flatMap((decoded) => {
          const record = decoded as Readonly<Record<string, unknown>>
          const params = selectors.filter((name) => record[name] !== undefined).map((name) => [name, String(record[name])] as const)
          return withEngine((engine) => engine.lookup(resource, principal, lookup.name, String(record[lookup.parameter]), params))
        })
      )
  }
}

const createTool = (resource: AnyResource, write: Writes): ResourceTool => ({
  name: toolName("create", resource.singular),
  title: `Create a ${resource.singular}`,
  description: `Creates a ${resource.singular} and answers the stored record. ${resource.description} ` +
    "Money and quantities are decimal strings such as \"10.50\".",
  // The declared example is a valid body: agents copy its shape.
  inputSchema: { ...describeProperties(inputJsonSchema(write.createInput), { fields: resource.fields, example: write.example }), examples: [write.example] },
  // With createMany a create may answer { data: [...] } instead of the record.
  outputSchema: write.createGroup ? ANY_OBJECT : outputJsonSchema(resource.record),
  annotations: { title: `Create a ${resource.singular}`, readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  run: (principal, input) => withEngine((engine) => engine.create(resource, principal, input))
})

const updateTool = (resource: AnyResource, write: Writes): ResourceTool => {
  const fields = describeProperties(inputJsonSchema(write.updateInput), { fields: resource.fields, example: write.example })
  if ("id" in fields.properties) throw new Error(`${resource.name}: an update input field named "id" would clash with the record id`)
  const id = Schema.Struct({ id: idArgument(resource) })
  const idSchema = inputJsonSchema(id)
  return {
    name: toolName("update", resource.singular),
    title: `Update a ${resource.singular}`,
    description: `Changes the fields given of the ${resource.singular} with this id and answers the stored record; ` +
      "fields left out stay as they are, null clears an optional field.",
    inputSchema: { ...fields, properties: { ...idSchema.properties, ...fields.properties }, required: ["id", ...fields.required] },
    outputSchema: outputJsonSchema(resource.record),
    annotations: { title: `Update a ${resource.singular}`, readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    run: (principal, { id: given, ...changes }) =>
      decodeArguments(id, given === undefined ? {} : { id: given }).pipe(
        Effect.flatMap((args) => withEngine((engine) => engine.update(resource, principal, String(args.id), changes)))
      )
  }
}

const deleteTool = (resource: AnyResource): ResourceTool => {
  const args = Schema.Struct({ id: idArgument(resource) })
  return {
    name: toolName("delete", resource.singular),
    title: `Delete a ${resource.singular}`,
    description: `Soft-deletes the ${resource.singular} with this id: it keeps a deleted_at and leaves lists and get ` +
      "unless with_deleted is true.",
    inputSchema: inputJsonSchema(args),
    outputSchema: outputJsonSchema(Schema.Struct({ id: Schema.String, deleted: Schema.Literal(true) })),
    annotations: { title: `Delete a ${resource.singular}`, readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    run: (principal, input) =>
      decodeArguments(args, input).pipe(
        Effect.flatMap(({ id }) =>
          withEngine((engine) => engine.remove(resource, principal, String(id))).pipe(Effect.as({ id: String(id).toLowerCase(), deleted: true }))
        )
      )
  }
}

/** `allocate_payable`: a declared action, its path parameters and body fields as arguments beside the id. */
const actionTool = (resource: AnyResource, action: ResourceAction): ResourceTool => {
  const parameters = actionParameters(action)
  const ids = Schema.Struct({
    id: idArgument(resource),
    ...Object.fromEntries(parameters.map((name) => [name, Schema.String.annotate({ description: `UUID (${name})` })]))
  })
  const idSchema = inputJsonSchema(ids)
  // A file body (an OFX statement) is one text argument.
  const rawArgument = action.raw ? Schema.Struct({ [action.raw.argument]: Schema.String.annotate({ description: action.raw.description }) }) : undefined
  const body = rawArgument
    ? inputJsonSchema(rawArgument)
    : action.input
    ? describeProperties(inputJsonSchema(action.input), { example: action.example })
    : undefined
  for (const name of Object.keys(body?.properties ?? {})) {
    if (name in idSchema.properties) throw new Error(`${resource.name}.${action.name}: body field "${name}" clashes with a path argument`)
  }
  const name = toolName(action.name, resource.singular)
  const writes = action.permission !== "read"
  return {
    name,
    title: action.summary,
    description: `${action.description} ${resource.description}`,
    inputSchema: {
      ...(body ?? { type: "object", additionalProperties: false }),
      type: "object",
      properties: { ...idSchema.properties, ...body?.properties },
      required: [...idSchema.required, ...(body?.required ?? [])]
    },
    outputSchema: action.output ? outputJsonSchema(action.output) : ANY_OBJECT,
    annotations: { title: action.summary, readOnlyHint: !writes, destructiveHint: action.method === "DELETE", idempotentHint: false, openWorldHint: false },
    run: (principal, input) => {
      const given: Record<string, unknown> = {}
      const rest: Record<string, unknown> = {}
      for (const [key, value] of Object.entries(input)) (key === "id" || parameters.includes(key) ? given : rest)[key] = value
      const extra = Object.keys(rest)
      if (rawArgument) {
        return decodeArguments(Schema.Struct({ ...ids.fields, ...rawArgument.fields }), input).pipe(
          Effect.flatMap((decoded) => {
            const record = decoded as Readonly<Record<string, unknown>>
            const params = Object.fromEntries(parameters.map((parameter) => [parameter, String(record[parameter])]))
            return withEngine((engine) => engine.action(resource, action, principal, String(record.id), params, record[action.raw!.argument]))
          }),
          Effect.map((output) => output ?? { id: String(given.id), done: true })
        )
      }
      if (!action.input && extra.length > 0) {
        return Effect.fail(invalid(`Invalid arguments: ${extra.join(", ")} ${extra.length > 1 ? "are" : "is"} not an argument of this tool`, "INVALID_ARGUMENTS",
          Object.fromEntries(extra.map((key) => [key, ["is not an argument of this tool"]]))))
      }
      return decodeArguments(ids, given).pipe(
        Effect.flatMap((decoded) => {
          const record = decoded as Readonly<Record<string, unknown>>
          const params = Object.fromEntries(parameters.map((parameter) => [parameter, String(record[parameter])]))
          return withEngine((engine) => engine.action(resource, action, principal, String(record.id), params, action.input ? rest : undefined))
        }),
        Effect.map((output) => output ?? { id: String(given.id), done: true })
      )
    }
  }
}

/**
 * The tools of one declared resource: list and get; search and lookups where declared; writes where
 * it takes them. Every property of every input is described (those the tools above leave
 * undescribed, from their schema alone).
 */
export const resourceTools = (resource: AnyResource): ReadonlyArray<ToolDefinition> =>
  [
    listTool(resource),
    ...(resource.searchRoute ? [searchTool(resource, resource.searchRoute.required)] : []),
    getTool(resource),
    ...(resource.lookups ?? []).map((lookup) => lookupTool(resource, lookup)),
    ...(resource.write ? [createTool(resource, resource.write), updateTool(resource, resource.write), deleteTool(resource)] : []),
    ...(resource.actions ?? []).map((action) => actionTool(resource, action))
  ].map((tool) => ({ ...tool, resource: resource.name, inputSchema: describeProperties(tool.inputSchema) }))

let builtIn: ReadonlyArray<ToolDefinition> | undefined

/**
 * Every resource tool, derived from the registry, and a tool per report; `list_tenants` is the server's own (it depends on
 * the caller). Made on first use: their JSON Schemas are slow to derive, which a host
 * start or a CLI command that serves no MCP session should not pay.
 */
export const registryTools = (): ReadonlyArray<ToolDefinition> => (builtIn ??= [...publicResources(allResources).flatMap(resourceTools), ...reportTools()])
