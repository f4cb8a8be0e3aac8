import * as SqlClient from "effect/sql/SqlClient"
import { ConfigProvider, Effect, Exit, ManagedRuntime } from "effect"
import { importJWK, type JWK, jwtVerify, SignJWT } from "jose"
import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { storeKinds, testDataDir, testStore } from "../../../test/support/stores.js"
import {
  explainStartupFailure,
  layerCore,
  layerStore,
  makeSecretBox,
  parseSecretKey,
  resolveSecretKeys,
  SEALED_COLUMNS,
  sealContext,
  SECRET_KEY_FILE,
  type SecretKey,
  secretKeyOf,
  SigningKeys,
  StartupError
} from "../src/index.js"

const keyText = () => randomBytes(32).toString("base64")
const keyOf = (text: string) => parseSecretKey(text) as SecretKey

describe("SecretBox", () => {
  const a = secretKeyOf(randomBytes(32))
  const b = secretKeyOf(randomBytes(32))

  it("opens what it sealed, and each seal differs (a fresh IV)", async () => {
    const box = makeSecretBox({ current: a, source: "ERP_SECRET_KEY" })
    const one = box.seal("private key", "t.c:1")
    const two = box.seal("private key", "t.c:1")
    expect(one).not.toBe(two)
    expect(one).toMatch(new RegExp(`^erpsb1\\.${a.id}\\.`))
    expect(one).not.toContain("private")
    expect(await Effect.runPromise(box.open(one, "t.c:1"))).toBe("private key")
  })

  it("does not open a value moved to another row or column, nor an altered one", async () => {
    const box = makeSecretBox({ current: a, source: "ERP_SECRET_KEY" })
    const sealed = box.seal("private key", "t.c:1")
    expect(Exit.isFailure(await Effect.runPromiseExit(box.open(sealed, "t.c:2")))).toBe(true)
    const parts = sealed.split(".")
    parts[3] = Buffer.from("another secret").toString("base64url")
    expect(Exit.isFailure(await Effect.runPromiseExit(box.open(parts.join("."), "t.c:1")))).toBe(true)
  })

  it("names the keys when a value was sealed with a key it does not hold", async () => {
    const sealed = makeSecretBox({ current: a, source: "ERP_SECRET_KEY" }).seal("x", "c")
    const failure = await Effect.runPromise(Effect.flip(makeSecretBox({ current: b, source: "ERP_SECRET_KEY" }).open(sealed, "c")))
    expect(failure.message).toBe(`sealed with key ${a.id}, but ERP_SECRET_KEY is key ${b.id}`)
  })

  it("opens values of the previous key during a rotation and says they need sealing again", async () => {
    const old = makeSecretBox({ current: a, source: "ERP_SECRET_KEY" }).seal("x", "c")
    const rotating = makeSecretBox({ current: b, previous: a, source: "ERP_SECRET_KEY" })
    expect(await Effect.runPromise(rotating.open(old, "c"))).toBe("x")
    expect(rotating.isCurrent(old)).toBe(false)
    expect(rotating.isCurrent(rotating.seal("x", "c"))).toBe(true)
  })

  it("reads a key as 64 hex digits or base64 of 32 bytes, and says what is wrong with anything else", () => {
    const bytes = randomBytes(32)
    expect(keyOf(bytes.toString("hex")).id).toBe(secretKeyOf(bytes).id)
    expect(keyOf(bytes.toString("base64")).id).toBe(secretKeyOf(bytes).id)
    expect(keyOf(bytes.toString("base64url")).id).toBe(secretKeyOf(bytes).id)
    expect(parseSecretKey(randomBytes(16).toString("base64"))).toMatch(/decodes to 16 bytes/)
    expect(parseSecretKey("not a key!")).toMatch(/32 bytes/)
  })
})

