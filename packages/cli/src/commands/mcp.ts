import { runStdio } from "@erp/mcp"
import { type Command } from "commander"
import { storeFrom, type StoreFlags } from "../runtime.js"

export const registerMcp = (program: Command) =>
  program
    .command("mcp")
    .description("Serve MCP tools over stdio for an agent, with an API key's permissions")
    .option("--api-key <token>", "API key sk_… (or ERP_API_KEY)", process.env.ERP_API_KEY)
    .addHelpText("after", `
Example (an MCP client starts it; examples/mcp-client-config.json has the entry):
  ERP_API_KEY=sk_... node /path/to/erp/packages/cli/bin/erp.js mcp --data-dir /path/to/erp/.erp-data
`)
    .action(async (options: { apiKey?: string }, command: Command) => {
      if (!options.apiKey) throw new Error("Give --api-key sk_… or set ERP_API_KEY")
      await runStdio({ apiKey: options.apiKey, store: storeFrom(command.optsWithGlobals<StoreFlags>()) })
    })
