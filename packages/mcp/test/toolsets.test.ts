import { allResources, InvalidSetting, MCP_TOOLSET_NAMES, MCP_TOOLSETS, type McpToolset, parseMcpToolsets, publicResources } from "@erp/core"
import { makeMcpServer, registryTools } from "@erp/mcp"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import { Effect } from "effect"
import { afterEach, describe, expect, it } from "vitest"

/** A client of a server serving these toolsets. Nothing here runs a tool, so no store is opened. */
const connect = async (toolsets?: ReadonlyArray<McpToolset>) => {
  const server = makeMcpServer({
    caller: Effect.die(new Error("no tool runs in these tests")),
    choosesTenant: false,
    run: <A>() => Promise.reject<A>(new Error("no tool runs in these tests")),
    ...(toolsets ? { toolsets } : {})
  })
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  await server.connect(serverSide)
  const client = new Client({ name: "toolsets-test", version: "0.0.0" })
  await client.connect(clientSide)
  return client
}

const clients: Array<Client> = []
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()))
})
const connected = async (toolsets?: ReadonlyArray<McpToolset>) => {
  const client = await connect(toolsets)
  clients.push(client)
  return client
}

const toolNamesOf = (resources: ReadonlyArray<string>) =>
  registryTools().filter((tool) => resources.includes(tool.resource)).map((tool) => tool.name)

describe("MCP toolsets", () => {
  it("put every resource MCP serves in a toolset, and name only resources MCP serves (the reports among them)", () => {
    const served = [...publicResources(allResources).map((resource) => resource.name), "reports"]
    const inSets = new Set(Object.values(MCP_TOOLSETS).flat())
    expect(served.filter((name) => !inSets.has(name))).toEqual([])
    expect([...inSets].filter((name) => !served.includes(name))).toEqual([])
  })

  it("read a setting: names in any case and spacing, nothing for every tool, and refuse an unknown name listing the valid ones", () => {
    expect(parseMcpToolsets(undefined, "ERP_MCP_TOOLSETS")).toBeUndefined()
    expect(parseMcpToolsets(" ", "ERP_MCP_TOOLSETS")).toBeUndefined()
    expect(parseMcpToolsets(" Finance , sales,", "ERP_MCP_TOOLSETS")).toEqual(["sales", "finance"])
    expect(() => parseMcpToolsets("sales,billing", "ERP_MCP_TOOLSETS")).toThrow(InvalidSetting)
    expect(() => parseMcpToolsets("sales,billing", "ERP_MCP_TOOLSETS"))
      .toThrow('ERP_MCP_TOOLSETS: unknown MCP toolset "billing"; choose among sales, purchases, finance, catalogs, admin (comma-separated)')
  })

  it("list every tool without a choice", async () => {
    const { tools } = await (await connected()).listTools()
    expect(tools.map((tool) => tool.name)).toEqual(["list_tenants", ...registryTools().map((tool) => tool.name)])
  })

  it.each(MCP_TOOLSET_NAMES.map((name) => [name]))("list only list_tenants and the tools of the %s toolset", async (name) => {
    const { tools } = await (await connected([name])).listTools()
    expect(tools.map((tool) => tool.name)).toEqual(["list_tenants", ...toolNamesOf(MCP_TOOLSETS[name])])
  })

  it("list the tools of several toolsets once each (products are in sales and purchases)", async () => {
    const { tools } = await (await connected(["sales", "purchases"])).listTools()
    const names = tools.map((tool) => tool.name)
    expect(names).toEqual(["list_tenants", ...toolNamesOf([...MCP_TOOLSETS.sales, ...MCP_TOOLSETS.purchases])])
    expect(names.filter((name) => name === "create_product")).toHaveLength(1)
    expect(names).toContain("create_supplier")
    expect(names).not.toContain("list_payables")
  })

  it("refuse a tool outside the chosen toolsets, naming its toolset and the served ones; an unknown tool stays unknown", async () => {
    const client = await connected(["sales", "catalogs"])
    await expect(client.callTool({ name: "allocate_payable", arguments: {} }))
      .rejects.toThrow(/Tool "allocate_payable" is not served here: it is in the finance toolset, and this server serves sales, catalogs \(ERP_MCP_TOOLSETS, or erp mcp --toolsets\)/)
    await expect(client.callTool({ name: "create_supplier", arguments: {} })).rejects.toThrow(/it is in the purchases toolset/)
    await expect(client.callTool({ name: "drop_database", arguments: {} })).rejects.toThrow(/Unknown tool "drop_database"/)
  })

  it("tell the agent which toolsets it has, and offer only the prompts whose tools are served", async () => {
    const sales = await connected(["sales"])
    expect(sales.getInstructions()).toContain("This server serves the sales toolset of tools only.")
    expect((await sales.listPrompts()).prompts).toEqual([])
    await expect(sales.getPrompt({ name: "summarise_overdue_receivables", arguments: { tenant_id: "t" } })).rejects.toThrow(/Unknown prompt/)
    const finance = await connected(["finance"])
    expect((await finance.listPrompts()).prompts.map((prompt) => prompt.name)).toEqual(["reconcile_payables", "summarise_overdue_receivables"])
    expect((await connected()).getInstructions()).not.toContain("toolset")
  })
})
