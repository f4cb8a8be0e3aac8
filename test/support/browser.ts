import * as fs from "node:fs"
import * as http from "node:http"
import * as net from "node:net"
import * as path from "node:path"
import { type Browser, chromium } from "playwright-core"
import { beforeEach } from "vitest"
import { freshLoopbackAddress } from "./oauth.js"

/** How to get a browser, shown wherever the browser tests are skipped or required. */
export const INSTALL_HINT = "install one (Debian/Ubuntu: apt-get install chromium; elsewhere: npx playwright-core install chromium) or set CHROMIUM_PATH"

const isExecutable = (file: string) => {
  try {
    fs.accessSync(file, fs.constants.X_OK)
    return fs.statSync(file).isFile()
  } catch {
    return false
  }
}

/** Executables inside Playwright's browser cache, newest revision first (any revision launches for our use). */
const playwrightCache = (): ReadonlyArray<string> => {
  const expected = chromium.executablePath()
  const root = path.resolve(path.dirname(expected), "..", "..")
  const layouts = [
    "chrome-linux64/chrome",
    "chrome-linux/chrome",
    "chrome-headless-shell-linux64/chrome-headless-shell",
    "chrome-linux/headless_shell",
    "chrome-mac-arm64/Chromium.app/Contents/MacOS/Chromium",
    "chrome-mac/Chromium.app/Contents/MacOS/Chromium",
    "chrome-win64/chrome.exe",
    "chrome-win/chrome.exe"
  ]
  let entries: Array<string> = []
  try {
    entries = fs.readdirSync(root).filter((name) => /^chromium(_headless_shell)?-\d+$/.test(name))
  } catch {
    // No cache folder: nothing installed through Playwright.
  }
  const revision = (name: string) => Number(name.slice(name.lastIndexOf("-") + 1))
  const found = entries.sort((a, b) => revision(b) - revision(a)).flatMap((name) => layouts.map((layout) => path.join(root, name, layout)))
  return [expected, ...found]
}

export interface ChromiumSearch {
  /** The executable to launch, when one was found. */
  readonly executablePath: string | undefined
  /** Why none was found, with what to do: the note of every skipped browser test. */
  readonly missing: string | undefined
}

/**
 * `CHROMIUM_PATH` when set (and then only it, so a wrong value is reported, not worked
 * around), else Debian's `/usr/bin/chromium` (Ubuntu's `chromium-browser`), else a
 * Chromium in Playwright's cache (`PLAYWRIGHT_BROWSERS_PATH` or `~/.cache/ms-playwright`).
 */
export const findChromium = (env: NodeJS.ProcessEnv = process.env): ChromiumSearch => {
  const configured = env.CHROMIUM_PATH
  if (configured) {
    return isExecutable(configured)
      ? { executablePath: configured, missing: undefined }
      : { executablePath: undefined, missing: `CHROMIUM_PATH=${configured} is not an executable; ${INSTALL_HINT}` }
  }
  const found = ["/usr/bin/chromium", "/usr/bin/chromium-browser", ...playwrightCache()].find(isExecutable)
  return found
    ? { executablePath: found, missing: undefined }
    : { executablePath: undefined, missing: `no Chromium found (CHROMIUM_PATH, /usr/bin/chromium, Playwright's cache); ${INSTALL_HINT}` }
}

export const CHROMIUM = findChromium()

/** `ERP_REQUIRE_BROWSER=1` (CI, after installing Chromium): a missing browser fails the browser tests instead of skipping them. */
export const BROWSER_REQUIRED = process.env.ERP_REQUIRE_BROWSER === "1"

/** Whether this run drives a browser: one was found, or one is required (and its absence then fails the suite). */
export const BROWSER_TESTS_RUN = CHROMIUM.executablePath !== undefined || BROWSER_REQUIRED

/**
 * Call inside a browser suite: without a browser (and without `ERP_REQUIRE_BROWSER=1`)
 * each test is reported as skipped with the reason and the install command. The suite's
 * `beforeAll` must check `BROWSER_TESTS_RUN` before launching anything.
 */
export const skipWithoutBrowser = () =>
  beforeEach((context) => {
    if (!BROWSER_TESTS_RUN) context.skip(`needs Chromium: ${CHROMIUM.missing}`)
  })

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
export const launchBrowser = (): Promise<Browser> => {
  if (!CHROMIUM.executablePath) {
    return Promise.reject(new Error(`ERP_REQUIRE_BROWSER=1, but ${CHROMIUM.missing}`))
  }
  return chromium.launch({ executablePath: CHROMIUM.executablePath, args: CHROMIUM_ARGS })
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
