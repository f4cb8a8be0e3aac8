import { Effect, Option } from "effect"
import { hashPassword, needsRehash, passwordProblem, verifyPassword } from "../auth/passwords.js"
import { BASE62, hashSecret, randomText } from "../auth/tokens.js"
import { invalid } from "../errors.js"
import type { Tenancy } from "../tenancy/tenancy.js"
import type { OAuthRepository } from "./repository.js"
import type { OAuth } from "./service.js"
import type { OAuthSettings } from "./settings.js"
import { newToken, TOKEN_PREFIX } from "./tokens.js"

/** Users' passwords and the sign-in sessions of the panel and the authorization page. */
export const makeSignIn = (repo: OAuthRepository["Service"], tenancy: Tenancy["Service"], lifetimes: OAuthSettings["lifetimes"]) => {
  const setPassword: OAuth["Service"]["setPassword"] = (reference, password) =>
    Effect.gen(function* () {
      const problem = passwordProblem(password)
      if (problem) return yield* Effect.fail(invalid(`The password ${problem}`, "WEAK_PASSWORD"))
      const user = yield* tenancy.getUser(reference)
      const hash = yield* hashPassword(password)
      yield* repo.setPasswordHash(user.id, hash)
      // A new password ends every sign-in session of the user.
      yield* repo.deleteUserSessions(user.id)
      return user
    })

  const signIn: OAuth["Service"]["signIn"] = (email, password) =>
    Effect.gen(function* () {
      const found = yield* repo.findPasswordHash(email.trim())
      const stored = Option.isSome(found) ? found.value.password_hash : undefined
      // Unknown users cost a hash too, so the answer time does not reveal who has an account.
      const ok = yield* verifyPassword(password, stored)
      if (Option.isNone(found) || !stored || !ok) return Option.none()
      // A hash of an older cost is made again at today's while the password is at hand; a password
      // changed meanwhile keeps its own (the update matches the hash it replaces).
      if (yield* needsRehash(stored)) {
        const hash = yield* hashPassword(password)
        yield* repo.replacePasswordHash(found.value.id, stored, hash)
      }
      return Option.some(yield* tenancy.getUser(found.value.id).pipe(Effect.orDie))
    })

  const createSession: OAuth["Service"]["createSession"] = (userId) =>
    Effect.gen(function* () {
      const token = newToken(TOKEN_PREFIX.session)
      const csrf = randomText(32, BASE62)
      yield* repo.insertSession({ tokenHash: hashSecret(token), userId, csrf, lifetimeSeconds: lifetimes.sessionSeconds })
      yield* repo.deleteExpiredSessions
      return { token, csrf, maxAgeSeconds: lifetimes.sessionSeconds }
    })

  return {
    setPassword,
    signIn,
    createSession,
    findSession: (token: string) => repo.findSession(hashSecret(token)),
    endSession: (token: string) => repo.deleteSession(hashSecret(token))
  }
}
