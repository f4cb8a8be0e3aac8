/**
 * Embed the API as a web-standard `(Request) => Promise<Response>` handler and
 * mount it under a prefix of an existing node:http server (the same handler
 * works in any framework or runtime that speaks Request/Response).
 *
 *   npm run build && node examples/dist/fetch-handler.js
 *   curl localhost:4000/erp/health
 */
import { createFetchHandler } from "@erp/http"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import { Readable } from "node:stream"

export const PREFIX = "/erp"

/** node:http request -> web Request, with the prefix taken off the path. */
const toRequest = (incoming: IncomingMessage, origin: string): Request => {
  const url = new URL(incoming.url ?? "/", origin)
  url.pathname = url.pathname.slice(PREFIX.length) || "/"
  const headers = new Headers()
  for (const [name, value] of Object.entries(incoming.headers)) {
    if (Array.isArray(value)) value.forEach((item) => headers.append(name, item))
    else if (value !== undefined) headers.set(name, value)
  }
  const hasBody = incoming.method !== "GET" && incoming.method !== "HEAD"
  return new Request(url, {
    method: incoming.method ?? "GET",
    headers,
    ...(hasBody ? { body: Readable.toWeb(incoming) as ReadableStream, duplex: "half" } : {})
  } as RequestInit)
}

const send = async (response: Response, outgoing: ServerResponse) => {
  outgoing.writeHead(response.status, Object.fromEntries(response.headers))
  outgoing.end(Buffer.from(await response.arrayBuffer()))
}

/** Your app's server, with erp under /erp and your own routes beside it. */
export const startHost = async (port: number, store: Parameters<typeof createFetchHandler>[0] = {}) => {
  const erp = await createFetchHandler(store)
  const server = createServer((incoming, outgoing) => {
    if (incoming.url?.startsWith(`${PREFIX}/`)) {
      erp.handler(toRequest(incoming, `http://${incoming.headers.host ?? "localhost"}`)).then((response) => send(response, outgoing))
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
      await new Promise<void>((resolve) => server.close(() => resolve()))
      await erp.dispose()
    }
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const host = await startHost(Number(process.env.PORT ?? 4000))
  console.log(`my app on ${host.url}, erp under ${host.url}${PREFIX}`)
}