describe("where the secret key comes from", () => {
  /** Resolves the keys with exactly these variables set (a ConfigProvider of its own, not the environment). */
  const resolveWith = (location: Parameters<typeof resolveSecretKeys>[0], variables: Record<string, string>) =>
    resolveSecretKeys(location).pipe(Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnvRecord(variables)))

  it("requires ERP_SECRET_KEY with PostgreSQL, in one line that says how to make one", async () => {
    const failure = await Effect.runPromise(Effect.flip(resolveWith({ kind: "postgres", url: "postgres://x@127.0.0.1/x" }, {})))
    expect(failure).toBeInstanceOf(StartupError)
    expect(failure.message).toMatch(/^ERP_SECRET_KEY is not set: it is required with PostgreSQL.*openssl rand -base64 32/)
    expect(failure.message).not.toContain("\n")
  })

  it("refuses a malformed ERP_SECRET_KEY naming it", async () => {
    const failure = await Effect.runPromise(Effect.flip(resolveWith({ kind: "pglite" }, { ERP_SECRET_KEY: "short" })))
    expect(failure.message).toMatch(/^ERP_SECRET_KEY must be 32 bytes/)
  })

  it("generates a key file (mode 0600) beside the embedded store's data and reads it back next time", async () => {
    const dir = path.join(testDataDir(), "fresh")
    try {
      const first = await Effect.runPromise(resolveWith({ kind: "pglite", dataDir: dir }, {}))
      const file = path.join(dir, SECRET_KEY_FILE)
      expect(fs.statSync(file).mode & 0o777).toBe(0o600)
      expect(first.source).toBe(`the key file ${file}`)
      const second = await Effect.runPromise(resolveWith({ kind: "pglite", dataDir: dir }, {}))
      expect(second.current.id).toBe(first.current.id)
      // ERP_SECRET_KEY, when set, wins over the file.
      const fromEnv = await Effect.runPromise(resolveWith({ kind: "pglite", dataDir: dir }, { ERP_SECRET_KEY: keyText() }))
      expect(fromEnv.current.id).not.toBe(first.current.id)
      // A key an embedding app gives wins over ERP_SECRET_KEY.
      const given = keyText()
      const fromOption = await Effect.runPromise(resolveSecretKeys({ kind: "pglite", dataDir: dir }, { secretKey: given }).pipe(
        Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnvRecord({ ERP_SECRET_KEY: keyText() }))
      ))
      expect(fromOption.current.id).toBe(keyOf(given).id)
    } finally {
      fs.rmSync(path.dirname(dir), { recursive: true, force: true })
    }
  })
})

/** Runs `use` with ERP_SECRET_KEY (and _PREVIOUS) set as given, then puts them back. */
const withKeys = async <A>(keys: { current: string; previous?: string }, use: () => Promise<A>): Promise<A> => {
  const saved = { current: process.env.ERP_SECRET_KEY, previous: process.env.ERP_SECRET_KEY_PREVIOUS }
  process.env.ERP_SECRET_KEY = keys.current
  if (keys.previous) process.env.ERP_SECRET_KEY_PREVIOUS = keys.previous
  else delete process.env.ERP_SECRET_KEY_PREVIOUS
  try {
    return await use()
  } finally {
    if (saved.current === undefined) delete process.env.ERP_SECRET_KEY
    else process.env.ERP_SECRET_KEY = saved.current
    if (saved.previous === undefined) delete process.env.ERP_SECRET_KEY_PREVIOUS
    else process.env.ERP_SECRET_KEY_PREVIOUS = saved.previous
  }
}

interface StoredSecrets {
  readonly keys: ReadonlyArray<{ kid: string; private_key_sealed: string }>
  readonly cursor: string
}

const readStored = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const keys = yield* sql<{ kid: string; private_key_sealed: string }>`SELECT kid, private_key_sealed FROM oauth_signing_keys ORDER BY kid`
  const [{ value }] = yield* sql<{ value: string }>`SELECT value FROM erp_settings WHERE key = 'cursor_secret'`
  return { keys, cursor: value } satisfies StoredSecrets
})

/** Whether the host's current signing key signs what the given public key verifies: the same key pair. */
const signsFor = (publicJwk: JWK) =>
  Effect.flatMap(SigningKeys, (keys) => Effect.flatMap(keys.current, (current) =>
    Effect.promise(async () => {
      const token = await new SignJWT({}).setProtectedHeader({ alg: "ES256" }).sign(current.privateKey)
      return jwtVerify(token, await importJWK(publicJwk, "ES256")).then(() => true, () => false)
    })))

const currentPublicKey = Effect.flatMap(SigningKeys, (keys) => Effect.map(keys.current, (current) => current.publicJwk))

/** Opens the core on `dir` with the keys of the environment, runs `effect`, closes. */
const withCore = async <A>(dir: string, effect: Effect.Effect<A, unknown, SigningKeys | SqlClient.SqlClient>) => {
  const runtime = ManagedRuntime.make(layerCore({ kind: "pglite", dataDir: dir }))
  try {
    return await runtime.runPromise(effect)
  } finally {
    await runtime.dispose()
  }
}

describe.each(storeKinds)("stored secrets on %s", (kind) => {
  it("keeps no signing private key and no cursor key in clear (read with SQL)", async () => {
    const runtime = ManagedRuntime.make(layerCore(testStore(kind)))
    try {
      const publicJwk = await runtime.runPromise(currentPublicKey)
      expect(await runtime.runPromise(signsFor(publicJwk))).toBe(true)
      const stored = await runtime.runPromise(readStored)
      expect(stored.keys.length).toBeGreaterThan(0)
      for (const row of stored.keys) {
        expect(row.private_key_sealed).toMatch(/^erpsb1\.[0-9a-f]{16}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/)
        // A clear JWK would be JSON with the private scalar "d".
        expect(row.private_key_sealed).not.toContain('"d"')
        expect(row.private_key_sealed).not.toContain("{")
      }
      expect(stored.cursor).toMatch(/^erpsb1\./)
    } finally {
      await runtime.dispose()
    }
  })
})

