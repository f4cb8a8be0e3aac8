import { MCP_TOOLSET_NAMES, parseMcpToolsets } from "@erp/core"
import { type Command, Option } from "commander"
import { storeFrom, type StoreFlags } from "../runtime.js"

export const registerMcp = (program: Command) =>
  program
    .command("mcp")
    .description("Serve MCP tools over stdio for an agent: with an API key's permissions, or as a local user in every tenant of theirs")
    // Read from the environment when parsed, never shown: as a default, --help would print the key.
    .addOption(new Option("--api-key <token>", "API key sk_…").env("ERP_API_KEY"))
    .option("--user <email>", "act as this user (email or id) in each of their tenants, within each role (or ERP_MCP_USER)", process.env.ERP_MCP_USER)
    .addOption(new Option("--toolsets <names>", `serve only these toolsets' tools, comma-separated: ${MCP_TOOLSET_NAMES.join(", ")} (default every tool)`).env("ERP_MCP_TOOLSETS"))
    .addHelpText("after", `
Example (an MCP client starts it; examples/mcp-client-config.json has the entry):
  ERP_API_KEY=sk_... node /path/to/erp/packages/cli/bin/erp.js mcp --data-dir /path/to/erp/.erp-data
  node /path/to/erp/packages/cli/bin/erp.js mcp --user ana@example.com   (tools take tenant_id; list_tenants names them)
Over HTTP the same tools are served by \`erp serve\` at POST / (OAuth JWTs, see the README).
`)
    .action(async (options: { apiKey?: string; user?: string; toolsets?: string }, command: Command) => {
      const store = storeFrom(command.optsWithGlobals<StoreFlags>())
      const toolsets = parseMcpToolsets(options.toolsets, "--toolsets (or ERP_MCP_TOOLSETS)")
      // Loaded only for this command: the MCP server and its SDK are not every command's start-up cost.
      const { runStdio } = await import("@erp/mcp")
      if (options.apiKey && options.user) throw new Error("Give either --api-key or --user, not both")
      if (options.user) return runStdio({ user: options.user, store, toolsets })
      if (!options.apiKey) throw new Error("Give --api-key sk_… (or ERP_API_KEY), or --user EMAIL")
      await runStdio({ apiKey: options.apiKey, store, toolsets })
    })
