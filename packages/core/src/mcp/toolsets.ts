import { InvalidSetting } from "../config/load.js"

export const MCP_TOOLSET_NAMES = ["sales", "purchases", "finance", "catalogs", "admin"] as const

/** A named group of MCP tools: those of the resources one kind of work needs. */
export type McpToolset = (typeof MCP_TOOLSET_NAMES)[number]

/**
 * The resources whose tools each toolset serves. Many agent clients take fewer tools, and fewer
 * bytes of schemas, than every resource's together; an operator serves the sets an agent needs
 * (`ERP_MCP_TOOLSETS`, `erp mcp --toolsets`). A resource sits in every set whose work needs it
 * (products in sales and purchases); `list_tenants` is in all of them. Kept here, beside the MCP
 * sessions, so a host checks the setting when it starts without loading the MCP server's code.
 */
export const MCP_TOOLSETS: Readonly<Record<McpToolset, ReadonlyArray<string>>> = {
  sales: ["customers", "products", "quotes", "sales-orders", "invoices", "reports"],
  purchases: ["suppliers", "products", "purchase-invoices"],
  finance: ["financial-accounts", "financial-categories", "financial-transactions", "payables", "receivables", "reports"],
  catalogs: ["banks", "payment-methods", "units-of-measurement", "countries", "states", "cities"],
  admin: ["events", "webhook-endpoints", "webhook-deliveries", "integration-entity-mappings"]
}

const isToolset = (name: string): name is McpToolset => (MCP_TOOLSET_NAMES as ReadonlyArray<string>).includes(name)

/**
 * The toolsets a setting names (`sales,finance`, any case and spacing), or undefined for every
 * tool (nothing given). A name that is not a toolset is refused with the valid ones, where
 * `source` says which setting it came from.
 */
export const parseMcpToolsets = (text: string | undefined, source: string): ReadonlyArray<McpToolset> | undefined => {
  const names = (text ?? "").split(",").map((name) => name.trim().toLowerCase()).filter((name) => name.length > 0)
  if (names.length === 0) return undefined
  const unknown = names.filter((name) => !isToolset(name))
  if (unknown.length > 0) {
    throw new InvalidSetting(
      `${source}: unknown MCP toolset${unknown.length > 1 ? "s" : ""} ${unknown.map((name) => `"${name}"`).join(", ")}; ` +
        `choose among ${MCP_TOOLSET_NAMES.join(", ")} (comma-separated), or leave it unset for every tool`
    )
  }
  return MCP_TOOLSET_NAMES.filter((name) => names.includes(name))
}
