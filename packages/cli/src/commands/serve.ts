import type { Command } from "commander"
import type { StoreFlags } from "../runtime.js"
import type { ServeOptions } from "./serve-run.js"


const EXAMPLES = `
Environment: PORT, HOST, DATABASE_URL, ERP_DATA_DIR, ERP_PUBLIC_URL, ERP_DYNAMIC_REGISTRATION=false,
ERP_TRUST_PROXY=true, ERP_JWT_* (an external identity provider), ERP_WEBHOOKS_ALLOW_PRIVATE=true,
ERP_WEBHOOKS_LEASE_SECONDS; the options above win over them. docs/configuration.md lists every variable.

Examples:
  erp serve                                             # http://127.0.0.1:3000, embedded store in .erp-data/
  PORT=8080 erp serve                                   # or --port 8080
  erp serve --host 0.0.0.0 --database-url postgres://user:pw@db/erp
  erp serve --public-url https://erp.example.com        # behind a proxy: the OAuth issuer
  erp serve --public-url https://example.com/erp        # behind a proxy that maps /erp/… to /…
  erp serve --no-webhooks                               # webhooks sent by "erp worker" processes instead
  erp serve --no-panel                                  # the API only: no web console at /panel
`

export const registerServe = (program: Command) =>
  program
    .command("serve")
    .description("Start the HTTP host (checks the port, then migrates the store and loads catalogs)")
    // No commander defaults: PORT and HOST are read through the configuration when the command runs.
    .option("--port <port>", "Port to listen on, 0 for any free one (default: PORT, else 3000)")
    .option("--host <host>", "Address to bind (default: HOST, else 127.0.0.1)")
    .option("--public-url <url>", "Public base URL, the OAuth issuer (default ERP_PUBLIC_URL, else each request's Host)")
    .option("--no-dynamic-registration", "Refuse OAuth dynamic client registration (RFC 7591)")
    .option("--trust-proxy", "Per-IP limits read the last X-Forwarded-For entry, the one your proxy appended (only behind one; default ERP_TRUST_PROXY)")
    .option("--json", "Once listening, print {\"url\", \"store\", \"demo\"} as one JSON line instead of the banner (demo: the first start's tenant, admin and key)")
    .option("--no-webhooks", "Do not send webhooks from this host (run erp worker instead)")
    .option("--no-panel", "Do not serve the panel, the tenant admins' web console at /panel")
    .option("--allow-private-webhooks", "Webhook URLs may be http and private or loopback addresses: development and tests only (ERP_WEBHOOKS_ALLOW_PRIVATE=true)")
    .addHelpText("after", EXAMPLES)
    .action(async (options: ServeOptions, command: Command) => {
      // Loaded only for this command: the HTTP host is not every command's start-up cost.
      const { runServe } = await import("./serve-run.js")
      await runServe(options, command.optsWithGlobals<StoreFlags>())
    })
