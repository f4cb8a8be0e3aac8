import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import type { HttpApiDecodeError } from "@effect/platform/HttpApiError"
import { actionParameters, allResources, type AnyResource, pageOf, publicResources, type ResourceAction } from "@erp/core"
import { Schema } from "effect"
import { Authentication } from "./authentication.js"
import { completeDocument } from "./openapi-document.js"
import { VersionsGroup } from "./versions.js"
import { expandParameters, listParameters, searchParameters, withDeletedParameter } from "./openapi-parameters.js"
import { withIntegratorHeaders } from "./openapi-headers.js"
import { BadRequest, Conflict, Forbidden, InternalServerError, NotFound, PayloadTooLarge, PreconditionFailed, ServiceUnavailable, TooManyRequests, UnprocessableEntity } from "./errors.js"

const parentIdField = (resource: AnyResource): Record<string, typeof Schema.String> =>
  resource.nestedUnder ? { parentId: Schema.String.annotations({ description: `UUID of the ${resource.nestedUnder.parent().singular}` }) } : {}

const idPath = (resource: AnyResource) =>
  Schema.Struct({
    ...parentIdField(resource),
    id: Schema.String.annotations({ description: resource.idType === "integer" ? "Integer id of the record" : "UUID of the record" })
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


/**
 * The endpoints of one declared resource: list and get for all; a search route
 * and lookups where declared; create, update and delete where it takes writes.
 */
const resourceEndpoints = (resource: AnyResource): ReadonlyArray<HttpApiEndpoint.HttpApiEndpoint.Any> => {
  const page = pageOf(resource.record, `${resource.identifier}Page`)
  const collection = collectionPath(resource)
  const list = HttpApiEndpoint.get("list", collection)
  const endpoints: Array<HttpApiEndpoint.HttpApiEndpoint.Any> = [
    (resource.nestedUnder ? list.setPath(Schema.Struct(parentIdField(resource))) : list)
      .addSuccess(page)
      .annotate(OpenApi.Summary, `List ${resource.name}`)
      .annotate(OpenApi.Description, listDescription(resource))
      .annotate(OpenApi.Transform, (operation) => ({
        ...operation,
        parameters: [...(operation.parameters ?? []).filter((parameter: { readonly in?: string }) => parameter.in === "path"), ...listParameters(resource)]
      }))
  ]
  if (resource.searchRoute) {
    endpoints.push(
      HttpApiEndpoint.get("search", `/${resource.name}/search`)
        .addSuccess(page)
        .annotate(OpenApi.Summary, `Search ${resource.name}`)
        .annotate(OpenApi.Description, `Required: \`q\`${resource.searchRoute.required.map((name) => `, \`${name}\``).join("")}. Accent- and case-insensitive; every word as a prefix. Takes the list's other parameters.`)
        .annotate(OpenApi.Transform, (operation) => ({ ...operation, parameters: [...searchParameters(resource)] }))
    )
  }
  for (const lookup of resource.lookups ?? []) {
    endpoints.push(
      HttpApiEndpoint.get(`lookup_${lookup.name}`, `/${resource.name}/${lookup.name}/:${lookup.parameter}`)
        .setPath(Schema.Struct({ [lookup.parameter]: Schema.String }))
        .addSuccess(resource.record)
        .annotate(OpenApi.Summary, `Get a ${resource.singular} by ${lookup.name}`)
        .annotate(OpenApi.Description, lookup.description)
    )
  }
  endpoints.push(
    HttpApiEndpoint.get("get", `${collection}/:id`)
      .setPath(idPath(resource))
      .addSuccess(resource.record)
      .annotate(OpenApi.Summary, `Get a ${resource.singular}`)
      .annotate(OpenApi.Description, resource.write ? "Query `with_deleted=true` returns a soft-deleted record too." : `One ${resource.singular} by id.`)
      .annotate(OpenApi.Transform, (operation) => ({ ...operation, parameters: [...(operation.parameters ?? []), withDeletedParameter, ...expandParameters(resource)] }))
  )
  if (resource.write) {
    const create = HttpApiEndpoint.post("create", `/${resource.name}`)
      .setPayload(resource.write.createInput)
      .addSuccess(resource.record, { status: 201 })
    endpoints.push(
      // Writes can also answer 409, 413 and 422.
      (resource.write.createGroup ? create.addSuccess(resource.write.createGroup, { status: 201 }) : create)
        .addError(Conflict)
        .addError(PayloadTooLarge)
        .addError(UnprocessableEntity)
        .annotate(OpenApi.Summary, `Create a ${resource.singular}`)
        .annotate(OpenApi.Description, `Creates a ${resource.singular} and answers it (201). Fields the server sets (ids, timestamps, totals) are refused (400 \`READ_ONLY_FIELD\`); business rules answer 422 with \`details.fields\`.`),
      HttpApiEndpoint.patch("update", `/${resource.name}/:id`)
        .setPath(idPath(resource))
        .setPayload(resource.write.updateInput)
        .addSuccess(resource.record)
        .addError(Conflict)
        .addError(PreconditionFailed)
        .addError(PayloadTooLarge)
        .addError(UnprocessableEntity)
        .annotate(OpenApi.Summary, `Update a ${resource.singular}`)
        .annotate(OpenApi.Description, "Fields sent replace stored ones; `null` clears; `metadata`, `br_data` and `us_data` merge key by key."),
      HttpApiEndpoint.del("remove", `/${resource.name}/:id`)
        .setPath(idPath(resource))
        .addSuccess(HttpApiSchema.NoContent)
        .addError(PreconditionFailed)
        .annotate(OpenApi.Summary, `Delete a ${resource.singular}`)
        .annotate(OpenApi.Description, "Soft delete: the record keeps `deleted_at` and leaves default reads.")
    )
  }
  for (const action of resource.actions ?? []) endpoints.push(actionEndpoint(resource, action))
  return endpoints
}

/** `POST /payables/{id}/allocate`: an operation beyond CRUD, with its own body and answer. */
const actionEndpoint = (resource: AnyResource, action: ResourceAction): HttpApiEndpoint.HttpApiEndpoint.Any => {
  const path = `${collectionPath(resource)}/:id/${action.path}` as const
  const params = Schema.Struct(Object.fromEntries(
    [...Object.entries(idPath(resource).fields), ...actionParameters(action).map((name) => [name, Schema.String.annotations({ description: "UUID" })] as const)]
  )) as unknown as Schema.Struct<Record<string, typeof Schema.String>>
  const base = action.method === "POST" ? HttpApiEndpoint.post(`action_${action.name}`, path) : HttpApiEndpoint.del(`action_${action.name}`, path)
  const payload = action.raw
    ? HttpApiSchema.Uint8Array({ contentType: action.raw.contentType }).annotations({ description: action.raw.description })
    : action.input
  const withBody = payload ? base.setPath(params).setPayload(payload) : base.setPath(params)
  return withBody
    .addSuccess(action.output ?? HttpApiSchema.NoContent, { status: action.output ? action.successStatus ?? 200 : 204 })
    .addError(Conflict)
    .addError(PreconditionFailed)
    .addError(PayloadTooLarge)
    .addError(UnprocessableEntity)
    .annotate(OpenApi.Summary, action.summary)
    .annotate(OpenApi.Description, action.description)
}

/** One group per declared resource, with the errors every operation can answer. */
export const resourceGroup = (resource: AnyResource) =>
  resourceEndpoints(resource)
    .reduce(
      (group, endpoint) => group.add(endpoint),
      HttpApiGroup.make(resource.name) as HttpApiGroup.HttpApiGroup<string, HttpApiEndpoint.HttpApiEndpoint.Any, never>
    )
    .addError(BadRequest)
    .addError(Forbidden)
    .addError(NotFound)
    .addError(TooManyRequests)
    .middleware(Authentication)
    .annotate(OpenApi.Description, resource.description)

export const Health = Schema.Struct({ status: Schema.Literal("ok"), version: Schema.String }).annotations({ identifier: "Health" })

export class HealthGroup extends HttpApiGroup.make("health")
  .add(HttpApiEndpoint.get("health", "/health").addSuccess(Health)
    .annotate(OpenApi.Summary, "Liveness and store check")
    .annotate(OpenApi.Description, "200 `{ status: \"ok\", version }` while the store answers a query; 500 `STORE_UNAVAILABLE` when it does not."))
  .annotate(OpenApi.Exclude, false)
  .annotate(OpenApi.Description, "Liveness: answers while the store answers. No credentials needed.") {}

const base = HttpApi.make("erp")
  .add(HealthGroup)
  .add(VersionsGroup)
  .addError(InternalServerError)
  .addError(ServiceUnavailable)
  .annotate(OpenApi.Title, "erp Integrations API")
  .annotate(OpenApi.Version, "v1")
  .annotate(OpenApi.Description, "Multi-tenant ERP integrations API. Send `api-version: v1` (the default) to pin the contract.")

/** One resource's group, its endpoints known only at run time. */
export type ResourceGroup = ReturnType<typeof resourceGroup>

/** A contract over a registry: health plus one group per declared resource. */
export const makeApi = (registry: ReadonlyArray<AnyResource>) =>
  publicResources(registry)
    .reduce((api, resource) => api.add(resourceGroup(resource)) as typeof base, base)
    // One transform (a second annotation would replace the first): the integrator headers, then what the generator leaves out.
    .annotate(OpenApi.Transform, (document) => completeDocument(registry)(withIntegratorHeaders(document)))

/** The whole contract of the built-in registry. */
export const Api = makeApi(allResources)

/**
 * The registry builds groups at run time, so their names are not literal types;
 * handlers for a resource group see the API through this view.
 */
export type ResourceApi = HttpApi.HttpApi<"erp", ResourceGroup, HttpApiDecodeError | InternalServerError | ServiceUnavailable>
