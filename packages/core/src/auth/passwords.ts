import { Context, Effect, Semaphore } from "effect"
import { randomBytes, scrypt, timingSafeEqual } from "node:crypto"

export interface ScryptCost {
  readonly N: number
  readonly r: number
  readonly p: number
}

/**
 * scrypt at one of the costs OWASP's Password Storage Cheat Sheet lists as equivalent minimums
 * (N=2^17 r=8 p=1, N=2^16 p=2, N=2^15 p=3, …): N=2^15, r=8, p=3 takes 32 MiB per hash where
 * N=2^17 takes 128 MiB, and less time. Node runs scrypt on the libuv threadpool, so hashes at
 * once multiply that memory.
 */
export const PASSWORD_COST: ScryptCost = { N: 2 ** 15, r: 8, p: 3 }

/**
 * The cost new hashes are made at: `PASSWORD_COST` unless a test host lowers it, for suites
 * that make users by the hundred. Nothing else provides it.
 */
export const PasswordCost = Context.Reference<ScryptCost>("erp/core/PasswordCost", { defaultValue: () => PASSWORD_COST })

const KEY_LENGTH = 64
const SALT_LENGTH = 16

/** The most memory a stored hash's cost may ask for: a hash beyond it never matches, rather than taking the host's memory. */
const MAX_MEMORY = 256 * 1024 * 1024

export const MIN_PASSWORD_LENGTH = 10

/** OpenSSL's own account of scrypt's memory (its `maxmem` check), with room to spare. */
const memoryOf = (cost: ScryptCost) => 128 * cost.r * (cost.N + cost.p + 2) + 1024 * 1024

/**
 * Hashes at once: half the threadpool, so sign-ins never take every thread that file and DNS work
 * need, and their memory stays bounded whatever the number of sign-ins waiting.
 */
const derivations = Semaphore.makeUnsafe(2)

/** A started hash is uninterruptible: it runs to its end in the threadpool anyway, and holds its permit until then. */
const derive = (password: string, salt: Buffer, cost: ScryptCost, keyLength: number) =>
  derivations.withPermits(1)(
    Effect.uninterruptible(Effect.callback<Buffer, Error>((resume) => {
      try {
        scrypt(password.normalize("NFKC"), salt, keyLength, { ...cost, maxmem: memoryOf(cost) }, (error, key) => resume(error ? Effect.fail(error) : Effect.succeed(key)))
      } catch (error) {
        // Parameters scrypt refuses outright (a stored hash of ours never has them).
        resume(Effect.fail(error instanceof Error ? error : new Error(String(error))))
      }
    }))
  )

interface StoredHash {
  readonly cost: ScryptCost
  readonly salt: Buffer
  readonly key: Buffer
}

/** `scrypt$N$r$p$salt$key` (salt and key base64), or undefined for anything else. */
const parseHash = (stored: string): StoredHash | undefined => {
  const [scheme, n, r, p, salt, key, ...rest] = stored.split("$")
  if (scheme !== "scrypt" || !salt || !key || rest.length > 0) return undefined
  const cost = { N: Number(n), r: Number(r), p: Number(p) }
  const valid = [cost.N, cost.r, cost.p].every((value) => Number.isSafeInteger(value) && value > 0) && cost.N > 1 && (cost.N & (cost.N - 1)) === 0
  if (!valid || memoryOf(cost) > MAX_MEMORY) return undefined
  return { cost, salt: Buffer.from(salt, "base64"), key: Buffer.from(key, "base64") }
}

const format = (cost: ScryptCost, salt: Buffer, key: Buffer) =>
  `scrypt$${cost.N}$${cost.r}$${cost.p}$${salt.toString("base64")}$${key.toString("base64")}`

/** `scrypt$N$r$p$salt$key`, salt and key base64: the cost travels with the hash, so it can be raised and old hashes still verify. */
export const hashPassword = (password: string) =>
  Effect.gen(function* () {
    const cost = yield* PasswordCost
    const salt = randomBytes(SALT_LENGTH)
    return format(cost, salt, yield* derive(password, salt, cost, KEY_LENGTH))
  }).pipe(Effect.orDie)

/** What a check of a user that does not exist compares against: the same work, so timing does not tell who has an account. */
const noUser = (cost: ScryptCost) => format(cost, Buffer.alloc(SALT_LENGTH), Buffer.alloc(KEY_LENGTH))

/**
 * Constant-time check of a password against a stored hash, at the hash's own cost; a malformed
 * hash never matches. Without a hash (no such user, or no password set) the same work is done
 * and the answer is false.
 */
export const verifyPassword = (password: string, stored: string | null | undefined) =>
  Effect.gen(function* () {
    const hash = parseHash(stored ?? noUser(yield* PasswordCost))
    if (hash === undefined) return false
    const actual = yield* derive(password, hash.salt, hash.cost, hash.key.length)
    return stored !== null && stored !== undefined && actual.length === hash.key.length && timingSafeEqual(actual, hash.key)
  }).pipe(Effect.orElseSucceed(() => false))

/** Whether a stored hash was made at another cost than today's (a sign-in with its password hashes it again). */
export const needsRehash = (stored: string) =>
  Effect.map(PasswordCost, (cost) => {
    const hash = parseHash(stored)
    return hash === undefined || hash.cost.N !== cost.N || hash.cost.r !== cost.r || hash.cost.p !== cost.p || hash.key.length !== KEY_LENGTH
  })

/** Why a new password is refused, or undefined. */
export const passwordProblem = (password: string): string | undefined =>
  password.length < MIN_PASSWORD_LENGTH ? `must be at least ${MIN_PASSWORD_LENGTH} characters` : undefined
