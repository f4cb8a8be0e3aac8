import {
  type AnyResource,
  type DomainError,
  fieldErrors,
  type InvalidRequest,
  invalid,
  type Principal,
  ResourceEngine,
  resources,
  Tenancy
} from "@erp/core"
import type { ToolAnnotations } from "@modelcontextprotocol/sdk/types.js"
import { type Context, Effect, Schema } from "effect"
import { inputJsonSchema, type ObjectJsonSchema } from "./json-schema.js"
import { listArguments, toQueryParams, unsupportedListArguments } from "./list-arguments.js"

export type ToolArguments = Readonly<Record<string, unknown>>

/** One MCP tool: what `tools/list` shows, and what a call runs for the authenticated caller. */
export interface ToolDefinition {
  readonly name: string
  readonly title: string
  readonly description: string
  readonly inputSchema: ObjectJsonSchema
  readonly annotations: ToolAnnotations
  readonly run: (principal: Principal, args: ToolArguments) => Effect.Effect<unknown, DomainError, ResourceEngine | Tenancy>
}

/** Tool names allow letters, digits and `_`: `sales-orders` becomes `sales_orders`. */
const toolName = (verb: string, noun: string) => `${verb}_${noun.replace(/[^A-Za-z0-9]+/g, "_")}`

const plural = (resource: AnyResource) => resource.name.replace(/-/g, " ")

/** Tool arguments are checked like an HTTP body: every problem named, unknown names refused. */
const decodeArguments = <A, I>(schema: Schema.Schema<A, I>, args: ToolArguments): Effect.Effect<A, InvalidRequest> =>
  Schema.decodeUnknown(schema, { errors: "all", onExcessProperty: "error" })(args).pipe(
    Effect.mapError((error) => {
      const fields = fieldErrors(error)
      const summary = Object.entries(fields).map(([field, reasons]) => `${field} ${reasons.join(", ")}`).join("; ")
      return invalid(`Invalid arguments: ${summary}`, "INVALID_ARGUMENTS", fields)
    })
  )

const withoutProperties = (schema: ObjectJsonSchema, names: ReadonlyArray<string>): ObjectJsonSchema => ({
  ...schema,
  properties: Object.fromEntries(Object.entries(schema.properties).filter(([name]) => !names.includes(name))),
  required: schema.required.filter((name) => !names.includes(name))
})

const idArgument = (resource: AnyResource) =>
  Schema.String.annotations({ description: `UUID of the ${resource.singular}` })

const withEngine = <A, E>(use: (engine: Context.Tag.Service<ResourceEngine>) => Effect.Effect<A, E>) => Effect.flatMap(ResourceEngine, use)

const listTool = (resource: AnyResource): ToolDefinition => {
  const args = listArguments(resource)
  const { field, order } = resource.defaultSort
  return {
    name: toolName("list", resource.name),
    title: `List ${plural(resource)}`,
    description: `${resource.description} Returns one page as {data, pagination, meta}, ordered by ${field} ${order} unless sort says ` +
      "otherwise. While pagination.has_next_page is true, call again with cursor set to pagination.next_cursor. " +
      "See the filters argument for the fields you can filter on.",
    inputSchema: withoutProperties(inputJsonSchema(args), unsupportedListArguments(resource)),
    annotations: { title: `List ${plural(resource)}`, readOnlyHint: true, openWorldHint: false },
    run: (principal, input) =>
      decodeArguments(args, input).pipe(
        Effect.flatMap(toQueryParams),
        Effect.flatMap((params) => withEngine((engine) => engine.list(resource, principal, params)))
      )
  }
}

const getTool = (resource: AnyResource): ToolDefinition => {
  const args = Schema.Struct({
    id: idArgument(resource),
    with_deleted: Schema.optional(Schema.Boolean.annotations({ description: "Also find it when soft-deleted (default false)." }))
  })
  return {
    name: toolName("get", resource.singular),
    title: `Get a ${resource.singular}`,
    description: `One ${resource.singular} by id. ${resource.description}`,
    inputSchema: inputJsonSchema(args),
    annotations: { title: `Get a ${resource.singular}`, readOnlyHint: true, openWorldHint: false },
    run: (principal, input) =>
      decodeArguments(args, input).pipe(
        Effect.flatMap(({ id, with_deleted }) =>
          withEngine((engine) =>
            engine.get(resource, principal, id, with_deleted === undefined ? [] : [["with_deleted", String(with_deleted)]])
          )
        )
      )
  }
}

