/**
 * Run the HTTP host inside your own Node process.
 *
 *   npm run build && node examples/dist/node-server.js
 *
 * Uses DATABASE_URL when set, else the embedded store in ERP_DATA_DIR or .erp-data.
 */
import { startServer } from "@erp/http"

const server = await startServer({ port: Number(process.env.PORT ?? 3000) })
console.log(`erp listening on ${server.url}`)

const stop = async () => {
  await server.close()
  process.exit(0)
}
process.once("SIGINT", stop)
process.once("SIGTERM", stop)
