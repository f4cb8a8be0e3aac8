import * as http from "node:http"
import * as net from "node:net"
import { type Browser, chromium } from "playwright-core"
import { freshLoopbackAddress } from "./oauth.js"

/** Debian's Chromium (`apt-get install chromium`); playwright-core downloads no browser of its own. */
export const CHROMIUM_PATH = process.env.ERP_TEST_CHROMIUM ?? "/usr/bin/chromium"

const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync"
]

/** A headless Chromium; close it with `browser.close()` (in `afterAll`, always). */
export const launchBrowser = (): Promise<Browser> => chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS })

/** Runs `use` with a fresh browser and closes it whatever happens. */
export const withBrowser = async <A>(use: (browser: Browser) => Promise<A>): Promise<A> => {
  const browser = await launchBrowser()
  try {
    return await use(browser)
  } finally {
    await browser.close()
  }
}

export interface Forwarder {
  /** Base URL the browser should open (`http://127.0.0.1:<port>`). */
  readonly url: string
  /** The source address the target sees for every connection. */
  readonly localAddress: string
  readonly close: () => Promise<void>
}

/**
 * A TCP forwarder on 127.0.0.1 to `target`, whose connections to the target come from
 * `localAddress` (a fresh loopback address by default). Chromium cannot pick its source
 * address, and /oauth/authorize is limited per IP: a forwarder per test gives each test
 * a counter of its own. Bytes pass untouched (Host names the forwarder, which is then
 * the issuer the pages see).
 */
export const startForwarder = (target: string, localAddress = freshLoopbackAddress()): Promise<Forwarder> =>
  new Promise((resolve, reject) => {
    const { hostname, port } = new URL(target)
    const sockets = new Set<net.Socket>()
    const server = net.createServer((inbound) => {
      const outbound = net.connect({ host: hostname, port: Number(port), localAddress })
      sockets.add(inbound).add(outbound)
      const done = () => {
        inbound.destroy()
        outbound.destroy()
        sockets.delete(inbound)
        sockets.delete(outbound)
      }
      inbound.on("error", done).on("close", done)
      outbound.on("error", done).on("close", done)
      inbound.pipe(outbound)
      outbound.pipe(inbound)
    })
    server.on("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address() as net.AddressInfo
      resolve({
        url: `http://127.0.0.1:${address.port}`,
        localAddress,
        close: () =>
          new Promise<void>((done) => {
            for (const socket of sockets) socket.destroy()
            server.close(() => done())
          })
      })
    })
  })

export interface CallbackServer {
  /** The redirect URI to register: `http://127.0.0.1:<port>/callback`. */
  readonly redirectUri: string
  /** Every URL the server was asked for (path and query), in order. */
  readonly hits: Array<URL>
  readonly close: () => Promise<void>
}

/** A stand-in for the client application's redirect URI: answers a small page and records the hit. */
export const startCallbackServer = (): Promise<CallbackServer> =>
  new Promise((resolve, reject) => {
    const hits: Array<URL> = []
    const server = http.createServer((request, response) => {
      const url = new URL(request.url ?? "/", `http://${request.headers.host}`)
      if (url.pathname === "/callback") hits.push(url)
      response.writeHead(url.pathname === "/callback" ? 200 : 404, { "content-type": "text/html; charset=utf-8", connection: "close" })
      response.end(`<!doctype html><title>Callback</title><h1 id="callback">Back at the application</h1>`)
    })
    server.on("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address() as net.AddressInfo
      resolve({
        redirectUri: `http://127.0.0.1:${address.port}/callback`,
        hits,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections()
            server.close(() => done())
          })
      })
    })
  })
