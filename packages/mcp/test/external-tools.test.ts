import { ALL_PERMISSIONS, layerCore, type StoreLocation, Tenancy } from "@erp/core"
import { Effect, ManagedRuntime } from "effect"
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestHost, type TestHost } from "../../../test/support/host.js"
import { MCP_TOOLS, MCP_TOOLS_RUN, skipWithoutMcpTools } from "../../../test/support/mcp-tools.js"
import { testDataDir } from "../../../test/support/stores.js"

const BIN = path.resolve("packages/cli/bin/erp.js")

/** Runs one of the tools under its own Node (24); resolves with what it printed, whatever the exit code. */
const run = (args: ReadonlyArray<string>) =>
  new Promise<{ code: number; output: string; stdout: string }>((resolve) => {
    const tools = MCP_TOOLS!
    execFile(tools.node, [...args], {
      timeout: 90_000,
      env: { ...process.env, PATH: `${path.dirname(tools.node)}:${process.env.PATH}`, DATABASE_URL: "", ERP_DATA_DIR: "" },
      maxBuffer: 64 * 1024 * 1024
    }, (error, stdout, stderr) => resolve({ code: error ? (typeof error.code === "number" ? error.code : 1) : 0, output: `${stdout}${stderr}`, stdout }))
  })

/** `erp mcp` opens the embedded store before it answers: on a machine busy with other test files that takes more than the Inspector's 15 s default. */
const inspector = (args: ReadonlyArray<string>) => run([MCP_TOOLS!.inspector, "--cli", "--connect-timeout", "60000", ...args])

/** The answer the Inspector prints on stdout: one JSON document. */
const printed = (stdout: string) => JSON.parse(stdout.slice(stdout.indexOf("{"))) as Record<string, unknown>

/**
 * The conformance suite cannot send credentials, so it talks to the server through a
 * local proxy that adds the API key, as a gateway in front of the server would.
 */
const startKeyProxy = (target: string, token: string) =>
  new Promise<{ url: string; close: () => void }>((resolve) => {
    const upstream = new URL(target)
    const server = http.createServer((request, response) => {
      const forwarded = http.request(
        { host: upstream.hostname, port: upstream.port, path: request.url, method: request.method, headers: { ...request.headers, authorization: `Bearer ${token}` }, agent: false },
        (answer) => {
          response.writeHead(answer.statusCode ?? 502, answer.headers)
          answer.pipe(response)
        }
      )
      forwarded.on("error", () => response.destroy())
      // A client gone (an SSE stream it opened) ends the upstream request too, so the host can close.
      response.on("close", () => forwarded.destroy())
      request.pipe(forwarded)
    })
    server.listen(0, "127.0.0.1", () => resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, close: () => {
      server.closeAllConnections()
      server.close()
    } }))
  })

/** The suite's server scenarios that test a protocol feature rather than its own fixture tools (`test_image_content`, …). */
const SCENARIOS = ["server-initialize", "ping", "tools-list", "resources-list", "prompts-list", "logging-set-level", "completion-complete", "dns-rebinding-protection"]

describe("the MCP Inspector and the MCP conformance suite against our server", () => {
  skipWithoutMcpTools()
  let store: StoreLocation
  let dataDir: string
  let token: string
  let tenantId: string
  let host: TestHost | undefined

  beforeAll(async () => {
    if (!MCP_TOOLS) return
    dataDir = testDataDir()
    store = { kind: "pglite", dataDir }
    const runtime = ManagedRuntime.make(layerCore(store))
    try {
      await runtime.runPromise(Effect.gen(function* () {
        const tenancy = yield* Tenancy
        const tenant = yield* tenancy.createTenant({ name: "Inspected", countryCode: "BR" })
        tenantId = tenant.id
        token = (yield* tenancy.createApiKey({ tenantId, name: "inspector", permissions: ALL_PERMISSIONS })).token
      }))
    } finally {
      await runtime.dispose()
    }
  }, 120_000)
  afterAll(async () => {
    await host?.close()
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true })
  })

  it.runIf(MCP_TOOLS_RUN)("lists and calls tools over stdio (erp mcp)", async () => {
    // The Inspector starts the server with a minimal environment: the key that sealed the store's secrets is passed on.
    const secretKey = process.env.ERP_SECRET_KEY ? ["-e", `ERP_SECRET_KEY=${process.env.ERP_SECRET_KEY}`] : []
    const server = [...secretKey, process.execPath, BIN, "mcp", "--api-key", token, "--data-dir", dataDir]
    const listed = await inspector([...server, "--method", "tools/list"])
    expect(listed.code, listed.output).toBe(0)
    const names = (printed(listed.stdout).tools as Array<{ name: string }>).map((tool) => tool.name)
    expect(names).toEqual(expect.arrayContaining(["list_tenants", "list_products", "create_product", "allocate_payable"]))
    const called = await inspector([...server, "--method", "tools/call", "--tool-name", "list_tenants"])
    expect(called.code, called.output).toBe(0)
    expect(printed(called.stdout).structuredContent).toEqual({ data: [{ id: tenantId, name: "Inspected", country_code: "BR", role: null }] })
  }, 180_000)

  it.runIf(MCP_TOOLS_RUN)("lists and calls tools over Streamable HTTP, and passes the conformance suite's protocol scenarios", async () => {
    host = await startTestHost(store)
    const auth = ["--transport", "http", "--header", `Authorization: Bearer ${token}`]
    const listed = await inspector([host.url, ...auth, "--method", "tools/list"])
    expect(listed.code, listed.output).toBe(0)
    expect((printed(listed.stdout).tools as Array<unknown>).length).toBeGreaterThan(50)
    const created = await inspector([host.url, ...auth, "--method", "tools/call", "--tool-name", "create_product", "--tool-arg", "name=Inspected chair"])
    expect(created.code, created.output).toBe(0)
    expect(printed(created.stdout).structuredContent).toMatchObject({ name: "Inspected chair" })

    const proxy = await startKeyProxy(host.url, token)
    try {
      for (const scenario of SCENARIOS) {
        const result = await run([MCP_TOOLS!.conformance, "server", "--url", proxy.url, "--scenario", scenario])
        expect(result.output, `${scenario}:\n${result.output}`).toMatch(/Passed: (\d+)\/\1, 0 failed/)
      }
    } finally {
      proxy.close()
    }
  }, 300_000)
})
