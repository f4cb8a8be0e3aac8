import { allowedOperators, allResources, type AnyResource, publicResources } from "@erp/core"
import type { Resource } from "@modelcontextprotocol/sdk/types.js"
import { Schema } from "effect"
import { definitionName } from "./json-schema.js"

/**
 * The contract as MCP resources an agent can read before it calls anything: an overview
 * (`erp://api`) and one field reference per resource (`erp://resources/<name>`), written
 * from the same declarations the tools come from, so they never disagree with them.
 */
const API_URI = "erp://api"
const resourceUri = (resource: AnyResource) => `erp://resources/${resource.name}`

const served = () => publicResources(allResources)

const OVERVIEW_HEAD = `# ERP integrations API: what an agent needs

- Call \`list_tenants\` first. Every other tool acts on one tenant: pass its id as \`tenant_id\`
  (an API key reaches one tenant, which is the default). Your role there (admin, or member with
  per-resource permissions) bounds what you may do; a refusal is a tool error with the API's body.
- Money, quantities and rates are decimal strings with six fractional digits ("10.500000"); send
  strings such as "10.5", never floats.
- Lists answer \`{data, pagination, meta}\`; while \`pagination.has_next_page\`, call again with
  \`cursor\` = \`pagination.next_cursor\`. Filters use the operators each field lists (\`eq\`, \`gte\`,
  \`contains\`, \`in\`, …); \`sort\` is \`field:asc|desc\`; \`search\` is accent- and case-insensitive.
- Deletes are soft: the record keeps \`deleted_at\` and leaves lists unless \`with_deleted\` is true.
- Errors: \`status_code\`, \`message\`, \`error\`, optional \`code\`, and for 422 \`details.fields\`
  naming each field with its reasons. 400 malformed, 401 credential, 403 permission, 404 not found
  (another tenant's records are never visible), 409 conflict, 422 business rule, 429 slow down.

## Resources
`

const overview = () =>
  OVERVIEW_HEAD + served().map((resource) =>
    `- \`${resource.name}\` (${resourceUri(resource)}): ${resource.description}${resource.write ? "" : " Read-only."}`
  ).join("\n") + "\n"

const schemaProperties = (resource: AnyResource): Readonly<Record<string, { readonly description?: string }>> => {
  const { schema, definitions } = Schema.toJsonSchemaDocument(resource.record)
  const name = definitionName(schema.$ref)
  const target = name === undefined ? schema : definitions[name]
  return (target?.properties ?? {}) as Readonly<Record<string, { readonly description?: string }>>
}

const fieldReference = (resource: AnyResource) => {
  const properties = schemaProperties(resource)
  const lines = [`# ${resource.title} (\`${resource.name}\`)`, "", resource.description, ""]
  lines.push(`Default sort \`${resource.defaultSort.field}:${resource.defaultSort.order}\`.` +
    (resource.search ? " Searchable (`search`)." : "") + (resource.write ? "" : " Read-only: list and get only."), "")
  lines.push("## Fields", "", "| field | answered | writable | filter operators | description |", "|---|---|---|---|---|")
  for (const [name, property] of Object.entries(properties)) {
    const filter = resource.filters[name]
    const writable = !resource.write ? "no" : resource.readOnly.includes(name) || name === "id" ? "read-only" : "yes"
    const operators = filter ? allowedOperators(filter).join(", ") : ""
    lines.push(`| ${name} | yes | ${writable} | ${operators} | ${(property.description ?? "").replace(/\|/g, "\\|").replace(/\n/g, " ")} |`)
  }
  const filterOnly = Object.entries(resource.filters).filter(([name]) => !(name in properties))
  for (const [name, filter] of filterOnly) {
    lines.push(`| ${name} | no (filter only) | no | ${allowedOperators(filter).join(", ")} | ${(filter.description ?? "").replace(/\|/g, "\\|")} |`)
  }
  if (resource.status) {
    const machine = resource.status
    lines.push("", `## Status (\`${machine.field}\`)`, "", `Starts as \`${machine.initial}\`.`)
    for (const [state, rule] of Object.entries(machine.states)) {
      const next = machine.transitions?.[state]
      const editable = rule.editable === "all" ? "every field" : rule.editable === "none" ? "nothing" : rule.editable.join(", ")
      lines.push(`- \`${state}\`: editable ${editable}${next ? `; may move to ${next.map((to) => `\`${to}\``).join(", ") || "nothing"}` : ""}.` +
        (rule.description ? ` ${rule.description}` : ""))
    }
  }
  if (resource.actions?.length) {
    lines.push("", "## Actions", "")
    for (const action of resource.actions) lines.push(`- \`${action.name}\` (${action.method} ${action.path}): ${action.description}`)
  }
  if (resource.write) lines.push("", "## Example create body", "", "```json", JSON.stringify(resource.write.example, null, 2), "```")
  return lines.join("\n") + "\n"
}

export const contractResources = (): Array<Resource> => [
  { uri: API_URI, name: "api", title: "How to use this API", description: "Conventions, errors, pagination and the list of resources.", mimeType: "text/markdown" },
  ...served().map((resource) => ({
    uri: resourceUri(resource),
    name: resource.name,
    title: `${resource.title}: field reference`,
    description: `Fields, filters, statuses and an example of ${resource.name}.`,
    mimeType: "text/markdown"
  }))
]

export const readContractResource = (uri: string): { uri: string; mimeType: string; text: string } | undefined => {
  if (uri === API_URI) return { uri, mimeType: "text/markdown", text: overview() }
  const resource = served().find((candidate) => resourceUri(candidate) === uri)
  return resource ? { uri, mimeType: "text/markdown", text: fieldReference(resource) } : undefined
}
