import { Config, ConfigProvider, Effect, Option, Redacted, Result } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import {
  ALL_SETTINGS,
  allSettings,
  cliSettings,
  configurationTable,
  explainStartupFailure,
  InvalidSetting,
  loadConfig,
  loadConfigSync,
  mcpSettings,
  OAuthConfig,
  oauthSettings,
  resolveStoreLocation,
  storeSettings,
  webhookSettings
} from "../src/index.js"

const providerOf = (variables: Record<string, string>) => ConfigProvider.fromEnvRecord(variables)

/** A setting read with exactly these variables set: its value, or the message it is refused with. */
const read = <A>(config: Config.Config<A>, variables: Record<string, string>) =>
  Effect.runSync(Effect.result(loadConfig(config)).pipe(Effect.provideService(ConfigProvider.ConfigProvider, providerOf(variables))))

const refusal = <A>(config: Config.Config<A>, variables: Record<string, string>): string => {
  const result = read(config, variables)
  if (Result.isSuccess(result)) throw new Error(`expected a refusal, read ${JSON.stringify(result.success)}`)
  expect(result.failure).toBeInstanceOf(InvalidSetting)
  return result.failure.message
}

describe("boolean settings", () => {
  const trustProxy = oauthSettings.trustProxy

  it("take true/false, 1/0 and yes/no in any case, trimmed", () => {
    for (const text of ["true", "1", "yes", "TRUE", "Yes", " yes ", "\ttrue\n"]) expect(read(trustProxy.config, { ERP_TRUST_PROXY: text }), text).toEqual(Result.succeed(true))
    for (const text of ["false", "0", "no", "FALSE", "No", " 0 "]) expect(read(trustProxy.config, { ERP_TRUST_PROXY: text }), text).toEqual(Result.succeed(false))
  })

  it("take the default when unset or blank", () => {
    expect(read(trustProxy.config, {})).toEqual(Result.succeed(false))
    expect(read(trustProxy.config, { ERP_TRUST_PROXY: "  " })).toEqual(Result.succeed(false))
    expect(read(oauthSettings.dynamicRegistration.config, { ERP_DYNAMIC_REGISTRATION: "" })).toEqual(Result.succeed(true))
  })

  it("refuse anything else in one line naming the variable and the accepted values (Effect's own on/off, y/n included)", () => {
    for (const text of ["maybe", "on", "off", "y", "n", "2", "truthy"]) {
      expect(refusal(trustProxy.config, { ERP_TRUST_PROXY: text }), text).toBe(`ERP_TRUST_PROXY must be true, false, 1, 0, yes or no; got "${text}"`)
    }
  })
})

