import { randomInt } from "node:crypto"
import * as fs from "node:fs"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { erp, serve, stop } from "../../../test/support/cli.js"
import { storeKinds, testDataDir } from "../../../test/support/stores.js"

/** An address of its own for each registration, so that runs sharing a PostgreSQL database never share a limit. */
const someAddress = () => `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`

/** A public client's dynamic registration (RFC 7591), sent as from `forwardedFor` behind a proxy. */
const register = (url: string, forwardedFor: string) =>
  fetch(`${url}/oauth/register`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-forwarded-for": forwardedFor },
    body: JSON.stringify({ client_name: "configuration test", redirect_uris: ["http://127.0.0.1:9/callback"] })
  })

/** `erp serve` reads its settings from the environment through the declared configuration. */
describe.each(storeKinds)("erp serve's settings from the environment on %s", (kind) => {
  let dir: string | undefined
  const flags = () => (kind === "postgres" ? ["--database-url", process.env.TEST_DATABASE_URL!] : ["--data-dir", dir!])

  beforeAll(() => {
    if (kind === "pglite") dir = testDataDir()
  })
  afterAll(() => {
    if (dir) fs.rmSync(dir, { recursive: true, force: true })
  })

  it("does not start with a boolean it cannot read, and says so in one line naming the variable", async () => {
    const result = await erp([...flags(), "serve", "--port", "0"], { env: { ERP_TRUST_PROXY: "maybe" } })
    expect(result.code).toBe(1)
    expect(result.stderr).toBe('Error: ERP_TRUST_PROXY must be true, false, 1, 0, yes or no; got "maybe"\n')
    expect(result.stdout).toBe("")
    const port = await erp([...flags(), "serve"], { env: { PORT: "eighty" } })
    expect(port.code).toBe(1)
    expect(port.stderr).toBe('Error: PORT must be a whole number from 0 to 65535; got "eighty"\n')
  })

  it("ERP_DYNAMIC_REGISTRATION=0 turns dynamic client registration off", async () => {
    const host = await serve(flags(), [], { ERP_DYNAMIC_REGISTRATION: "0" })
    try {
      const metadata = await (await fetch(`${host.url}/.well-known/oauth-authorization-server`)).json()
      expect(metadata).toMatchObject({ issuer: host.url })
      expect(metadata).not.toHaveProperty("registration_endpoint")
      const refused = await register(host.url, someAddress())
      expect(refused.status).toBe(403)
      expect(await refused.json()).toMatchObject({ error: "access_denied" })
    } finally {
      await stop(host.child)
    }
  })

  it("ERP_TRUST_PROXY=1 takes each caller from X-Forwarded-For: two addresses behind the proxy have a limit each", async () => {
    const host = await serve(flags(), [], { ERP_TRUST_PROXY: "1", ERP_OAUTH_REGISTRATIONS_PER_MINUTE: "1" })
    try {
      const [first, second] = [someAddress(), someAddress()]
      expect((await register(host.url, first)).status).toBe(201)
      // Without trust both come from 127.0.0.1, and this second registration of the minute would be refused.
      expect((await register(host.url, second)).status).toBe(201)
      expect((await register(host.url, first)).status).toBe(429)
    } finally {
      await stop(host.child)
    }
  })
})
