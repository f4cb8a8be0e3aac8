import type { Command } from "commander"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { BIN, erp, json, serve, stop } from "../../../test/support/cli.js"
import { makeProgram } from "../src/main.js"
import { testDataDir } from "../../../test/support/stores.js"

describe("erp CLI on the embedded store", () => {
  let dir: string
  let flags: Array<string>
  let tenantId: string

  beforeAll(async () => {
    dir = testDataDir()
    flags = ["--data-dir", dir]
    tenantId = json(await erp([...flags, "tenants", "create", "--name", "Acme Ltda", "--country", "br", "--json"])).id
  })
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

  it("creates a tenant and prints one JSON object", async () => {
    const tenant = json(await erp([...flags, "tenants", "create", "--name", "Beta Inc", "--country", "US", "--json"]))
    expect(tenant).toMatchObject({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), name: "Beta Inc", country_code: "US", time_zone: "America/New_York" })
    const list = json(await erp([...flags, "tenants", "list", "--json"]))
    expect(list.map((item: { id: string }) => item.id)).toContain(tenant.id)
  }, 120_000)

  it("gives a tenant its country's time zone unless told one, and changes it", async () => {
    const tenant = json(await erp([...flags, "tenants", "create", "--name", "Manaus", "--country", "BR", "--time-zone", "america/manaus", "--json"]))
    expect(tenant.time_zone).toBe("America/Manaus")
    expect(json(await erp([...flags, "tenants", "set-time-zone", "--tenant", tenant.id, "--time-zone", "America/Noronha", "--json"])).time_zone).toBe("America/Noronha")
    const refused = await erp([...flags, "tenants", "create", "--name", "X", "--country", "BR", "--time-zone", "Mars/Olympus"])
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain("Unknown time zone")
  }, 120_000)

  it("imports an OFX statement into a financial account; a second import adds nothing", async () => {
    const key = json(await erp([...flags, "keys", "create", "--tenant", tenantId, "--name", "ofx", "--all", "--json"]))
    const host = await serve(flags)
    let account = ""
    try {
      const response = await fetch(`${host.url}/financial-accounts`, { method: "POST", headers: { authorization: key.token, "content-type": "application/json" }, body: JSON.stringify({ name: "Itaú", type: "checking" }) })
      account = ((await response.json()) as { id: string }).id
    } finally {
      await stop(host.child)
    }
    const file = path.resolve("test/fixtures/ofx/itau-2024-01.ofx")
    expect(json(await erp([...flags, "import", "ofx", file, "--account", account, "--tenant", tenantId]))).toEqual({ account_id: account, imported: 6, duplicates: 0, corrected: 0, skipped: [] })
    expect(json(await erp([...flags, "import", "ofx", file, "--account", account, "--tenant", tenantId]))).toMatchObject({ imported: 0, duplicates: 6 })
    const exported = await erp([...flags, "export", "financial-transactions", "--tenant", tenantId])
    expect(exported.stdout.trim().split("\n")).toHaveLength(6)
  }, 120_000)

  it("imports fiscal rules from a JSON file (a second import updates by name) and lists them", async () => {
    const file = path.join(dir, "rules.json")
    const rules = [
      { name: "Café SP", ncm_prefix: "0901", origin_state_code: "SP", taxes: [{ tax_code: "ICMS", rate: "18", is_included: true }] },
      { name: "Serviços", operation_type: "service_sale", taxes: [{ tax_code: "ISS", rate: "5", is_withheld: true }] }
    ]
    fs.writeFileSync(file, JSON.stringify(rules))
    const first = json(await erp([...flags, "fiscal-rules", "import", file, "--tenant", tenantId]))
    expect(first).toMatchObject({ created: 2, updated: 0 })
    fs.writeFileSync(file, JSON.stringify({ data: [{ ...rules[0], taxes: [{ tax_code: "ICMS", rate: "12" }] }] }))
    expect(json(await erp([...flags, "fiscal-rules", "import", file, "--tenant", tenantId]))).toEqual({ created: 0, updated: 1, ids: [first.ids[0]] })
    const listed = (await erp([...flags, "fiscal-rules", "list", "--tenant", tenantId])).stdout.trim().split("\n").map((line) => JSON.parse(line))
    expect(listed.map((rule: { name: string; taxes: Array<{ rate: string }> }) => [rule.name, rule.taxes.map((tax) => tax.rate)])).toEqual([["Café SP", ["12.000000"]], ["Serviços", ["5.000000"]]])
    fs.writeFileSync(file, JSON.stringify([{ name: "Errado", taxes: [{ tax_code: "ICMS", rate: "dezoito" }] }]))
    const refused = await erp([...flags, "fiscal-rules", "import", file, "--tenant", tenantId])
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain("Record 0")
    expect(refused.stderr).toContain("taxes")
  }, 120_000)

  it("refuses an unknown country with a clear message and exit code 1", async () => {
    const result = await erp([...flags, "tenants", "create", "--name", "X", "--country", "XX"])
    expect(result.code).toBe(1)
    expect(result.stderr).toContain("Unknown country code")
  })

  it("creates users and memberships", async () => {
    const user = json(await erp([...flags, "users", "create", "--email", "ana@acme.example", "--name", "Ana", "--json"]))
    expect(user.email).toBe("ana@acme.example")
    const membership = json(await erp([...flags, "members", "add", "--tenant", tenantId, "--user", "ana@acme.example", "--role", "member", "--permission", "products:read", "--json"]))
    expect(membership).toMatchObject({ tenant_id: tenantId, user_id: user.id, role: "member" })
    const again = await erp([...flags, "members", "add", "--tenant", tenantId, "--user", user.id, "--role", "admin"])
    expect(again.code).toBe(1)
    expect(again.stderr).toContain("already a member")
    const badRole = await erp([...flags, "members", "add", "--tenant", tenantId, "--user", user.id, "--role", "owner"])
    expect(badRole.code).not.toBe(0)
  }, 120_000)

  it("creates keys with permissions, shows the token once, lists without secrets, revokes", async () => {
    const created = json(await erp([...flags, "keys", "create", "--tenant", tenantId, "--name", "sync", "--permission", "products:read", "--permission", "customers:*", "--json"]))
    expect(created.token).toMatch(/^sk_[a-z0-9]{16}_[A-Za-z0-9]{40}$/)
    expect(created.permissions).toEqual([
      { resource_code: "customers", can_read: true, can_create: true, can_update: true, can_delete: true },
      { resource_code: "products", can_read: true, can_create: false, can_update: false, can_delete: false }
    ])
    const listed = await erp([...flags, "keys", "list", "--tenant", tenantId, "--json"])
    expect(listed.stdout).not.toContain(created.token.split("_")[2])
    expect(JSON.parse(listed.stdout).find((key: { id: string }) => key.id === created.id)).toMatchObject({ name: "sync", revoked_at: null })
    const revoked = json(await erp([...flags, "keys", "revoke", created.id, "--json"]))
    expect(revoked.revoked_at).toEqual(expect.any(String))
  }, 120_000)

  it("gives a key its own rate limit and a tenant a limit for its other keys, refusing nonsense", async () => {
    const created = json(await erp([...flags, "keys", "create", "--tenant", tenantId, "--name", "nightly", "--all", "--rate-limit", "600", "--json"]))
    expect(created.rate_limit_per_minute).toBe(600)
    const listed = await erp([...flags, "keys", "list", "--tenant", tenantId])
    expect(listed.stdout).toContain("rate limit: 600/min")
    const zero = await erp([...flags, "keys", "create", "--tenant", tenantId, "--name", "zero", "--all", "--rate-limit", "0"])
    expect(zero.code).toBe(1)
    expect(zero.stderr).toContain("rate limit")
    const words = await erp([...flags, "keys", "create", "--tenant", tenantId, "--name", "words", "--all", "--rate-limit", "lots"])
    expect(words.code).toBe(1)
    expect(words.stderr).toContain("--rate-limit")
    const tenant = await erp([...flags, "tenants", "set-rate-limit", "--tenant", tenantId, "--per-minute", "3000"])
    expect(tenant.code).toBe(0)
    expect(tenant.stdout).toContain("3000 requests a minute")
    expect((await erp([...flags, "tenants", "set-rate-limit", "--tenant", tenantId, "--default"])).stdout).toContain("6000")
  }, 120_000)

  it("refuses a key without permissions or with an unknown one", async () => {
    const none = await erp([...flags, "keys", "create", "--tenant", tenantId, "--name", "none"])
    expect(none.code).toBe(1)
    expect(none.stderr).toContain("--permission")
    const unknown = await erp([...flags, "keys", "create", "--tenant", tenantId, "--name", "x", "--permission", "invoices:fly"])
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toContain("Unknown")
  })

  it("accepts an expiry in the past with a warning", async () => {
    const result = await erp([...flags, "keys", "create", "--tenant", tenantId, "--name", "old", "--all", "--expires-at", "2020-01-01", "--json"])
    expect(result.code).toBe(0)
    expect(result.stderr).toContain("Warning")
    expect(JSON.parse(result.stdout).expires_at).toBe("2020-01-01")
  })

  it("serves HTTP with keys made by the CLI, and a revoked key gets 401", async () => {
    const key = json(await erp([...flags, "keys", "create", "--tenant", tenantId, "--name", "http", "--all", "--json"]))
    const readOnly = json(await erp([...flags, "keys", "create", "--tenant", tenantId, "--name", "ro", "--permission", "products:read", "--json"]))
    const host = await serve(flags)
    try {
      const created = await fetch(`${host.url}/products`, {
        method: "POST",
        headers: { authorization: `Bearer ${key.token}`, "content-type": "application/json" },
        body: JSON.stringify({ name: "From the CLI host" })
      })
      expect(created.status).toBe(201)
      expect((await fetch(`${host.url}/products`, { headers: { authorization: readOnly.token } })).status).toBe(200)
      const denied = await fetch(`${host.url}/products`, { method: "POST", headers: { authorization: readOnly.token, "content-type": "application/json" }, body: "{\"name\":\"x\"}" })
      expect(denied.status).toBe(403)

      // While the host holds the folder, the CLI reaches the store through the host's socket:
      // it sees the record just written over HTTP, a key it makes works at once, and one it revokes is
      // refused within the host's 5-second authentication cache (a revocation from another process).
      const exported = await erp([...flags, "export", "products", "--tenant", tenantId])
      expect(exported.code, exported.stderr).toBe(0)
      expect(exported.stdout).toContain("From the CLI host")
      const late = json(await erp([...flags, "keys", "create", "--tenant", tenantId, "--name", "late", "--permission", "products:read", "--json"]))
      expect((await fetch(`${host.url}/products`, { headers: { authorization: `Bearer ${late.token}` } })).status).toBe(200)
      json(await erp([...flags, "keys", "revoke", late.id, "--json"]))
      await expect.poll(async () => (await fetch(`${host.url}/products`, { headers: { authorization: `Bearer ${late.token}` } })).status, { timeout: 10_000, interval: 500 }).toBe(401)
      expect((await fetch(`${host.url}/health`)).status).toBe(200)

      // The socket is the only way in: without it (removed here) the CLI is refused with the holder named.
      const socket = path.join(dir, "run", ".s.PGSQL.5432")
      expect((fs.statSync(path.join(dir, "run")).mode & 0o777).toString(8)).toBe("700")
      fs.rmSync(socket)
      const refused = await erp([...flags, "tenants", "list"])
      expect(refused.code).toBe(1)
      expect(refused.stderr).toContain(`in use by process ${host.child.pid}`)
      expect((await fetch(`${host.url}/health`)).status).toBe(200)
    } finally {
      await stop(host.child)
    }
    // The lock is released on exit: the CLI opens the folder itself, and a restarted host refuses the revoked key.
    json(await erp([...flags, "keys", "revoke", key.id, "--json"]))
    expect(fs.existsSync(path.join(dir, "run", ".s.PGSQL.5432"))).toBe(false)
    const again = await serve(flags)
    try {
      expect((await fetch(`${again.url}/products`, { headers: { authorization: `Bearer ${key.token}` } })).status).toBe(401)
    } finally {
      await stop(again.child)
    }
  }, 180_000)

  it("lists each key as active, expired or revoked", async () => {
    const active = json(await erp([...flags, "keys", "create", "--tenant", tenantId, "--name", "status-active", "--all", "--json"]))
    const expired = json(await erp([...flags, "keys", "create", "--tenant", tenantId, "--name", "status-expired", "--all", "--expires-at", "2020-01-01", "--json"]))
    const revoked = json(await erp([...flags, "keys", "create", "--tenant", tenantId, "--name", "status-revoked", "--all", "--json"]))
    json(await erp([...flags, "keys", "revoke", revoked.id, "--json"]))
    const text = (await erp([...flags, "keys", "list", "--tenant", tenantId])).stdout
    const line = (id: string) => text.split("\n").find((candidate) => candidate.startsWith(id))
    expect(line(active.id)).toMatch(/status-active {2}active$/)
    expect(line(expired.id)).toMatch(/status-expired {2}expired 2020-01-01$/)
    expect(line(revoked.id)).toMatch(/status-revoked {2}revoked \d{4}-/)
    const listed = json(await erp([...flags, "keys", "list", "--tenant", tenantId, "--json"])) as Array<{ id: string; status: string }>
    expect(Object.fromEntries(listed.filter((key) => [active.id, expired.id, revoked.id].includes(key.id)).map((key) => [key.id, key.status]))).toEqual({
      [active.id]: "active",
      [expired.id]: "expired",
      [revoked.id]: "revoked"
    })
  }, 120_000)

  it("restores a deleted record and exports a tenant's records as JSON lines", async () => {
    const key = json(await erp([...flags, "keys", "create", "--tenant", tenantId, "--name", "export", "--all", "--json"]))
    const host = await serve(flags)
    let removed = ""
    try {
      for (const name of ["A", "B", "C"]) {
        const response = await fetch(`${host.url}/products`, { method: "POST", headers: { authorization: key.token, "content-type": "application/json" }, body: JSON.stringify({ name: `Export ${name}` }) })
        removed = ((await response.json()) as { id: string }).id
      }
      expect((await fetch(`${host.url}/products/${removed}`, { method: "DELETE", headers: { authorization: key.token } })).status).toBe(204)
    } finally {
      await stop(host.child)
    }
    // The panel's restore, for operators: no REST route, the record comes back with its event.
    const restored = json(await erp([...flags, "restore", "products", removed, "--tenant", tenantId, "--json"]))
    expect(restored).toMatchObject({ id: removed, name: "Export C", deleted_at: null })
    const again = await erp([...flags, "restore", "products", removed, "--tenant", tenantId])
    expect(again.code).toBe(1)
    expect(again.stderr).toContain("is not deleted")
    const result = await erp([...flags, "export", "products", "--tenant", tenantId])
    expect(result.code, result.stderr).toBe(0)
    const names = result.stdout.trim().split("\n").map((line) => JSON.parse(line).name)
    expect(names).toEqual(expect.arrayContaining(["Export A", "Export B", "Export C"]))
    expect(result.stderr).toMatch(/Exported \d+ products/)
    const empty = await erp([...flags, "export", "customers", "--tenant", tenantId])
    // Progress lines may come first on a slow machine; the summary is the last line.
    expect(empty.stderr.trim().split("\n").at(-1)).toMatch(/^Exported 0 customers as ndjson to stdout in [\d.]+ s \(\d+ rows\/s\)$/)
  }, 120_000)

  it("leaves an API key given to erp mcp out of the folder's lock file and of the message naming its holder", async () => {
    const key = json(await erp([...flags, "keys", "create", "--tenant", tenantId, "--name", "agent", "--all", "--json"]))
    const agent = spawn(process.execPath, [BIN, ...flags, "mcp", "--api-key", key.token], { env: { ...process.env, DATABASE_URL: "" } })
    const lock = path.join(dir, "erp.lock")
    const socket = path.join(dir, "run", ".s.PGSQL.5432")
    try {
      await expect.poll(() => fs.existsSync(lock) && fs.existsSync(socket), { timeout: 60_000, interval: 200 }).toBe(true)
      expect(JSON.parse(fs.readFileSync(lock, "utf8"))).toEqual({ pid: agent.pid, command: "erp.js" })
      expect((fs.statSync(lock).mode & 0o777).toString(8)).toBe("600")
      // Without the holder's socket the CLI is refused, naming the holder by its pid and command name only.
      fs.rmSync(socket)
      const refused = await erp([...flags, "tenants", "list"])
      expect(refused.code).toBe(1)
      expect(refused.stderr).toContain(`in use by process ${agent.pid} (erp.js)`)
      expect(refused.stderr).not.toContain(key.token)
    } finally {
      await stop(agent)
    }
  }, 120_000)
})

