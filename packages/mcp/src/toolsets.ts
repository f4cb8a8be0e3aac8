import { MCP_TOOLSET_NAMES, MCP_TOOLSETS, type McpToolset } from "@erp/core"
import type { ToolDefinition } from "./tools.js"

/** The toolsets a tool belongs to: those of its resource. */
export const toolsetsOf = (tool: ToolDefinition): ReadonlyArray<McpToolset> =>
  MCP_TOOLSET_NAMES.filter((name) => MCP_TOOLSETS[name].includes(tool.resource))

const chosen = new WeakMap<ReadonlyArray<ToolDefinition>, Map<string, ReadonlyArray<ToolDefinition>>>()

/**
 * The tools of these toolsets, every tool when none is named. The same choice gives the same
 * array, which the server keeps its `tools/list` answer by.
 */
export const toolsetTools = (tools: ReadonlyArray<ToolDefinition>, toolsets: ReadonlyArray<McpToolset> | undefined): ReadonlyArray<ToolDefinition> => {
  if (toolsets === undefined) return tools
  let byChoice = chosen.get(tools)
  if (!byChoice) {
    byChoice = new Map()
    chosen.set(tools, byChoice)
  }
  const key = toolsets.join(",")
  let served = byChoice.get(key)
  if (!served) {
    served = tools.filter((tool) => toolsetsOf(tool).some((name) => toolsets.includes(name)))
    byChoice.set(key, served)
  }
  return served
}
