import { Command } from "commander"
import { registerExport } from "./commands/export.js"
import { registerKeys } from "./commands/keys.js"
import { registerMcp } from "./commands/mcp.js"
import { registerOAuthClients } from "./commands/oauth-clients.js"
import { registerRestore } from "./commands/restore.js"
import { registerServe } from "./commands/serve.js"
import { registerStore } from "./commands/store.js"
import { registerTenants } from "./commands/tenants.js"
import { registerUsers } from "./commands/users.js"
import { CliFailure } from "./runtime.js"

export const VERSION = "0.1.0"

export const makeProgram = () => {
  const program = new Command("erp")
    .description("erp: embeddable multi-tenant ERP integrations API")
    .version(VERSION)
    .option("--database-url <url>", "PostgreSQL URL (default: DATABASE_URL, else the embedded store)")
    .option("--data-dir <dir>", "Folder of the embedded PGlite store (default: ERP_DATA_DIR or .erp-data)")
    .showHelpAfterError()
  registerServe(program)
  registerStore(program)
  registerTenants(program)
  registerUsers(program)
  registerKeys(program)
  registerOAuthClients(program)
  registerMcp(program)
  registerExport(program)
  registerRestore(program)
  return program
}

export const main = (argv: ReadonlyArray<string>) =>
  makeProgram()
    .parseAsync([...argv])
    .catch((error: unknown) => {
      process.stderr.write(`Error: ${error instanceof CliFailure || error instanceof Error ? error.message : String(error)}\n`)
      process.exitCode = 1
    })