describe("secrets in help texts", () => {
  it("names ERP_API_KEY in erp mcp --help without printing the key it holds", async () => {
    const secret = "sk_test_0123456789abcdefghijklmnopqrstuv"
    const help = await erp(["mcp", "--help"], { env: { ERP_API_KEY: secret } })
    expect(help.code).toBe(0)
    expect(help.stdout).toContain("ERP_API_KEY")
    expect(help.stdout + help.stderr).not.toContain(secret)
  }, 60_000)

  it("prints no environment variable's value in any command's help", () => {
    const secret = "s3cret-password"
    const names = ["DATABASE_URL", "ERP_API_KEY", "ERP_SECRET_KEY", "ERP_SECRET_KEY_PREVIOUS", "ERP_DATA_DIR", "ERP_PUBLIC_URL"]
    const saved = Object.fromEntries(names.map((name) => [name, process.env[name]]))
    try {
      for (const name of names) process.env[name] = `${name}-${secret}`
      // Defaults are read when the commands are declared: the program is made with the variables set.
      const walk = (command: Command): Array<Command> => [command, ...command.commands.flatMap(walk)]
      const commands = walk(makeProgram())
      expect(commands.length).toBeGreaterThan(30)
      const leaked = commands.filter((command) => command.helpInformation().includes(secret)).map((command) => command.name())
      expect(leaked).toEqual([])
    } finally {
      for (const name of names) {
        if (saved[name] === undefined) delete process.env[name]
        else process.env[name] = saved[name]
      }
    }
  })
})

