import { actionParameters, allResources, type AnyResource, pageOf, publicResources, type ResourceAction } from "@erp/core"
import { Schema, SchemaAST } from "effect"
import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Authentication } from "./authentication.js"
import { BodyLimit, RequestBody } from "./request-body.js"
import { type ApiErrorSchema, BadRequest, Conflict, Forbidden, NotFound, PayloadTooLarge, PreconditionFailed, SERVER_ERRORS, TooManyRequests, UnprocessableEntity } from "./errors.js"
import { completeDocument } from "./openapi-document.js"
import { withIntegratorHeaders } from "./openapi-headers.js"
import { expandParameters, listParameters, searchParameters, withDeletedParameter } from "./openapi-parameters.js"
import { VersionsGroup } from "./versions.js"
import { ReportsGroup } from "./reports-api.js"

/** Path parameters are strings (ids are checked by the engine, which answers the spec's 400 or 404). */
type PathFields = Record<string, Schema.String>

const parentIdField = (resource: AnyResource): PathFields =>
  resource.nestedUnder ? { parentId: Schema.String.annotate({ description: `UUID of the ${resource.nestedUnder.parent().singular}` }) } : {}

const idFields = (resource: AnyResource): PathFields => ({
  ...parentIdField(resource),
  id: Schema.String.annotate({ description: resource.idType === "integer" ? "Integer id of the record" : "UUID of the record" })
})

/** Where a resource's records are: `/<name>`, or under their parent (`/webhook-endpoints/:parentId/deliveries`). */
const collectionPath = (resource: AnyResource): `/${string}` =>
  resource.nestedUnder ? `/${resource.nestedUnder.parent().name}/:parentId/${resource.nestedUnder.segment}` : `/${resource.name}`

const listDescription = (resource: AnyResource) => {
  const fields = Object.entries(resource.filters)
    .map(([name, field]) => `\`${name}\` (${field.array ? "string array" : field.type}${field.nullable ? ", nullable" : ""})`)
    .join(", ")
  const required = resource.requiredFilters?.length ? ` Required: ${resource.requiredFilters.map((name) => `\`${name}\``).join(", ")}.` : ""
  return [
    `A page of ${resource.name} (keyset cursor pagination). Default sort \`${resource.defaultSort.field}:${resource.defaultSort.order}\`.${required}`,
    `Filters (\`field=v\`, \`field[op]=v\`): ${fields}.`
  ].join("\n\n")
}

/** An answer without a body (the document says "Success", as for any answer it describes no further). */
const NoContent = HttpApiSchema.NoContent.annotate({ description: "Success" })

/** What every operation on a resource may answer besides its success (the credential's own refusals come with `Authentication`). */
const READ_ERRORS = [BadRequest, Forbidden, NotFound, TooManyRequests, ...SERVER_ERRORS] as const
/** Writes can also answer 409, 413 and 422. */
const CREATE_ERRORS = [...READ_ERRORS, Conflict, PayloadTooLarge, UnprocessableEntity] as const
/** Writes on a record take `If-Match` too: 412. */
const RECORD_WRITE_ERRORS = [...READ_ERRORS, Conflict, PreconditionFailed, PayloadTooLarge, UnprocessableEntity] as const

/** The schemas of a resource's bodies and answers (core's declarations: codecs that need no services). */
type Body = Schema.Codec<unknown, unknown>

/**
 * A JSON body as the builder hands it to its handler: any JSON value, unchanged. The use case
 * decodes it, once for every transport (aliases renamed, read-only fields refused, 422 with
 * `details.fields`); the document shows the declared input schema.
 */
const jsonBody = (input: Body): Body =>
  Schema.Any.check(Schema.makeFilter(() => true, {
    representation: { id: "erp/json-body", payload: null, schemas: [SchemaAST.toEncoded(input.ast)] },
    toJsonSchema: ({ schemas }) => schemas[0] ?? {}
  }))

/**
 * One operation of a resource, as the registry declares it: its path parameters (strings,
 * none on a collection), its request body when it takes one, its successes and its errors.
 * The engine reads the query string itself (the list's parameters are documented by a
 * transform). Every operation has the one type `ResourceEndpoint`: the registry's
 * operations are only known at run time, so their handlers are written against it.
 */
