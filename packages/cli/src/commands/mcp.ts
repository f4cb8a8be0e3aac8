import { cliSettings, loadConfigSync, MCP_TOOLSET_NAMES, mcpSettings, parseMcpToolsets } from "@erp/core"
import type { Command } from "commander"
import { Option, Redacted } from "effect"
import { storeFrom, type StoreFlags } from "../runtime.js"

export const registerMcp = (program: Command) =>
  program
    .command("mcp")
    .description("Serve MCP tools over stdio for an agent: with an API key's permissions, or as a local user in every tenant of theirs")
    // No commander defaults or .env(): the configuration is read when the command runs, and --help prints no value.
    .option("--api-key <token>", "API key sk_… (default: ERP_API_KEY)")
    .option("--user <email>", "act as this user (email or id) in each of their tenants, within each role (default: ERP_MCP_USER)")
    .option("--toolsets <names>", `serve only these toolsets' tools, comma-separated: ${MCP_TOOLSET_NAMES.join(", ")} (default: ERP_MCP_TOOLSETS, else every tool)`)
    .addHelpText("after", `
Example (an MCP client starts it; examples/mcp-client-config.json has the entry):
  ERP_API_KEY=sk_... node /path/to/erp/packages/cli/bin/erp.js mcp --data-dir /path/to/erp/.erp-data
  node /path/to/erp/packages/cli/bin/erp.js mcp --user ana@example.com   (tools take tenant_id; list_tenants names them)
Over HTTP the same tools are served by \`erp serve\` at POST / (OAuth JWTs, see the README).
`)
    .action(async (options: { apiKey?: string; user?: string; toolsets?: string }, command: Command) => {
      const store = storeFrom(command.optsWithGlobals<StoreFlags>())
      const toolsets = options.toolsets !== undefined ? parseMcpToolsets(options.toolsets, "--toolsets") : loadConfigSync(mcpSettings.toolsets.config)
      // A flag wins over both variables: --user with ERP_API_KEY set acts as the user.
      const flagged = options.apiKey !== undefined || options.user !== undefined
      const apiKey = flagged ? options.apiKey : Option.getOrUndefined(Option.map(loadConfigSync(cliSettings.apiKey.config), Redacted.value))
      const user = flagged ? options.user : Option.getOrUndefined(loadConfigSync(cliSettings.mcpUser.config))
      // Loaded only for this command: the MCP server and its SDK are not every command's start-up cost.
      const { runStdio } = await import("@erp/mcp")
      if (apiKey && user) throw new Error(flagged ? "Give either --api-key or --user, not both" : "Set either ERP_API_KEY or ERP_MCP_USER, not both")
      if (user) return runStdio({ user, store, toolsets })
      if (!apiKey) throw new Error("Give --api-key sk_… (or ERP_API_KEY), or --user EMAIL")
      await runStdio({ apiKey, store, toolsets })
    })
