import { Command } from "commander"
import { registerExport } from "./commands/export.js"
import { registerImport } from "./commands/import.js"
import { registerKeys } from "./commands/keys.js"
import { registerMcp } from "./commands/mcp.js"
import { registerOAuthClients } from "./commands/oauth-clients.js"
import { registerPanelRecords } from "./commands/panel-records.js"
import { registerRestore } from "./commands/restore.js"
import { registerServe } from "./commands/serve.js"
import { registerStore } from "./commands/store.js"
import { registerTenants } from "./commands/tenants.js"
import { registerUsers } from "./commands/users.js"
import { registerWebhooks } from "./commands/webhooks.js"
import { registerWorker } from "./commands/worker.js"
import { reportFailure } from "./runtime.js"
import { VERSION } from "./version.js"

export { VERSION }

/** Exit status of a command line commander refuses. */
export const EXIT_USAGE = 2

const HELP_EXAMPLES = `
Examples:
  erp serve                                          # http://127.0.0.1:3000, embedded store in .erp-data/
  erp serve --port 8080 --database-url postgres://user:pw@host/db
  erp tenants create --name "Acme Ltda" --country BR --json
  erp keys create --tenant <tenant-id> --name "ERP sync" --all
  erp keys list --tenant <tenant-id>
  erp seed demo --scale small                       # demo tenants with consistent records of every resource
  erp export all --tenant <tenant-id> --out backup/  # every resource, one NDJSON file each
  erp import products products.ndjson --tenant <other-tenant-id>
  erp store copy --to postgres://user@host/erp        # the embedded store into an empty PostgreSQL database
  erp import ofx statement.ofx --account <account-id> --tenant <tenant-id>
  erp fiscal-rules import rules.json --tenant <tenant-id>
  erp mcp --api-key sk_...                           # MCP over stdio for an agent
  erp webhooks create --tenant <tenant-id> --url https://hooks.example.com/erp --events "products.*,sales-orders.update"

Output: every command but serve's log and mcp (JSON-RPC on stdio) takes --json and then prints one
JSON object on stdout (fiscal-rules list: an array); progress and summaries go to stderr.

Exit status:
  0  success
  1  failure: one line on stderr says what failed and what to do (--verbose adds the details);
     a refused write changed nothing, and an export leaves no file under the final name
  2  usage: an unknown command or option, a missing or invalid argument
  3  erp import ran but refused some records (each is reported with its line number)

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
    // Usage errors exit 2, as documented above (commander's default is 1, which is our runtime failure); help and version exit 0.
    .exitOverride((error) => process.exit(error.exitCode === 0 ? 0 : EXIT_USAGE))
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
  registerPanelRecords(program)
  registerWebhooks(program)
  return program
}

export const main = (argv: ReadonlyArray<string>) =>
  makeProgram()
    .parseAsync([...argv])
    .catch((error: unknown) => reportFailure(error, argv.includes("--verbose")))
