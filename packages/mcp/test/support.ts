import { Authenticator, type InvalidRequest, type OAuth, type Principal, type Reports, type ResourceEngine, type Tenancy, type Unauthenticated } from "@erp/core"
import { boundCaller, makeMcpServer, type McpCaller, type ToolDefinition } from "@erp/mcp"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import { Effect, type ManagedRuntime } from "effect"
import { expect } from "vitest"

export interface ToolCall {
  readonly isError: boolean
  /** The JSON text of the first content block, parsed: what an agent reads. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly body: any
  readonly structured: unknown
}

/** An SDK client talking to a fresh server in memory, as an agent host would over a real transport. */
export const connectClient = async <R>(
  runtime: ManagedRuntime.ManagedRuntime<R | ResourceEngine | Reports | Tenancy | OAuth, unknown>,
  principal: Effect.Effect<Principal, Unauthenticated | InvalidRequest, R>,
  tools?: ReadonlyArray<ToolDefinition>
) => connectCaller(runtime, Effect.map(principal, boundCaller), false, tools)

/** As `connectClient`, for any caller (a user choosing among tenants). */
export const connectCaller = async <R>(
  runtime: ManagedRuntime.ManagedRuntime<R | ResourceEngine | Reports | Tenancy | OAuth, unknown>,
  caller: Effect.Effect<McpCaller, Unauthenticated | InvalidRequest, R>,
  choosesTenant: boolean,
  tools?: ReadonlyArray<ToolDefinition>
) => {
  const server = makeMcpServer({ caller, choosesTenant, run: (effect, options) => runtime.runPromise(effect, options), ...(tools ? { tools } : {}) })
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  await server.connect(serverSide)
  const client = new Client({ name: "erp-test", version: "0.0.0" })
  await client.connect(clientSide)

  const call = async (name: string, args: Record<string, unknown> = {}): Promise<ToolCall> => {
    const result = await client.callTool({ name, arguments: args })
    const content = result.content as Array<{ type: string; text: string }>
    expect(content[0].type).toBe("text")
    const body = JSON.parse(content[0].text)
    if (result.structuredContent !== undefined) expect(result.structuredContent).toEqual(body)
    return { isError: result.isError === true, body, structured: result.structuredContent }
  }

  /** A call that must succeed; its parsed result. */
  const ok = async (name: string, args: Record<string, unknown> = {}) => {
    const result = await call(name, args)
    expect(result.isError, JSON.stringify(result.body)).toBe(false)
    return result.body
  }

  /** A call that must be refused with `status`; the spec error body. */
  const refused = async (name: string, args: Record<string, unknown>, status: number) => {
    const result = await call(name, args)
    expect(result.isError, JSON.stringify(result.body)).toBe(true)
    expect(result.body).toMatchObject({ status_code: status, message: expect.any(String), error: expect.any(String) })
    return result.body
  }

  return { client, call, ok, refused, close: () => client.close() }
}

export type TestClient = Awaited<ReturnType<typeof connectClient>>

export const keyPrincipal = (token: string) => Effect.flatMap(Authenticator, (authenticator) => authenticator.authenticate(token))
