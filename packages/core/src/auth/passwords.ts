import { Effect } from "effect"
import { randomBytes, scrypt, type ScryptOptions, timingSafeEqual } from "node:crypto"

/** scrypt parameters (OWASP minimum N=2^17 is heavy for 2 cores; 2^15 keeps sign-in near 50 ms). */
const PARAMETERS = { N: 32768, r: 8, p: 1, maxmem: 64 * 1024 * 1024 } as const
const KEY_LENGTH = 64

export const MIN_PASSWORD_LENGTH = 10

const derive = (password: string, salt: Buffer, options: ScryptOptions & { N: number }) =>
  Effect.async<Buffer, Error>((resume) => {
    scrypt(password.normalize("NFKC"), salt, KEY_LENGTH, options, (error, key) => resume(error ? Effect.fail(error) : Effect.succeed(key)))
  })

/** `scrypt$N$r$p$salt$key`, salt and key base64: the parameters travel with the hash so they can be raised later. */
export const hashPassword = (password: string) =>
  Effect.gen(function* () {
    const salt = randomBytes(16)
    const key = yield* derive(password, salt, PARAMETERS)
    return `scrypt$${PARAMETERS.N}$${PARAMETERS.r}$${PARAMETERS.p}$${salt.toString("base64")}$${key.toString("base64")}`
  }).pipe(Effect.orDie)

/** Constant-time check of a password against a stored hash; a malformed hash never matches. */
export const verifyPassword = (password: string, stored: string) =>
  Effect.gen(function* () {
    const [scheme, n, r, p, salt, key] = stored.split("$")
    if (scheme !== "scrypt" || !salt || !key) return false
    const expected = Buffer.from(key, "base64")
    const actual = yield* derive(password, Buffer.from(salt, "base64"), { N: Number(n), r: Number(r), p: Number(p), maxmem: PARAMETERS.maxmem })
    return actual.length === expected.length && timingSafeEqual(actual, expected)
  }).pipe(Effect.orElseSucceed(() => false))

/** Why a new password is refused, or undefined. */
export const passwordProblem = (password: string): string | undefined =>
  password.length < MIN_PASSWORD_LENGTH ? `must be at least ${MIN_PASSWORD_LENGTH} characters` : undefined