const operation = (
  method: "GET" | "POST" | "PATCH" | "DELETE",
  name: string,
  path: `/${string}`,
  options: {
    readonly params: PathFields
    readonly payload?: Body | undefined
    readonly success: Body | ReadonlyArray<Body>
    readonly error: ReadonlyArray<ApiErrorSchema>
  }
) => {
  const endpoint = HttpApiEndpoint.make(method)(name, path, {
    params: Schema.Struct(options.params),
    payload: options.payload,
    success: options.success,
    error: options.error
  })
  // Only an operation with a body reads one; the group's `Authentication` wraps this, so a body is read once its credential is let in.
  return options.payload ? endpoint.middleware(RequestBody) : endpoint
}

/** A resource's operation, whichever it is (the handlers' view of it). */
export type ResourceEndpoint = ReturnType<typeof operation>

/**
 * The endpoints of one declared resource: list and get for all; a search route
 * and lookups where declared; create, update and delete where it takes writes.
 */
const resourceEndpoints = (resource: AnyResource) => {
  const page = pageOf(resource.record, `${resource.identifier}Page`)
  const collection = collectionPath(resource)
  const endpoints: Array<ResourceEndpoint> = [
    operation("GET", "list", collection, { params: parentIdField(resource), success: page, error: READ_ERRORS })
      .annotate(OpenApi.Summary, `List ${resource.name}`)
      .annotate(OpenApi.Description, listDescription(resource))
      .annotate(OpenApi.Transform, (operation) => ({
        ...operation,
        parameters: [...(operation.parameters ?? []).filter((parameter: { readonly in?: string }) => parameter.in === "path"), ...listParameters(resource)]
      }))
  ]
  if (resource.searchRoute) {
    endpoints.push(
      operation("GET", "search", `/${resource.name}/search`, { params: {}, success: page, error: READ_ERRORS })
        .annotate(OpenApi.Summary, `Search ${resource.name}`)
        .annotate(OpenApi.Description, `Required: \`q\`${resource.searchRoute.required.map((name) => `, \`${name}\``).join("")}. Accent- and case-insensitive; every word as a prefix. Takes the list's other parameters.`)
        .annotate(OpenApi.Transform, (operation) => ({ ...operation, parameters: [...searchParameters(resource)] }))
    )
  }
  for (const lookup of resource.lookups ?? []) {
    endpoints.push(
      operation("GET", `lookup_${lookup.name}`, `/${resource.name}/${lookup.name}/:${lookup.parameter}`, {
        params: { [lookup.parameter]: Schema.String },
        success: resource.record,
        error: READ_ERRORS
      })
        .annotate(OpenApi.Summary, `Get a ${resource.singular} by ${lookup.name}`)
        .annotate(OpenApi.Description, lookup.description)
    )
  }
  endpoints.push(
    operation("GET", "get", `${collection}/:id`, { params: idFields(resource), success: resource.record, error: READ_ERRORS })
      .annotate(OpenApi.Summary, `Get a ${resource.singular}`)
      .annotate(OpenApi.Description, resource.write ? "Query `with_deleted=true` returns a soft-deleted record too." : `One ${resource.singular} by id.`)
      .annotate(OpenApi.Transform, (operation) => ({ ...operation, parameters: [...(operation.parameters ?? []), withDeletedParameter, ...expandParameters(resource)] }))
  )
  if (resource.write) {
    const created = resource.record.pipe(HttpApiSchema.status(201))
    endpoints.push(
      operation("POST", "create", `/${resource.name}`, {
        params: {},
        payload: jsonBody(resource.write.createInput),
        success: resource.write.createGroup ? [created, resource.write.createGroup.pipe(HttpApiSchema.status(201))] : created,
        error: CREATE_ERRORS
      })
        .annotate(OpenApi.Summary, `Create a ${resource.singular}`)
        .annotate(OpenApi.Description, `Creates a ${resource.singular} and answers it (201). Fields the server sets (ids, timestamps, totals) are refused (400 \`READ_ONLY_FIELD\`); business rules answer 422 with \`details.fields\`.`),
      operation("PATCH", "update", `/${resource.name}/:id`, {
        params: idFields(resource),
        payload: jsonBody(resource.write.updateInput),
        success: resource.record,
        error: RECORD_WRITE_ERRORS
      })
        .annotate(OpenApi.Summary, `Update a ${resource.singular}`)
        .annotate(OpenApi.Description, "Fields sent replace stored ones; `null` clears; `metadata`, `br_data` and `us_data` merge key by key."),
      operation("DELETE", "remove", `/${resource.name}/:id`, {
        params: idFields(resource),
        success: NoContent,
        error: [...READ_ERRORS, PreconditionFailed]
      })
        .annotate(OpenApi.Summary, `Delete a ${resource.singular}`)
        .annotate(OpenApi.Description, "Soft delete: the record keeps `deleted_at` and leaves default reads.")
    )
  }
  for (const action of resource.actions ?? []) endpoints.push(actionEndpoint(resource, action))
  return endpoints
}

