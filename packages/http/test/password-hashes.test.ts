import { SqlClient } from "effect/sql"
import { PASSWORD_COST } from "@erp/core"
import { Effect } from "effect"
import { randomBytes, scryptSync } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestHost, type TestHost } from "../../../test/support/host.js"
import { createOAuthUser, FormSession, hiddenFieldsOf, type OAuthTestUser } from "../../../test/support/oauth.js"
import { storeKinds, testStore } from "../../../test/support/stores.js"

/** A hash as written at the cost before OWASP's (N=2^15, r=8, p=1), in the stored format. */
const olderHash = (password: string) => {
  const salt = randomBytes(16)
  const key = scryptSync(password.normalize("NFKC"), salt, 64, { N: 2 ** 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 })
  return `scrypt$32768$8$1$${salt.toString("base64")}$${key.toString("base64")}`
}

describe.each(storeKinds)("password hashes on %s", (kind) => {
  let host: TestHost
  let user: OAuthTestUser

  beforeAll(async () => {
    // The production cost, which other tests lower to save time.
    host = await startTestHost(testStore(kind), { passwordCost: PASSWORD_COST })
    const tenant = await host.createTenant("BR")
    user = await createOAuthUser(host, [{ tenantId: tenant.id, role: "admin" }])
  })
  afterAll(() => host?.close())

  const storedHash = async (userId: string) =>
    (await host.run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ password_hash: string }>`SELECT password_hash FROM users WHERE id = ${userId}::uuid`)))[0].password_hash
  const storeHash = (userId: string, hash: string) =>
    host.run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql`UPDATE users SET password_hash = ${hash} WHERE id = ${userId}::uuid`))
  const signIn = async (email: string, password: string) => {
    const session = new FormSession()
    const form = await session.get(`${host.url}/panel/sign-in`)
    return (await session.post(`${host.url}/panel/sign-in`, { ...hiddenFieldsOf(form.text), email, password })).status
  }

  it("hashes new passwords with scrypt at OWASP's cost (N=2^15, r=8, p=3: its 32 MiB option), a 64-byte key and a 16-byte salt", async () => {
    const [scheme, n, r, p, salt, key] = (await storedHash(user.id)).split("$")
    expect({ scheme, n, r, p }).toEqual({ scheme: "scrypt", n: "32768", r: "8", p: "3" })
    expect(Buffer.from(salt, "base64")).toHaveLength(16)
    expect(Buffer.from(key, "base64")).toHaveLength(64)
  })

  it("signs a user with an older hash in, and stores the hash again at today's cost; a wrong password changes nothing", async () => {
    const older = olderHash(user.password)
    await storeHash(user.id, older)
    expect(await signIn(user.email, "not the password at all")).toBe(401)
    expect(await storedHash(user.id)).toBe(older)
    expect(await signIn(user.email, user.password)).toBe(303)
    const upgraded = await storedHash(user.id)
    expect(upgraded).toMatch(/^scrypt\$32768\$8\$3\$/)
    expect(await signIn(user.email, user.password)).toBe(303)
    // Already at today's cost: not written again.
    expect(await storedHash(user.id)).toBe(upgraded)
    expect(await signIn(user.email, "not the password at all")).toBe(401)
  })
})
