/**
 * Embed the API as a web-standard `(Request) => Promise<Response>` handler under /erp
 * of an existing node:http server (the same handler works in any framework or runtime
 * that speaks Request/Response). On an empty store it creates a demo tenant and an
 * admin API key and prints them, like `npm start`.
 *
 *   npm run build && node examples/dist/fetch-handler.js      # PORT (default 4000), --verbose
 *   curl localhost:4000/erp/health
 *
 * Uses DATABASE_URL when set, else the embedded store in ERP_DATA_DIR or .erp-data.
 */
import { explainStartupFailure, firstStartBanner } from "@erp/core"
import { checkPortFree, createFetchHandler, type StoreOptions } from "@erp/http"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import { Readable } from "node:stream"

export const BASE_PATH = "/erp"

/**
 * node:http request -> web Request, path untouched (the handler takes the base path off).
 * This server is the edge, so it states the caller's address itself for per-IP rate limits.
 */
const toRequest = (incoming: IncomingMessage, origin: string): Request => {
  const headers = new Headers()
  for (const [name, value] of Object.entries(incoming.headers)) {
    if (Array.isArray(value)) value.forEach((item) => headers.append(name, item))
    else if (value !== undefined) headers.set(name, value)
  }
  headers.set("x-forwarded-for", incoming.socket.remoteAddress ?? "unknown")
  const hasBody = incoming.method !== "GET" && incoming.method !== "HEAD"
  return new Request(new URL(incoming.url ?? "/", origin), {
    method: incoming.method ?? "GET",
    headers,
    ...(hasBody ? { body: Readable.toWeb(incoming) as ReadableStream, duplex: "half" } : {})
  } as RequestInit)
}

const send = async (response: Response, outgoing: ServerResponse) => {
  const headers: Record<string, string | Array<string>> = Object.fromEntries(response.headers)
  // Several cookies are several headers; Object.fromEntries would join them into one.
  const cookies = response.headers.getSetCookie()
  if (cookies.length > 0) headers["set-cookie"] = cookies
  outgoing.writeHead(response.status, headers)
  outgoing.end(Buffer.from(await response.arrayBuffer()))
}

/** Your app's server, with erp under /erp (and its two metadata documents) and your own routes beside it. */
export const startHost = async (port: number, options: StoreOptions = {}) => {
  // Before the store is opened: a busy port should not cost a migration to find out.
  await checkPortFree("127.0.0.1", port).catch((error) => {
    throw explainStartupFailure(error, { listen: { host: "127.0.0.1", port }, portHint: "set PORT to another port" })
  })
  const erp = await createFetchHandler({ basePath: BASE_PATH, ...options, oauth: { trustProxy: true, ...options.oauth } })
  const server = createServer((incoming, outgoing) => {
    if (erp.handles(incoming.url ?? "/")) {
      erp.handler(toRequest(incoming, `http://${incoming.headers.host ?? "localhost"}`))
        .then((response) => send(response, outgoing))
        .catch(() => outgoing.writeHead(500).end())
      return
    }
    outgoing.writeHead(200, { "content-type": "text/plain" })
    outgoing.end("my app\n")
  })
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve))
  const address = server.address()
  const actualPort = typeof address === "object" && address ? address.port : port
  return {
    url: `http://127.0.0.1:${actualPort}`,
    erp,
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()))
      server.closeAllConnections()
      await closed
      await erp.dispose()
    }
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  try {
    const host = await startHost(Number(process.env.PORT ?? 4000))
    const api = `${host.url}${BASE_PATH}`
    console.log(`my app on ${host.url}, erp under ${api}`)
    const demo = await host.erp.ensureDemoTenant()
    if (demo) console.log(firstStartBanner(api, demo))
    // Closing the store releases the data folder's lock for the next process.
    const stop = () => void host.close().then(() => process.exit(0))
    process.once("SIGINT", stop)
    process.once("SIGTERM", stop)
  } catch (error) {
    console.error(`Error: ${error instanceof Error ? error.message : String(error)}`)
    if (process.argv.includes("--verbose")) console.error(error instanceof Error ? error.cause ?? error : error)
    process.exitCode = 1
  }
}