/** `POST /payables/{id}/allocate`: an operation beyond CRUD, with its own body and answer. */
const actionEndpoint = (resource: AnyResource, action: ResourceAction): ResourceEndpoint => {
  const params: PathFields = {
    ...idFields(resource),
    ...Object.fromEntries(actionParameters(action).map((name) => [name, Schema.String.annotate({ description: "UUID" })]))
  }
  const payload = action.raw
    ? Schema.Uint8Array.pipe(HttpApiSchema.asUint8Array({ contentType: action.raw.contentType })).annotate({ description: action.raw.description })
    : action.input && jsonBody(action.input)
  const success = action.output ? action.output.pipe(HttpApiSchema.status(action.successStatus ?? 200)) : NoContent
  const endpoint = operation(action.method, `action_${action.name}`, `${collectionPath(resource)}/:id/${action.path}`, { params, payload, success, error: RECORD_WRITE_ERRORS })
  return (action.raw ? endpoint.annotate(BodyLimit, action.raw.maxBytes) : endpoint)
    .annotate(OpenApi.Summary, action.summary)
    .annotate(OpenApi.Description, action.description)
}

const groups = new WeakMap<AnyResource, ReturnType<typeof makeResourceGroup>>()

const makeResourceGroup = (resource: AnyResource) => {
  const [first, ...rest] = resourceEndpoints(resource)
  return HttpApiGroup.make(resource.name)
    .add(first, ...rest)
    .middleware(Authentication)
    .annotate(OpenApi.Description, resource.description)
}

/**
 * One group per declared resource, every operation behind `Authentication`. A resource's
 * group is made once: the API's document and the handlers' routes are the same endpoints.
 */
export const resourceGroup = (resource: AnyResource): ResourceGroup => {
  const made = groups.get(resource)
  if (made) return made
  const group = makeResourceGroup(resource)
  groups.set(resource, group)
  return group
}

/** One resource's group, its endpoints known only at run time. */
export type ResourceGroup = ReturnType<typeof makeResourceGroup>

export const Health = Schema.Struct({ status: Schema.Literal("ok"), version: Schema.String }).annotate({ identifier: "Health" })

export class HealthGroup extends HttpApiGroup.make("health")
  .add(
    // Any request can be refused for its `api-version` (400), this one included.
    HttpApiEndpoint.get("health", "/health", { success: Health, error: [BadRequest, ...SERVER_ERRORS] })
      .annotate(OpenApi.Summary, "Liveness and store check")
      .annotate(OpenApi.Description, "200 `{ status: \"ok\", version }` while the store answers a query; 500 `STORE_UNAVAILABLE` when it does not.")
  )
  .annotate(OpenApi.Exclude, false)
  .annotate(OpenApi.Description, "Liveness: answers while the store answers. No credentials needed.") {}

/** A contract over a registry: health, versions, and one group per declared resource. */
export const makeApi = (registry: ReadonlyArray<AnyResource>) =>
  HttpApi.make("erp")
    .add(HealthGroup, VersionsGroup, ...publicResources(registry).map(resourceGroup), ReportsGroup)
    .annotate(OpenApi.Title, "erp Integrations API")
    .annotate(OpenApi.Version, "v1")
    .annotate(OpenApi.Description, "Multi-tenant ERP integrations API. Send `api-version: v1` (the default) to pin the contract.")
    // One transform (a second annotation would replace the first): the integrator headers, then what the generator leaves out.
    .annotate(OpenApi.Transform, (document) => completeDocument(registry)(withIntegratorHeaders(document)))

/** The whole contract of the built-in registry. */
export const Api = makeApi(allResources)

/** An API made by `makeApi`, whatever its registry. */
export type ErpApi = typeof Api

/**
 * The registry builds groups at run time, so their names are not literal types;
 * the handlers of a resource's group see it through an API of that group alone.
 */
export type ResourceApi = HttpApi.HttpApi<"erp", ResourceGroup>