/** A port nothing listens on: one the system just handed out and took back. */
const closedPort = () =>
  new Promise<number>((resolve) => {
    const server = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo
      server.close(() => resolve(port))
    })
  })

describe("erp's answers on an empty store and at start-up failures", () => {
  it("says so when a store has no tenants", async () => {
    const dir = testDataDir()
    try {
      const result = await erp(["--data-dir", dir, "tenants", "list"])
      expect(result.code).toBe(0)
      expect(result.stdout).toMatch(/^No tenants yet/)
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  }, 60_000)

  it("refuses a busy port in one line before opening the store", async () => {
    const busy = net.createServer()
    const port = await new Promise<number>((resolve) => busy.listen(0, "127.0.0.1", () => resolve((busy.address() as net.AddressInfo).port)))
    const dir = path.join(os.tmpdir(), `erp-never-${process.pid}-${port}`)
    try {
      const result = await erp(["--data-dir", dir, "serve", "--port", String(port)])
      expect(result.code).toBe(1)
      expect(result.stderr).toBe(`Error: port ${port} is already in use; pass --port\n`)
      expect(fs.existsSync(dir)).toBe(false)
    } finally {
      busy.close()
    }
  })

  it("names the PostgreSQL server it cannot reach in one line, the stack only with --verbose", async () => {
    const port = await closedPort()
    const url = `postgres://postgres@127.0.0.1:${port}/erp`
    const plain = await erp(["--database-url", url, "tenants", "list"])
    expect(plain.code).toBe(1)
    expect(plain.stderr.trimEnd().split("\n")).toEqual([expect.stringMatching(new RegExp(`^Error: cannot connect to PostgreSQL at 127\\.0\\.0\\.1:${port}: connection refused; `))])
    const verbose = await erp(["--database-url", url, "serve", "--port", "0", "--verbose"])
    expect(verbose.code).toBe(1)
    expect(verbose.stderr).toContain(`cannot connect to PostgreSQL at 127.0.0.1:${port}`)
    expect(verbose.stderr).toMatch(/\n\s+at /)
  })

  it("requires ERP_SECRET_KEY with PostgreSQL, in one line, before connecting", async () => {
    const port = await closedPort()
    const result = await erp(["--database-url", `postgres://postgres@127.0.0.1:${port}/erp`, "tenants", "list"], { env: { ERP_SECRET_KEY: "" } })
    expect(result.code).toBe(1)
    expect(result.stderr).toBe(
      "Error: ERP_SECRET_KEY is not set: it is required with PostgreSQL, to encrypt the secrets kept in the database; " +
        "generate one with: openssl rand -base64 32, and give every host the same one\n"
    )
  })

  it("makes the embedded store's key file (0600) without ERP_SECRET_KEY, and refuses a wrong key in one line", async () => {
    const dir = testDataDir()
    try {
      expect((await erp(["--data-dir", dir, "tenants", "list"], { env: { ERP_SECRET_KEY: "" } })).code).toBe(0)
      const file = path.join(dir, "secret.key")
      expect(fs.statSync(file).mode & 0o777).toBe(0o600)
      expect(Buffer.from(fs.readFileSync(file, "utf8").trim(), "base64")).toHaveLength(32)
      expect((await erp(["--data-dir", dir, "tenants", "list"], { env: { ERP_SECRET_KEY: "" } })).code).toBe(0)
      const wrong = await erp(["--data-dir", dir, "tenants", "list"], { env: { ERP_SECRET_KEY: "0".repeat(64) } })
      expect(wrong.code).toBe(1)
      expect(wrong.stderr.trimEnd().split("\n")).toEqual([
        expect.stringMatching(/^Error: cannot open the stored secrets: sealed with key [0-9a-f]{16}, but ERP_SECRET_KEY is key [0-9a-f]{16}; set ERP_SECRET_KEY to the key they were sealed with/)
      ])
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  }, 60_000)

  it.runIf(Boolean(process.env.TEST_DATABASE_URL))("names a database that does not exist", async () => {
    const url = new URL(process.env.TEST_DATABASE_URL!)
    url.pathname = `/erp_missing_${process.pid}`
    const result = await erp(["--database-url", url.toString(), "serve", "--port", "0"])
    expect(result.code).toBe(1)
    expect(result.stderr.trimEnd().split("\n")).toEqual([expect.stringContaining(`database "erp_missing_${process.pid}" does not exist`)])
  })
})

describe("erp --version", () => {
  it("prints the CLI package's version, as --version and as -V", async () => {
    const { version } = JSON.parse(fs.readFileSync(path.resolve("packages/cli/package.json"), "utf8")) as { version: string }
    for (const flag of ["--version", "-V"]) {
      const result = await erp([flag])
      expect(result.code, result.stderr).toBe(0)
      expect(result.stdout).toBe(`${version}\n`)
    }
  })
})

describe("erp serve on a fresh store", () => {
  it("migrates, loads catalogs, creates the demo tenant and prints a working key once", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "erp-fresh-"))
    try {
      const host = await serve(["--data-dir", dir])
      let token: string
      try {
        const printed = host.output()
        token = /(sk_[a-z0-9]{16}_[A-Za-z0-9]{40})/.exec(printed)![1]
        expect(printed).toContain(`curl -s ${host.url}/products -H "Authorization: Bearer ${token}"`)
        const response = await fetch(`${host.url}/products`, { headers: { authorization: `Bearer ${token}` } })
        expect(response.status).toBe(200)
        // The catalogs a new folder starts with (copied from the build's store template, or loaded) are the bundled snapshots.
        const snapshot = JSON.parse(fs.readFileSync(path.resolve("packages/core/src/catalogs/data/countries.json"), "utf8")) as { records: Array<Record<string, unknown>> }
        const brazil = await fetch(`${host.url}/countries/iso2/BR`, { headers: { authorization: `Bearer ${token}` } })
        expect(brazil.status).toBe(200)
        expect(await brazil.json()).toMatchObject(snapshot.records.find((record) => record.iso2 === "BR")!)
      } finally {
        await stop(host.child)
      }
      const restarted = await serve(["--data-dir", dir])
      try {
        expect(restarted.output()).not.toContain("sk_")
        expect((await fetch(`${restarted.url}/products`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200)
      } finally {
        await stop(restarted.child)
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  }, 180_000)
})

describe.runIf(Boolean(process.env.TEST_DATABASE_URL))("erp CLI on PostgreSQL", () => {
  it("creates a tenant and a key, and serves with them", async () => {
    const flags = ["--database-url", process.env.TEST_DATABASE_URL!]
    const tenant = json(await erp([...flags, "tenants", "create", "--name", "PG Tenant", "--country", "US", "--json"]))
    const key = json(await erp([...flags, "keys", "create", "--tenant", tenant.id, "--name", "pg", "--all", "--json"]))
    const host = await serve(flags)
    try {
      const response = await fetch(`${host.url}/customers`, { headers: { authorization: `Bearer ${key.token}` } })
      expect(response.status).toBe(200)
      expect(host.output()).toContain("PostgreSQL")
    } finally {
      await stop(host.child)
    }
  }, 120_000)
})