const createTool = (resource: AnyResource): ToolDefinition => ({
  name: toolName("create", resource.singular),
  title: `Create a ${resource.singular}`,
  description: `Creates a ${resource.singular} and answers the stored record. ${resource.description} ` +
    "Money and quantities are decimal strings such as \"10.50\".",
  inputSchema: inputJsonSchema(resource.createInput),
  annotations: { title: `Create a ${resource.singular}`, readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  run: (principal, input) => withEngine((engine) => engine.create(resource, principal, input))
})

const updateTool = (resource: AnyResource): ToolDefinition => {
  const fields = inputJsonSchema(resource.updateInput)
  if ("id" in fields.properties) throw new Error(`${resource.name}: an update input field named "id" would clash with the record id`)
  const id = Schema.Struct({ id: idArgument(resource) })
  const idSchema = inputJsonSchema(id)
  return {
    name: toolName("update", resource.singular),
    title: `Update a ${resource.singular}`,
    description: `Changes the fields given of the ${resource.singular} with this id and answers the stored record; ` +
      "fields left out stay as they are, null clears an optional field.",
    inputSchema: { ...fields, properties: { ...idSchema.properties, ...fields.properties }, required: ["id", ...fields.required] },
    annotations: { title: `Update a ${resource.singular}`, readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    run: (principal, { id: given, ...changes }) =>
      decodeArguments(id, given === undefined ? {} : { id: given }).pipe(
        Effect.flatMap((args) => withEngine((engine) => engine.update(resource, principal, args.id, changes)))
      )
  }
}

const deleteTool = (resource: AnyResource): ToolDefinition => {
  const args = Schema.Struct({ id: idArgument(resource) })
  return {
    name: toolName("delete", resource.singular),
    title: `Delete a ${resource.singular}`,
    description: `Soft-deletes the ${resource.singular} with this id: it keeps a deleted_at and leaves lists and get ` +
      "unless with_deleted is true.",
    inputSchema: inputJsonSchema(args),
    annotations: { title: `Delete a ${resource.singular}`, readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    run: (principal, input) =>
      decodeArguments(args, input).pipe(
        Effect.flatMap(({ id }) =>
          withEngine((engine) => engine.remove(resource, principal, id)).pipe(Effect.as({ id: id.toLowerCase(), deleted: true }))
        )
      )
  }
}

/** The five tools of one declared resource. */
export const resourceTools = (resource: AnyResource): ReadonlyArray<ToolDefinition> => [
  listTool(resource),
  getTool(resource),
  createTool(resource),
  updateTool(resource),
  deleteTool(resource)
]

const noArguments = (input: ToolArguments): Effect.Effect<void, InvalidRequest> => {
  const names = Object.keys(input)
  return names.length === 0
    ? Effect.void
    : Effect.fail(invalid(`Invalid arguments: this tool takes none, got ${names.join(", ")}`, "INVALID_ARGUMENTS",
      Object.fromEntries(names.map((name) => [name, ["is not an argument of this tool"]]))))
}

/** The spec's `list_tenants`: an API key belongs to exactly one tenant, so it answers that one. */
export const listTenantsTool: ToolDefinition = {
  name: "list_tenants",
  title: "List tenants",
  description: "The tenants this credential acts on, as {data: [{id, name, country_code}]}. An API key belongs to exactly one " +
    "tenant, and every other tool works on it.",
  inputSchema: { type: "object", properties: {}, required: [], additionalProperties: false },
  annotations: { title: "List tenants", readOnlyHint: true, openWorldHint: false },
  run: (principal, input) =>
    noArguments(input).pipe(
      Effect.zipRight(Effect.flatMap(Tenancy, (tenancy) => tenancy.getTenant(principal.tenantId))),
      Effect.map(({ id, name, country_code }) => ({ data: [{ id, name, country_code }] }))
    )
}

/** Every tool the server offers, derived from the resource registry. */
export const tools: ReadonlyArray<ToolDefinition> = [listTenantsTool, ...resources.flatMap(resourceTools)]
