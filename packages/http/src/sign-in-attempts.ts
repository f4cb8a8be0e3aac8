import type { HttpServerResponse } from "effect/http"
import { type OAuth, type RateLimiter, SIGN_IN_ACCOUNT_LIMIT, type User } from "@erp/core"
import { Effect, Option, Result } from "effect"
import { tooManyRequests } from "./rate-limit.js"

/** One counter per account named, whatever its case or surrounding spaces (the store matches emails so). */
const accountKey = (email: string) => `sign-in-account:${email.trim().toLowerCase()}`

/**
 * A password check of the panel or the authorization page, limited per account named (beside
 * their limits per address): the attempt counts whether the account exists or not, so the
 * 429 tells nothing of who has one. The right password starts the account's count over.
 * Failure: the 429 to answer, nothing checked; success: the user, or none for a wrong email or password.
 */
export const checkPassword = (
  services: { readonly limiter: RateLimiter["Service"]; readonly oauth: OAuth["Service"] },
  email: string,
  password: string
): Effect.Effect<Result.Result<Option.Option<User>, HttpServerResponse.HttpServerResponse>> =>
  Effect.gen(function* () {
    const key = accountKey(email)
    const decision = yield* services.limiter.hit(key, SIGN_IN_ACCOUNT_LIMIT)
    if (!decision.allowed) return Result.fail(tooManyRequests(decision, "Too many sign-in attempts for this account"))
    const user = yield* services.oauth.signIn(email, password)
    if (Option.isSome(user)) yield* services.limiter.reset(key)
    return Result.succeed(user)
  })
