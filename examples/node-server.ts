/**
 * Run the HTTP host inside your own Node process, and set it up with the admin facade
 * (Promises, no Effect needed). On an empty store it creates a demo tenant and an admin
 * API key and prints them, like `npm start`.
 *
 *   npm run build && node examples/dist/node-server.js      # PORT (default 3000), --verbose
 *
 * Uses DATABASE_URL when set, else the embedded store in ERP_DATA_DIR or .erp-data.
 */
import { firstStartBanner } from "@erp/core"
import { startServer } from "@erp/http"

try {
  const server = await startServer({ port: Number(process.env.PORT ?? 3000) })
  console.log(`erp listening on ${server.url}`)
  const demo = await server.ensureDemoTenant()
  if (demo) console.log(firstStartBanner(server.url, demo))
  // Closing the server closes the store and releases the data folder's lock.
  const stop = () => void server.close().then(() => process.exit(0))
  process.once("SIGINT", stop)
  process.once("SIGTERM", stop)
} catch (error) {
  // A start-up failure is a StartupError: one plain line naming what failed and what to do.
  console.error(`Error: ${error instanceof Error ? error.message : String(error)}`)
  if (process.argv.includes("--verbose")) console.error(error instanceof Error ? error.cause ?? error : error)
  process.exitCode = 1
}
