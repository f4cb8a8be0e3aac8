import type { ChildProcess } from "node:child_process"
import * as fs from "node:fs"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  authorizationUrl,
  FormSession,
  hiddenFieldsOf,
  makePkce,
  type OAuthTestClient,
  obtainTokens,
  plainRequest
} from "../../../test/support/oauth.js"
import { erp, json, serve, stop } from "../../../test/support/cli.js"
import { testDataDir } from "../../../test/support/stores.js"

const PASSWORD = "a long enough passphrase"

describe("erp oauth-clients and users set-password on the embedded store", () => {
  let dir: string
  let flags: Array<string>
  let tenantId: string
  let email: string

  beforeAll(async () => {
    dir = testDataDir()
    flags = ["--data-dir", dir]
    tenantId = json(await erp([...flags, "tenants", "create", "--name", "Acme Ltda", "--country", "BR", "--json"])).id
    email = `ana-${Date.now()}@example.com`
    const user = json(await erp([...flags, "users", "create", "--email", email, "--name", "Ana", "--json"]))
    json(await erp([...flags, "members", "add", "--tenant", tenantId, "--user", user.id, "--role", "admin", "--json"]))
  })
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

  describe("oauth-clients", () => {
    it("creates a confidential client and prints client_id and client_secret as JSON", async () => {
      const created = json(await erp([...flags, "oauth-clients", "create", "--name", "x", "--redirect-uri", "http://127.0.0.1:1/cb", "--json"]))
      expect(created).toMatchObject({
        client_id: expect.stringMatching(/^client_[A-Za-z0-9]+$/),
        client_secret: expect.stringMatching(/^secret_[A-Za-z0-9]+$/),
        name: "x",
        kind: "confidential",
        registration: "operator",
        redirect_uris: ["http://127.0.0.1:1/cb"],
        revoked_at: null
      })
      expect(created).not.toHaveProperty("secret_hash")
    })

    it("never shows the secret again: list has neither the secret nor its hash", async () => {
      const created = json(await erp([...flags, "oauth-clients", "create", "--name", "listed", "--redirect-uri", "http://127.0.0.1:1/cb", "--json"]))
      const listed = await erp([...flags, "oauth-clients", "list", "--json"])
      const list = json(listed)
      const entry = list.find((item: { client_id: string }) => item.client_id === created.client_id)
      expect(entry).toMatchObject({ client_id: created.client_id, name: "listed" })
      expect(entry).not.toHaveProperty("client_secret")
      expect(entry).not.toHaveProperty("secret_hash")
      expect(listed.stdout).not.toContain(created.client_secret)
      const text = await erp([...flags, "oauth-clients", "list"])
      expect(text.code).toBe(0)
      expect(text.stdout).toContain(created.client_id)
      expect(text.stdout).not.toContain(created.client_secret)
    })

    it("prints the secret once in text mode too", async () => {
      const result = await erp([...flags, "oauth-clients", "create", "--name", "text", "--redirect-uri", "https://app.example.com/cb"])
      expect(result.code, result.stderr).toBe(0)
      expect(result.stdout).toMatch(/client_id: client_[A-Za-z0-9]+/)
      const secret = /(secret_[A-Za-z0-9]+)/.exec(result.stdout)?.[1]
      expect(secret).toBeDefined()
      expect(result.stdout.split(secret!).length - 1).toBe(1)
    })

    it("creates a public client with no secret", async () => {
      const created = json(await erp([...flags, "oauth-clients", "create", "--name", "cli app", "--redirect-uri", "http://127.0.0.1:1/cb", "--public", "--json"]))
      expect(created.kind).toBe("public")
      expect(created).not.toHaveProperty("client_secret")
      const text = await erp([...flags, "oauth-clients", "create", "--name", "cli app", "--redirect-uri", "http://127.0.0.1:1/cb", "--public"])
      expect(text.stdout).not.toMatch(/secret_/)
    })

    it("takes --redirect-uri more than once", async () => {
      const created = json(await erp([
        ...flags, "oauth-clients", "create", "--name", "two", "--redirect-uri", "http://127.0.0.1:1/a", "--redirect-uri", "https://app.example.com/b", "--json"
      ]))
      expect(created.redirect_uris).toEqual(["http://127.0.0.1:1/a", "https://app.example.com/b"])
    })

    it.each([
      ["http off localhost", "http://example.com/cb"],
      ["a relative URI", "/cb"],
      ["a fragment", "https://app.example.com/cb#x"]
    ])("refuses a redirect URI with %s: exit 1 and a message, nothing created", async (_, uri) => {
      const before = json(await erp([...flags, "oauth-clients", "list", "--json"])).length
      const result = await erp([...flags, "oauth-clients", "create", "--name", "bad", "--redirect-uri", uri, "--json"])
      expect(result.code).toBe(1)
      expect(result.stderr).toContain("Redirect URI")
      expect(result.stdout).toBe("")
      expect(json(await erp([...flags, "oauth-clients", "list", "--json"])).length).toBe(before)
    })

    it("requires --name and --redirect-uri", async () => {
      expect((await erp([...flags, "oauth-clients", "create", "--redirect-uri", "http://127.0.0.1:1/cb"])).code).not.toBe(0)
      expect((await erp([...flags, "oauth-clients", "create", "--name", "x"])).code).not.toBe(0)
    })

    it("revokes a client; list then shows it revoked", async () => {
      const created = json(await erp([...flags, "oauth-clients", "create", "--name", "gone", "--redirect-uri", "http://127.0.0.1:1/cb", "--json"]))
      const revoked = json(await erp([...flags, "oauth-clients", "revoke", created.client_id, "--json"]))
      expect(revoked.revoked_at).toEqual(expect.any(String))
      const entry = json(await erp([...flags, "oauth-clients", "list", "--json"])).find((item: { client_id: string }) => item.client_id === created.client_id)
      expect(entry.revoked_at).toEqual(expect.any(String))
    })

    it("refuses to revoke an unknown client with exit 1", async () => {
      const result = await erp([...flags, "oauth-clients", "revoke", "client_nope"])
      expect(result.code).toBe(1)
      expect(result.stderr).toContain("client_nope")
    })
  })

  describe("users set-password", () => {
    it("refuses a short password with exit 1 and a message", async () => {
      const result = await erp([...flags, "users", "set-password", "--user", email, "--password-stdin"], { input: "short\n" })
      expect(result.code).toBe(1)
      expect(result.stderr).toContain("at least 10 characters")
    })

    it("refuses an unknown user with exit 1", async () => {
      const result = await erp([...flags, "users", "set-password", "--user", "nobody@example.com", "--password-stdin"], { input: `${PASSWORD}\n` })
      expect(result.code).toBe(1)
      expect(result.stderr.length).toBeGreaterThan(0)
    })

    it("asks for a password when given none", async () => {
      const result = await erp([...flags, "users", "set-password", "--user", email])
      expect(result.code).toBe(1)
      expect(result.stderr).toContain("--password-stdin")
    })

    it("sets the password from standard input", async () => {
      const result = await erp([...flags, "users", "set-password", "--user", email, "--password-stdin"], { input: `${PASSWORD}\n` })
      expect(result.code, result.stderr).toBe(0)
      expect(result.stdout).toContain(email)
      expect(result.stdout).not.toContain(PASSWORD)
    })
  })

  describe("signing in on erp serve", () => {
    let server: { child: ChildProcess; url: string } | undefined
    let testClient: OAuthTestClient

    beforeAll(async () => {
      const created = json(await erp([...flags, "oauth-clients", "create", "--name", "Served app", "--redirect-uri", "http://127.0.0.1:1/cb", "--json"]))
      testClient = { client: created, clientId: created.client_id, secret: created.client_secret, redirectUri: "http://127.0.0.1:1/cb", auth: "client_secret_basic" }
      expect((await erp([...flags, "users", "set-password", "--user", email, "--password-stdin"], { input: `${PASSWORD}\n` })).code).toBe(0)
      server = await serve(flags)
    })
    afterAll(async () => {
      if (server) await stop(server.child)
    })

    it("signs in with the password set by the CLI and calls the API with the token", async () => {
      const { tokens } = await obtainTokens(server!.url, testClient, { email, password: PASSWORD })
      expect(tokens.access_token).toMatch(/^svc_/)
      const response = await fetch(`${server!.url}/products`, { headers: { authorization: `Bearer ${tokens.access_token}` } })
      expect(response.status).toBe(200)
    })

    it("refuses the password with the newline that ended it on standard input", async () => {
      const session = new FormSession()
      const url = authorizationUrl(server!.url, { clientId: testClient.clientId, pkce: makePkce(), state: "s" })
      const page = await session.get(url)
      const posted = await session.post(new URL("/oauth/authorize", server!.url), { ...hiddenFieldsOf(page.text), email, password: `${PASSWORD}\n` })
      expect(posted.status).toBe(401)
      expect(posted.text).toContain("Email or password is not right")
    })

    it("answers the discovery document on the served host", async () => {
      const response = await plainRequest(`${server!.url}/.well-known/oauth-authorization-server`)
      expect(response.status).toBe(200)
      expect(response.json.issuer).toBe(server!.url)
    })
  })
})
