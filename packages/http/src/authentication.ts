import { HttpApiMiddleware, HttpApiSecurity, OpenApi } from "@effect/platform"
import { Authenticator, CurrentPrincipal } from "@erp/core"
import { Effect, Layer, Redacted } from "effect"
import { toApiError, Unauthorized } from "./errors.js"

/** `Authorization` carries `Bearer <token>` or the bare token, so it is declared as a header credential. */
const authorizationHeader = HttpApiSecurity.apiKey({ in: "header", key: "Authorization" }).pipe(
  HttpApiSecurity.annotate(OpenApi.Description, "API key `sk_<publicId>_<secret>` (or OAuth access token) as `Bearer <token>` or the bare token.")
)

export class Authentication extends HttpApiMiddleware.Tag<Authentication>()("erp/http/Authentication", {
  failure: Unauthorized,
  provides: CurrentPrincipal,
  security: { authorization: authorizationHeader }
}) {}

export const layerAuthentication = Layer.effect(
  Authentication,
  Effect.map(Authenticator, (authenticator) =>
    Authentication.of({
      authorization: (credential) =>
        authenticator.authenticate(Redacted.value(credential)).pipe(
          Effect.mapError((error) => toApiError(error) as Unauthorized)
        )
    }))
)