describe("the secretKey option of an embedding app", () => {
  it("seals with the key given in the options rather than ERP_SECRET_KEY, and writes no key file", async () => {
    const dir = testDataDir()
    const given = keyText()
    const runtime = ManagedRuntime.make(layerCore({ kind: "pglite", dataDir: dir }, { secretKey: given }))
    try {
      const stored = await runtime.runPromise(readStored)
      for (const value of [...stored.keys.map((row) => row.private_key_sealed), stored.cursor]) expect(value.split(".")[1]).toBe(keyOf(given).id)
      expect(fs.existsSync(path.join(dir, SECRET_KEY_FILE))).toBe(false)
    } finally {
      await runtime.dispose()
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe("sealing a store's secrets on start", () => {
  let dir: string | undefined
  afterEach(() => {
    if (dir) fs.rmSync(dir, { recursive: true, force: true })
    dir = undefined
  })

  it("seals rows a store kept in clear before sealing, and still signs with the same key", async () => {
    dir = testDataDir()
    const key = keyText()
    const before = await withKeys({ current: key }, () => withCore(dir!, Effect.all({ publicJwk: currentPublicKey, stored: readStored })))
    const [row] = before.stored.keys
    const clearJwk = await Effect.runPromise(makeSecretBox({ current: keyOf(key), source: "test" }).open(row.private_key_sealed, sealContext(SEALED_COLUMNS.signingKeys, row.kid)))
    expect(JSON.parse(clearJwk)).toMatchObject({ kty: "EC", d: expect.any(String) })
    // As a store from before migration 0008 kept them: the private JWK as clear JSON, the cursor key as clear base64.
    const clearCursor = randomBytes(32).toString("base64")
    const store = ManagedRuntime.make(layerStore({ kind: "pglite", dataDir: dir }))
    await store.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) => Effect.all([
      sql`UPDATE oauth_signing_keys SET private_key_sealed = ${clearJwk} WHERE kid = ${row.kid}`,
      sql`UPDATE erp_settings SET value = ${clearCursor} WHERE key = 'cursor_secret'`
    ])))
    await store.dispose()

    const after = await withKeys({ current: key }, () => withCore(dir!, Effect.all({ stored: readStored, signs: signsFor(before.publicJwk) })))
    expect(after.stored.keys.map((item) => item.private_key_sealed.startsWith("erpsb1.")).every(Boolean)).toBe(true)
    expect(after.stored.cursor).toMatch(/^erpsb1\./)
    expect(JSON.stringify(after.stored)).not.toContain(JSON.parse(clearJwk).d)
    expect(JSON.stringify(after.stored)).not.toContain(clearCursor)
    expect(after.signs).toBe(true)
  })

  it("refuses to start with the wrong key in one line naming both keys; rotates with ERP_SECRET_KEY_PREVIOUS", async () => {
    dir = testDataDir()
    const [first, second] = [keyText(), keyText()]
    const [firstId, secondId] = [keyOf(first).id, keyOf(second).id]
    const original = await withKeys({ current: first }, () => withCore(dir!, currentPublicKey))
    const signingKey = signsFor(original)

    const wrong = await withKeys({ current: second }, () => withCore(dir!, Effect.void).then(() => undefined, (error: unknown) => error))
    const explained = explainStartupFailure(wrong)
    expect(explained.message).toBe(
      `cannot open the stored secrets: sealed with key ${firstId}, but ERP_SECRET_KEY is key ${secondId}; ` +
        "set ERP_SECRET_KEY to the key they were sealed with; to change keys, set the new one as ERP_SECRET_KEY and the old one as ERP_SECRET_KEY_PREVIOUS"
    )

    const rotated = await withKeys({ current: second, previous: first }, () => withCore(dir!, Effect.all({ stored: readStored, jwk: signingKey })))
    expect(rotated.jwk).toBe(true)
    for (const value of [...rotated.stored.keys.map((row) => row.private_key_sealed), rotated.stored.cursor]) expect(value.split(".")[1]).toBe(secondId)
    // Once sealed again, the new key alone opens the store, and the old one no longer does.
    expect(await withKeys({ current: second }, () => withCore(dir!, signingKey))).toBe(true)
    const old = await withKeys({ current: first }, () => withCore(dir!, Effect.void).then(() => undefined, (error: unknown) => error))
    expect(explainStartupFailure(old).message).toContain(`sealed with key ${secondId}, but ERP_SECRET_KEY is key ${firstId}`)
  })
})

