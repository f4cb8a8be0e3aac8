import { Command } from "commander"
import { registerExport } from "./commands/export.js"
import { registerImport } from "./commands/import.js"
import { registerKeys } from "./commands/keys.js"
import { registerMcp } from "./commands/mcp.js"
import { registerOAuthClients } from "./commands/oauth-clients.js"
import { registerRestore } from "./commands/restore.js"
import { registerServe } from "./commands/serve.js"
import { registerStore } from "./commands/store.js"
import { registerTenants } from "./commands/tenants.js"
import { registerUsers } from "./commands/users.js"
import { registerWebhooks } from "./commands/webhooks.js"
import { registerWorker } from "./commands/worker.js"
import { reportFailure } from "./runtime.js"

export const VERSION = "0.1.0"

const HELP_EXAMPLES = `
Examples:
  erp serve                                          # http://127.0.0.1:3000, embedded store in .erp-data/
  erp serve --port 8080 --database-url postgres://user:pw@host/db
  erp tenants create --name "Acme Ltda" --country BR --json
  erp keys create --tenant <tenant-id> --name "ERP sync" --all
  erp keys list --tenant <tenant-id>
  erp export products --tenant <tenant-id> > products.jsonl
  erp import ofx statement.ofx --account <account-id> --tenant <tenant-id>
  erp mcp --api-key sk_...                           # MCP over stdio for an agent
  erp webhooks create --tenant <tenant-id> --url https://hooks.example.com/erp --events "products.*,sales-orders.update"

Run "erp <command> --help" for a command's options and examples.
`

export const makeProgram = () => {
  const program = new Command("erp")
    .description("erp: embeddable multi-tenant ERP integrations API")
    .version(VERSION)
    .option("--database-url <url>", "PostgreSQL URL (default: DATABASE_URL, else the embedded store)")
    .option("--data-dir <dir>", "Folder of the embedded PGlite store (default: ERP_DATA_DIR or .erp-data)")
    .option("--verbose", "On failure, print the whole error with its stack")
    .showHelpAfterError()
    .addHelpText("after", HELP_EXAMPLES)
  registerServe(program)
  registerWorker(program)
  registerStore(program)
  registerTenants(program)
  registerUsers(program)
  registerKeys(program)
  registerOAuthClients(program)
  registerMcp(program)
  registerExport(program)
  registerRestore(program)
  registerImport(program)
  registerWebhooks(program)
  return program
}

export const main = (argv: ReadonlyArray<string>) =>
  makeProgram()
    .parseAsync([...argv])
    .catch((error: unknown) => reportFailure(error, argv.includes("--verbose")))
