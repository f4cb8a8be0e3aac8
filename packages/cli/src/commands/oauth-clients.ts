import { OAuth, type OAuthClient } from "@erp/core"
import { type Command } from "commander"
import { Effect } from "effect"
import { printJson, runWithCore, type StoreFlags } from "../runtime.js"
import { collect } from "./users.js"

const describeClient = (client: OAuthClient) =>
  [
    `${client.client_id}  ${client.name}  (${client.kind}, ${client.registration})${client.revoked_at ? `  REVOKED ${client.revoked_at}` : ""}`,
    ...client.redirect_uris.map((uri) => `  redirect: ${uri}`)
  ].join("\n")

export const registerOAuthClients = (program: Command) => {
  const clients = program.command("oauth-clients").description("Manage OAuth clients (apps that ask users for access)")
  clients
    .command("create")
    .description("Register an OAuth client; a confidential client's secret is printed once")
    .requiredOption("--name <name>", "Name shown on the consent page")
    .requiredOption("--redirect-uri <uri>", "Exact redirect URI, repeatable", collect)
    .option("--public", "A public client (PKCE, no secret), e.g. a native or browser app")
    .option("--json", "Print the client, secret included, as one JSON object")
    .addHelpText("after", `
Examples:
  erp oauth-clients create --name "Zapier" --redirect-uri https://zapier.com/dashboard/auth/oauth/return/App123/ --json
  erp oauth-clients create --name "Desktop app" --redirect-uri http://127.0.0.1:8765/callback --public
`)
    .action(async (options: { name: string; redirectUri: Array<string>; public?: boolean; json?: boolean }, command: Command) => {
      const { client, secret } = await runWithCore(
        command.optsWithGlobals<StoreFlags>(),
        Effect.flatMap(OAuth, (oauth) =>
          oauth.createClient({ name: options.name, redirectUris: options.redirectUri, kind: options.public ? "public" : "confidential", registration: "operator" }))
      )
      if (options.json) {
        printJson({ ...client, ...(secret ? { client_secret: secret } : {}) })
        return
      }
      process.stdout.write(`${describeClient(client)}\n\nclient_id: ${client.client_id}\n`)
      if (secret) process.stdout.write(`client_secret (shown only now, store it safely): ${secret}\n`)
    })
  clients
    .command("list")
    .description("List OAuth clients")
    .option("--json", "Print a JSON array")
    .action(async (options: { json?: boolean }, command: Command) => {
      const list = await runWithCore(command.optsWithGlobals<StoreFlags>(), Effect.flatMap(OAuth, (oauth) => oauth.listClients))
      if (options.json) printJson(list)
      else process.stdout.write(list.length === 0 ? "No OAuth clients\n" : list.map(describeClient).join("\n") + "\n")
    })
  clients
    .command("revoke")
    .description("Revoke a client and every token issued to it")
    .argument("<client-id>", "client_id")
    .option("--json", "Print the client as one JSON object")
    .action(async (clientId: string, options: { json?: boolean }, command: Command) => {
      const client = await runWithCore(command.optsWithGlobals<StoreFlags>(), Effect.flatMap(OAuth, (oauth) => oauth.revokeClient(clientId)))
      if (options.json) printJson(client)
      else process.stdout.write(`Revoked ${client.client_id} (${client.name})\n`)
    })
}
