import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import type { HttpApiDecodeError } from "@effect/platform/HttpApiError"
import { type AnyResource, pageOf, resources } from "@erp/core"
import { Schema } from "effect"
import { Authentication } from "./authentication.js"
import { listParameters, withDeletedParameter } from "./openapi-parameters.js"
import { BadRequest, Conflict, Forbidden, InternalServerError, NotFound, PayloadTooLarge, TooManyRequests, UnprocessableEntity } from "./errors.js"

const IdPath = Schema.Struct({ id: Schema.String.annotations({ description: "UUID of the record" }) })

const listDescription = (resource: AnyResource) => {
  const fields = Object.entries(resource.filters)
    .map(([name, field]) => `\`${name}\` (${field.array ? "string array" : field.type}${field.nullable ? ", nullable" : ""})`)
    .join(", ")
  const sortable = Object.entries(resource.filters).filter(([, field]) => field.sortable).map(([name]) => `\`${name}\``).join(", ")
  return [
    `A page of ${resource.name} (keyset cursor pagination). Default sort \`${resource.defaultSort.field}:${resource.defaultSort.order}\`.`,
    `Common parameters: \`cursor\`, \`limit\` (1-100, default 20), \`sort\` (${sortable}), \`search\`${resource.search?.payload ? ", `include_payload_search`" : ""}, \`with_deleted\`, \`filter\` (JSON form).`,
    `Filters (\`field=v\`, \`field[op]=v\`): ${fields}.`
  ].join("\n\n")
}

/** The endpoints of one declared resource; every resource gets the same five. */
export const resourceGroup = (resource: AnyResource) =>
  HttpApiGroup.make(resource.name)
    .add(
      HttpApiEndpoint.get("list", `/${resource.name}`)
        .addSuccess(pageOf(resource.record, `${resource.title}Page`))
        .annotate(OpenApi.Summary, `List ${resource.name}`)
        .annotate(OpenApi.Description, listDescription(resource))
        .annotate(OpenApi.Transform, (operation) => ({ ...operation, parameters: [...listParameters(resource)] }))
    )
    .add(
      HttpApiEndpoint.get("get", `/${resource.name}/:id`)
        .setPath(IdPath)
        .addSuccess(resource.record)
        .annotate(OpenApi.Summary, `Get a ${resource.singular}`)
        .annotate(OpenApi.Description, "Query `with_deleted=true` returns a soft-deleted record too.")
        .annotate(OpenApi.Transform, (operation) => ({ ...operation, parameters: [...(operation.parameters ?? []), withDeletedParameter] }))
    )
    .add(
      HttpApiEndpoint.post("create", `/${resource.name}`)
        .setPayload(resource.createInput)
        .addSuccess(resource.record, { status: 201 })
        .annotate(OpenApi.Summary, `Create a ${resource.singular}`)
    )
    .add(
      HttpApiEndpoint.patch("update", `/${resource.name}/:id`)
        .setPath(IdPath)
        .setPayload(resource.updateInput)
        .addSuccess(resource.record)
        .annotate(OpenApi.Summary, `Update a ${resource.singular}`)
        .annotate(OpenApi.Description, "Fields sent replace stored ones; `null` clears; `metadata`, `br_data` and `us_data` merge key by key.")
    )
    .add(
      HttpApiEndpoint.del("remove", `/${resource.name}/:id`)
        .setPath(IdPath)
        .addSuccess(HttpApiSchema.NoContent)
        .annotate(OpenApi.Summary, `Delete a ${resource.singular}`)
        .annotate(OpenApi.Description, "Soft delete: the record keeps `deleted_at` and leaves default reads.")
    )
    .addError(BadRequest)
    .addError(Forbidden)
    .addError(NotFound)
    .addError(Conflict)
    .addError(PayloadTooLarge)
    .addError(UnprocessableEntity)
    .addError(TooManyRequests)
    .middleware(Authentication)
    .annotate(OpenApi.Description, resource.description)

export const Health = Schema.Struct({ status: Schema.Literal("ok"), version: Schema.String }).annotations({ identifier: "Health" })

export class HealthGroup extends HttpApiGroup.make("health")
  .add(HttpApiEndpoint.get("health", "/health").addSuccess(Health).annotate(OpenApi.Summary, "Liveness and store check"))
  .annotate(OpenApi.Exclude, false) {}

const base = HttpApi.make("erp")
  .add(HealthGroup)
  .addError(InternalServerError)
  .annotate(OpenApi.Title, "erp Integrations API")
  .annotate(OpenApi.Version, "v1")
  .annotate(OpenApi.Description, "Multi-tenant ERP integrations API. Send `api-version: v1` (the default) to pin the contract.")

/** One resource's group; every resource's has this shape, under its own name. */
export type ResourceGroup = ReturnType<typeof resourceGroup>

/** The whole contract: health plus one group per declared resource. */
export const Api = resources.reduce((api, resource) => api.add(resourceGroup(resource)) as typeof base, base)

/**
 * The registry builds groups at run time, so their names are not literal types;
 * handlers for a resource group see the API through this view.
 */
export const ResourceApi = Api as unknown as HttpApi.HttpApi<"erp", ResourceGroup, HttpApiDecodeError | InternalServerError>
