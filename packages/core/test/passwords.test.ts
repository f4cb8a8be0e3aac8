import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { hashPassword, needsRehash, verifyPassword } from "../src/auth/passwords.js"

const PASSWORD = "correct horse battery staple"

describe("password hashes", () => {
  it("verify the password they were made from, in its NFKC form, and no other", async () => {
    const hash = await Effect.runPromise(hashPassword("ﬁne password here"))
    expect(await Effect.runPromise(verifyPassword("fine password here", hash))).toBe(true)
    expect(await Effect.runPromise(verifyPassword("fine password herE", hash))).toBe(false)
    expect(await Effect.runPromise(needsRehash(hash))).toBe(false)
  })

  it("never match without a hash, with a malformed one, or with one whose cost would take more memory than allowed", async () => {
    const hash = await Effect.runPromise(hashPassword(PASSWORD))
    const [, , r, p, salt, key] = hash.split("$")
    for (const stored of [null, undefined, "", "plain", `bcrypt$10$${salt}$${key}`, `scrypt$32768$${r}$${p}$${salt}`, `scrypt$3$${r}$${p}$${salt}$${key}`, `scrypt$${2 ** 20}$${r}$${p}$${salt}$${key}`]) {
      expect({ stored, matches: await Effect.runPromise(verifyPassword(PASSWORD, stored)) }).toEqual({ stored, matches: false })
    }
    expect(await Effect.runPromise(needsRehash("plain"))).toBe(true)
    expect(await Effect.runPromise(needsRehash(`scrypt$32768$8$1$${salt}$${key}`))).toBe(true)
  })
})
