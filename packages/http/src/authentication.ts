import { HttpApiMiddleware, HttpApiSecurity, HttpServerRequest, OpenApi } from "@effect/platform"
import { Authenticator, CurrentPrincipal, OAuthConfig } from "@erp/core"
import { Effect, Layer, Redacted, Schema } from "effect"
import { BadRequest, toApiError, Unauthorized } from "./errors.js"
import { publicUrl } from "./public-url.js"
import { noteTenant } from "./server-errors.js"

/** `Authorization` carries `Bearer <token>` or the bare token, so it is declared as a header credential. */
const authorizationHeader = HttpApiSecurity.apiKey({ in: "header", key: "Authorization" }).pipe(
  HttpApiSecurity.annotate(OpenApi.Description, "API key `sk_<publicId>_<secret>` (or OAuth access token) as `Bearer <token>` or the bare token.")
)

export class Authentication extends HttpApiMiddleware.Tag<Authentication>()("erp/http/Authentication", {
  failure: Schema.Union(Unauthorized, BadRequest),
  provides: CurrentPrincipal,
  security: { authorization: authorizationHeader }
}) {}

export const layerAuthentication = Layer.effect(
  Authentication,
  Effect.map(Effect.all([Authenticator, OAuthConfig]), ([authenticator, config]) =>
    Authentication.of({
      authorization: (credential) =>
        Effect.gen(function* () {
          const request = yield* HttpServerRequest.HttpServerRequest
          const tenantId = request.headers["x-tenant-id"]
          const principal = yield* authenticator.authenticate(Redacted.value(credential), {
            issuer: publicUrl(config, request),
            ...(tenantId ? { tenantId } : {})
          })
          yield* noteTenant(principal.tenantId)
          return principal
        }).pipe(Effect.mapError((error) => toApiError(error) as Unauthorized | BadRequest))
    }))
)
