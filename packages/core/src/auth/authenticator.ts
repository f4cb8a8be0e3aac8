import { Context, Effect, Layer } from "effect"
import { Unauthenticated } from "../errors.js"
import { Tenancy } from "../tenancy/tenancy.js"
import type { Principal } from "./principal.js"
import { tokenFromAuthorization } from "./tokens.js"

/** Turns the `Authorization` header of any transport into a principal; each token kind by its prefix. */
export class Authenticator extends Context.Tag("erp/core/Authenticator")<Authenticator, {
  readonly authenticate: (authorization: string | undefined) => Effect.Effect<Principal, Unauthenticated>
}>() {
  static readonly layer = Layer.effect(
    Authenticator,
    Effect.gen(function* () {
      const tenancy = yield* Tenancy
      return Authenticator.of({
        authenticate: (authorization) => {
          const token = tokenFromAuthorization(authorization)
          if (!token) {
            return Effect.fail(
              new Unauthenticated({ message: "Authentication required: send Authorization: Bearer <token>", code: "MISSING_CREDENTIALS" })
            )
          }
          if (token.startsWith("sk_")) return tenancy.authenticateApiKey(token)
          return Effect.fail(new Unauthenticated({ message: "The token is not a recognised credential", code: "INVALID_CREDENTIALS" }))
        }
      })
    })
  )
}