describe("other settings", () => {
  it("refuse what is not a whole number in range, naming the variable", () => {
    for (const text of ["abc", "1.5", "-1", "0", "1e3", "99999999999999999999"]) {
      expect(refusal(storeSettings.poolSize.config, { ERP_DB_POOL_SIZE: text }), text).toBe(`ERP_DB_POOL_SIZE must be a whole number 1 or more; got "${text}"`)
    }
    expect(read(storeSettings.preparedStatements.config, { ERP_PREPARED_STATEMENTS: "0" })).toEqual(Result.succeed(0))
    expect(read(storeSettings.poolSize.config, { ERP_DB_POOL_SIZE: " 25 " })).toEqual(Result.succeed(25))
    expect(refusal(cliSettings.port.config, { PORT: "65536" })).toBe('PORT must be a whole number from 0 to 65535; got "65536"')
    expect(read(cliSettings.port.config, { PORT: "0" })).toEqual(Result.succeed(0))
  })

  it("read lists, origins, toolsets and URLs, refusing what they cannot use", () => {
    expect(read(oauthSettings.jwtAlgorithms.config, { ERP_JWT_ALGORITHMS: " ES256, ,PS256 " })).toEqual(Result.succeed(["ES256", "PS256"]))
    expect(read(mcpSettings.allowedOrigins.config, { ERP_MCP_ALLOWED_ORIGINS: "*" })).toEqual(Result.succeed("*"))
    expect(read(mcpSettings.allowedOrigins.config, { ERP_MCP_ALLOWED_ORIGINS: "https://a.example, https://b.example" })).toEqual(Result.succeed(["https://a.example", "https://b.example"]))
    expect(read(mcpSettings.toolsets.config, { ERP_MCP_TOOLSETS: "Finance, sales" })).toEqual(Result.succeed(["sales", "finance"]))
    expect(refusal(mcpSettings.toolsets.config, { ERP_MCP_TOOLSETS: "sales,billing" })).toMatch(/^ERP_MCP_TOOLSETS: unknown MCP toolset "billing"; choose among sales, purchases, finance, catalogs, admin/)
    expect(read(oauthSettings.publicUrl.config, { ERP_PUBLIC_URL: "https://erp.example.com/base/" })).toEqual(Result.succeed(Option.some("https://erp.example.com/base")))
    expect(refusal(oauthSettings.publicUrl.config, { ERP_PUBLIC_URL: "erp.example.com" })).toMatch(/^ERP_PUBLIC_URL must be an absolute http\(s\) URL/)
    expect(refusal(oauthSettings.publicUrl.config, { ERP_PUBLIC_URL: "https://erp.example.com/?a=1" })).toMatch(/^ERP_PUBLIC_URL must be an absolute http\(s\) URL without query or fragment/)
  })

  it("keep secrets redacted, and never put a secret's text in a message", () => {
    const secret = "postgres://erp:s3cret-password@db.example.com/erp"
    const url = read(storeSettings.databaseUrl.config, { DATABASE_URL: secret })
    expect(Result.isSuccess(url) && Option.isSome(url.success) && Redacted.isRedacted(url.success.value)).toBe(true)
    expect(String(url)).not.toContain("s3cret")
    expect(read(storeSettings.databaseUrl.config, { DATABASE_URL: "" })).toEqual(Result.succeed(Option.none()))
  })

  it("report every value refused at once, in one line", () => {
    expect(() => loadConfigSync(webhookSettings.allowPrivate.config, providerOf({ ERP_WEBHOOKS_ALLOW_PRIVATE: "sure" }))).toThrow(InvalidSetting)
    const both = refusal(allSettings([oauthSettings.trustProxy.config, oauthSettings.dynamicRegistration.config]), { ERP_TRUST_PROXY: "maybe", ERP_DYNAMIC_REGISTRATION: "nope" })
    expect(both).toContain('ERP_TRUST_PROXY must be true, false, 1, 0, yes or no; got "maybe"')
    expect(both).toContain('ERP_DYNAMIC_REGISTRATION must be true, false, 1, 0, yes or no; got "nope"')
    expect(both).not.toContain("\n")
  })
})

describe("services read their settings through the ConfigProvider in context", () => {
  const oauthWith = (variables: Record<string, string>, overrides: Parameters<typeof OAuthConfig.layer>[0] = {}) =>
    Effect.runSync(Effect.result(Effect.provide(OAuthConfig, OAuthConfig.layer(overrides))).pipe(Effect.provideService(ConfigProvider.ConfigProvider, providerOf(variables))))

  it("OAuth: ERP_DYNAMIC_REGISTRATION=0 turns registration off, ERP_TRUST_PROXY=1 trusts the proxy; options win", () => {
    const settings = Result.getOrThrow(oauthWith({ ERP_DYNAMIC_REGISTRATION: "0", ERP_TRUST_PROXY: "1" }))
    expect(settings).toMatchObject({ dynamicRegistration: false, trustProxy: true, registrationsPerMinute: 10, publicUrl: undefined, externalIdp: undefined })
    expect(Result.getOrThrow(oauthWith({ ERP_DYNAMIC_REGISTRATION: "0" }, { dynamicRegistration: true })).dynamicRegistration).toBe(true)
    expect(Result.getOrThrow(oauthWith({})).dynamicRegistration).toBe(true)
  })

  it("OAuth: the identity provider takes its three ERP_JWT_* settings together, and refuses one without the others", () => {
    const idp = { ERP_JWT_ISSUER: "https://idp.example.com", ERP_JWT_AUDIENCE: "erp", ERP_JWT_JWKS_URL: "https://idp.example.com/jwks" }
    expect(Result.getOrThrow(oauthWith(idp)).externalIdp).toEqual({ issuer: idp.ERP_JWT_ISSUER, audience: "erp", jwksUrl: idp.ERP_JWT_JWKS_URL, algorithms: ["RS256", "ES256"], userClaim: "sub" })
    const partial = oauthWith({ ERP_JWT_ISSUER: idp.ERP_JWT_ISSUER })
    expect(Result.isFailure(partial) && partial.failure.message).toBe("ERP_JWT_ISSUER, ERP_JWT_AUDIENCE, ERP_JWT_JWKS_URL are set together: ERP_JWT_AUDIENCE and ERP_JWT_JWKS_URL are not")
  })

  it("a refused value is one line as the host's start-up failure", () => {
    const failure = oauthWith({ ERP_TRUST_PROXY: "maybe" })
    if (Result.isSuccess(failure)) throw new Error("expected a refusal")
    expect(explainStartupFailure(failure.failure).message).toBe('ERP_TRUST_PROXY must be true, false, 1, 0, yes or no; got "maybe"')
  })

  it("the store location: DATABASE_URL, else ERP_DATA_DIR, else .erp-data; flags win; blank is unset", () => {
    expect(resolveStoreLocation({}, providerOf({ DATABASE_URL: "postgres://db/erp" }))).toEqual({ kind: "postgres", url: "postgres://db/erp" })
    expect(resolveStoreLocation({ databaseUrl: "postgres://other/erp" }, providerOf({ DATABASE_URL: "postgres://db/erp" }))).toEqual({ kind: "postgres", url: "postgres://other/erp" })
    expect(resolveStoreLocation({}, providerOf({ DATABASE_URL: " ", ERP_DATA_DIR: "store" }))).toEqual({ kind: "pglite", dataDir: path.resolve("store") })
    expect(resolveStoreLocation({ dataDir: "flag" }, providerOf({ ERP_DATA_DIR: "store" }))).toEqual({ kind: "pglite", dataDir: path.resolve("flag") })
    expect(resolveStoreLocation({}, providerOf({}))).toEqual({ kind: "pglite", dataDir: path.resolve(".erp-data") })
  })
})

