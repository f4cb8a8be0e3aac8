import { type AnyResource, DEFAULT_LIMIT, publicResources, reasonPhrase } from "@erp/core"
import { versionsBody } from "./versions.js"

type Json = Record<string, unknown>

/**
 * How a client authenticates, shown on the security scheme (and so on the docs page
 * beside every operation).
 */
export const AUTHENTICATION = [
  "Every operation except `GET /health`, `GET /versions`, `/openapi.json`, `/docs` and the OAuth endpoints needs `Authorization: Bearer <token>` (the bare token is accepted too).",
  "",
  "- **API key**: `sk_<publicId>_<secret>`, created by an operator (`erp keys create --tenant T --name N --permission products:read`, the option repeated for each permission, or `--all`) or by a tenant admin in the panel (`/panel`, API keys). It acts as its tenant with exactly its permissions.",
  "- **OAuth 2.1** (authorization code with PKCE): discover the server at `/.well-known/oauth-authorization-server`, register a client (`erp oauth-clients create`, or dynamic registration when enabled), send the user to `/oauth/authorize`, trade the code at `/oauth/token`. The access token (`svc_…`, or an ES256 JWT when `resource` names this server) acts as the user in the tenant chosen on the consent page, within the user's role and the token's scopes.",
  "",
  "",
  "For example: `curl -H \"Authorization: Bearer sk_…\" https://erp.example.com/products?limit=10`.",
  "",
  "A missing or invalid credential is 401 with `WWW-Authenticate` pointing at `/.well-known/oauth-protected-resource`; a valid one without the permission is 403 `PERMISSION_DENIED`, whose message names it as `resource:action` (`products:create`)."
].join("\n")

const EXAMPLE_UUID = "0b0f3f4e-6a39-4c55-9d1c-2f4b8f1a7c21"

const errorExample = (status: number, message: string, code?: string, fields?: Record<string, ReadonlyArray<string>>) => ({
  status_code: status,
  error: reasonPhrase(status),
  message,
  ...(code ? { code } : {}),
  ...(fields ? { details: { fields } } : {})
})

/** One example error body per status an operation may answer, the 404 with its resource's own code. */
const errorExamples = (resource: AnyResource | undefined): Readonly<Record<string, Json>> => ({
  "400": errorExample(400, "limit must be an integer from 1 to 100, got \"0\"", "INVALID_PARAMETER"),
  "401": errorExample(401, "Authentication required: send Authorization: Bearer <token>", "MISSING_CREDENTIALS"),
  "403": errorExample(403, `This credential lacks the ${resource?.permission ?? "products"}:read permission`, "PERMISSION_DENIED"),
  "404": errorExample(404, `${resource?.title ?? "Record"} not found`, resource?.notFoundCode ?? "ROUTE_NOT_FOUND"),
  "409": errorExample(409, `A ${resource?.title.toLowerCase() ?? "record"} with this reference_code already exists`, "DUPLICATE"),
  "412": errorExample(412, "The record changed since the If-Match ETag was read: read it again, then retry", "PRECONDITION_FAILED"),
  "413": errorExample(413, "The request body exceeds 1048576 bytes", "PAYLOAD_TOO_LARGE"),
  "422": errorExample(422, "A value breaks a rule of this record", "VALIDATION_FAILED", { status: ["cannot change from cancelled to draft"] }),
  "429": errorExample(429, "Too many requests. Retry in 1 second.", "RATE_LIMITED"),
  "500": errorExample(500, "Internal server error", "INTERNAL_ERROR"),
  "503": errorExample(503, "The store is busy; try again shortly", "STORE_BUSY")
})

const emptyPage = {
  data: [],
  pagination: {
    limit: DEFAULT_LIMIT,
    has_next_page: false,
    has_previous_page: false,
    current_query_cursor: "eyJkIjoibmV4dCJ9.c2ln",
    current_page_cursor: "eyJkIjoibmV4dCJ9.c2ln",
    next_cursor: null,
    previous_cursor: null
  },
  meta: { filters: {}, search: null, sort: { field: "created_at", order: "desc" } }
}

/** The create example without the fields an update may not send. */
const updateExample = (resource: AnyResource): Json | undefined => {
  const write = resource.write
  if (!write) return undefined
  const updatable = new Set(
    Object.entries(resource.fields).filter(([, field]) => field.input && field.input.on === "both").map(([name]) => name)
  )
  const picked = Object.entries(write.example).filter(([name]) => updatable.has(name)).slice(0, 2)
  return picked.length > 0 ? Object.fromEntries(picked) : undefined
}

const jsonContent = (response: Json | undefined): Json | undefined => {
  const content = response?.content as Record<string, Json> | undefined
  return content?.["application/json"]
}

/**
 * Effect writes `Schema.Unknown` as `{ "$id": "/schemas/unknown" }` wherever it appears;
 * many schemas with one `$id` make validators (and example checks) refuse the document.
 */
const dropPlaceholderIds = (value: unknown): void => {
  if (Array.isArray(value)) return value.forEach(dropPlaceholderIds)
  if (value === null || typeof value !== "object") return
  const object = value as Json
  if (typeof object.$id === "string" && object.$id.startsWith("/schemas/")) delete object.$id
  Object.values(object).forEach(dropPlaceholderIds)
}

