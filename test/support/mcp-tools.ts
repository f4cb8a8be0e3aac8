import * as fs from "node:fs"
import * as path from "node:path"
import { beforeEach } from "vitest"

/**
 * The MCP Inspector and the MCP conformance suite check our server from the outside. They are
 * tools the tests drive, not dependencies of the project: `.ci/mcp-tools` installs them with a
 * Node 24 binary into a folder of their own, named in `ERP_MCP_TOOLS`. Without it these tests
 * are skipped with the reason, unless `ERP_REQUIRE_MCP_TOOLS=1` (CI) makes that a failure.
 */
export interface McpTools {
  readonly node: string
  readonly inspector: string
  readonly conformance: string
}

const INSTALL_HINT = "run .ci/mcp-tools <folder> and set ERP_MCP_TOOLS=<folder>"

const find = (): McpTools | string => {
  const folder = process.env.ERP_MCP_TOOLS
  if (!folder) return `needs the MCP Inspector and conformance suite (Node 22+): ${INSTALL_HINT}`
  const tools = {
    node: path.join(folder, "node_modules", ".bin", "node"),
    inspector: path.join(folder, "node_modules", "@modelcontextprotocol", "inspector", "clients", "launcher", "build", "index.js"),
    conformance: path.join(folder, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")
  }
  const missing = Object.values(tools).filter((file) => !fs.existsSync(file))
  return missing.length > 0 ? `ERP_MCP_TOOLS=${folder} lacks ${missing.join(", ")}: ${INSTALL_HINT}` : tools
}

const found = find()

export const MCP_TOOLS: McpTools | undefined = typeof found === "string" ? undefined : found
export const MCP_TOOLS_REQUIRED = process.env.ERP_REQUIRE_MCP_TOOLS === "1"
export const MCP_TOOLS_RUN = MCP_TOOLS !== undefined || MCP_TOOLS_REQUIRED

export const skipWithoutMcpTools = () =>
  beforeEach((context) => {
    if (!MCP_TOOLS_RUN) context.skip(found as string)
    if (!MCP_TOOLS) throw new Error(`ERP_REQUIRE_MCP_TOOLS=1 but ${found as string}`)
  })