describe("the declarations", () => {
  it("declare each variable once, each with a type and a description, and every one readable when nothing is set", () => {
    const names = ALL_SETTINGS.map((entry) => entry.name)
    expect(new Set(names).size).toBe(names.length)
    for (const entry of ALL_SETTINGS) {
      expect(entry.name, entry.name).toMatch(/^(ERP_[A-Z0-9_]+|DATABASE_URL|PORT|HOST)$/)
      expect(entry.type, entry.name).not.toBe("")
      expect(entry.description, entry.name).toMatch(/^.{20,}\.$/)
      expect(Result.isSuccess(read(entry.config, {})), entry.name).toBe(true)
    }
  })

  it("show each default as the value read when the variable is unset", () => {
    for (const entry of ALL_SETTINGS) {
      const value = Result.getOrThrow(read(entry.config, {}))
      if (typeof value === "number" || typeof value === "boolean" || typeof value === "string") expect(entry.default, entry.name).toBe(`\`${String(value)}\``)
    }
  })

  it("name every variable the code names: no ERP_ variable is read or mentioned in packages/*/src without a declaration", () => {
    const declared = new Set(ALL_SETTINGS.map((entry) => entry.name))
    const undeclared = new Set<string>()
    for (const file of sourceFiles()) {
      for (const [name] of fs.readFileSync(file, "utf8").matchAll(/\bERP_[A-Z0-9_]*[A-Z0-9]\b/g)) {
        // ERP_JWT_* names the group.
        if (!declared.has(name) && name !== "ERP_JWT") undeclared.add(`${name} (${path.relative(".", file)})`)
      }
    }
    expect([...undeclared]).toEqual([])
  })

  it("are the table of docs/configuration.md", () => {
    const docs = fs.readFileSync(path.resolve("docs/configuration.md"), "utf8")
    const table = configurationTable()
    expect(docs.includes(table), `docs/configuration.md's table differs from the declarations in packages/core/src/config/variables.ts; its table is:\n${table}`).toBe(true)
    expect(table.split("\n").filter((line) => line.startsWith("| `")).length).toBe(ALL_SETTINGS.length)
  })
})

/** Every TypeScript module of the packages' sources. */
const sourceFiles = (): ReadonlyArray<string> =>
  fs.readdirSync("packages").flatMap((name) => {
    const source = path.join("packages", name, "src")
    if (!fs.existsSync(source)) return []
    return fs.readdirSync(source, { recursive: true, encoding: "utf8" })
      .filter((file) => file.endsWith(".ts") && !file.endsWith(".d.ts"))
      .map((file) => path.join(source, file))
  })

describe("where configuration is read", () => {
  it("no module of packages/*/src reads process.env: settings come through Effect's Config and the ConfigProvider in context", () => {
    const readers = sourceFiles().filter((file) => /\bprocess\s*(\.\s*env\b|\[\s*["'`]env["'`]\s*\])|\benv\s*\}\s*=\s*process\b/.test(fs.readFileSync(file, "utf8")))
    expect(readers).toEqual([])
  })
})