/**
 * The generator writes a union as `anyOf` even when it has one member, and repeats a member
 * two schemas of the union both encode to (`null`): one schema, each member once.
 */
const simplifyCompositions = (value: unknown): void => {
  if (Array.isArray(value)) return value.forEach(simplifyCompositions)
  if (value === null || typeof value !== "object") return
  const object = value as Json
  Object.values(object).forEach(simplifyCompositions)
  const members = object.anyOf
  if (!Array.isArray(members)) return
  const seen = new Set<string>()
  const distinct = members.filter((member) => {
    const key = JSON.stringify(member)
    return seen.has(key) ? false : (seen.add(key), true)
  })
  if (distinct.length === 1 && typeof distinct[0] === "object" && distinct[0] !== null && !Object.keys(distinct[0] as Json).some((key) => key in object && key !== "anyOf")) {
    delete object.anyOf
    Object.assign(object, distinct[0])
  } else object.anyOf = distinct
}

/** `products.get` → the resource and the endpoint name. */
const operationOf = (operationId: string, byName: ReadonlyMap<string, AnyResource>) => {
  const dot = operationId.lastIndexOf(".")
  return { resource: byName.get(operationId.slice(0, dot)), endpoint: operationId.slice(dot + 1) }
}

const withExample = (media: Json | undefined, example: unknown) => {
  if (media && example !== undefined && media.example === undefined && media.examples === undefined) media.example = example
}

/**
 * What the generator leaves out, derived from the registry: where the API is served,
 * how to authenticate, the error bodies as the spec writes them (never the platform's
 * decode error: the handlers decode input themselves and answer the spec's 400), and an
 * example for every operation (request bodies from the declarations' examples, error
 * bodies per status, an empty page for lists).
 */
export const completeDocument = (registry: ReadonlyArray<AnyResource>) => (input: Record<string, unknown>): Record<string, unknown> => {
  const spec = structuredClone(input) as Json & { paths: Record<string, Record<string, Json>>; components: Json }
  const byName = new Map(publicResources(registry).map((resource) => [resource.name, resource]))
  const info = spec.info as Json
  spec.info = {
    ...info,
    description: `${String(info.description ?? "")}\n\n## Authentication\n\n${AUTHENTICATION}\n\n## Versions\n\n\`GET /versions\` lists the versions and the dated changelog.`,
    license: { name: "MIT", identifier: "MIT" }
  }
  spec.servers = [{
    url: "{base_url}",
    description: "The host's address, with the base path where the API is mounted (`https://app.example.com/erp`)",
    variables: { base_url: { default: "http://localhost:3000", description: "Public base URL of the erp host" } }
  }]
  const components = spec.components as { schemas: Record<string, unknown>; securitySchemes?: Record<string, Json> }
  for (const scheme of Object.values(components.securitySchemes ?? {})) scheme.description = AUTHENTICATION
  delete components.schemas.HttpApiDecodeError
  delete components.schemas.Issue
  delete components.schemas.PropertyKey

  for (const item of Object.values(spec.paths)) {
    for (const operation of Object.values(item)) {
      const operationId = String(operation.operationId ?? "")
      const { resource, endpoint } = operationOf(operationId, byName)
      const responses = (operation.responses ?? {}) as Record<string, Json>
      const examples = errorExamples(resource)
      for (const [status, response] of Object.entries(responses)) {
        const media = jsonContent(response)
        if (status === "400" && media) {
          media.schema = { $ref: "#/components/schemas/BadRequest" }
          response.description = "Invalid input: body, query, id or api-version"
        }
        withExample(media, examples[status])
      }
      const success = jsonContent(responses["200"] ?? responses["201"])
      if (endpoint === "list" || endpoint === "search") withExample(success, emptyPage)
      if (operationId === "versions.versions") withExample(success, versionsBody())
      if (operationId === "health.health") withExample(success, { status: "ok", version: "0.1.0" })
      const body = jsonContent(operation.requestBody as Json | undefined)
      if (resource?.write && endpoint === "create") withExample(body, resource.write.example)
      if (resource?.write && endpoint === "update") withExample(body, updateExample(resource))
      const action = resource?.actions?.find((candidate) => endpoint === `action_${candidate.name}`)
      if (action?.example) withExample(body, action.example)
      // A file body is documented as bytes, which keep no description of their own: the declaration's.
      const file = action?.raw ? ((operation.requestBody as Json | undefined)?.content as Record<string, Json> | undefined)?.[action.raw.contentType] : undefined
      const fileSchema = file?.schema as Json | undefined
      if (action?.raw && fileSchema && fileSchema.description === undefined) fileSchema.description = action.raw.description
      for (const parameter of (operation.parameters ?? []) as Array<Json>) {
        const name = String(parameter.name)
        // A path parameter says what it is beside its schema too, where documentation tools look first.
        const described = (parameter.schema as Json | undefined)?.description
        if (parameter.in === "path" && parameter.description === undefined && typeof described === "string") parameter.description = described
        if (parameter.in !== "path" || parameter.example !== undefined || !(name === "id" || name.endsWith("Id"))) continue
        parameter.example = name === "id" && resource?.idType === "integer" ? "1" : EXAMPLE_UUID
      }
    }
  }
  dropPlaceholderIds(spec)
  simplifyCompositions(spec)
  return spec
}
