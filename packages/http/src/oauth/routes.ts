import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { makeAuthorize } from "./authorize.js"
import { makeEndpoints } from "./endpoints.js"

/** The OAuth and discovery routes, beside the HttpApi routes on the same router. */
export const layerOAuthRoutes = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function* () {
    const endpoints = yield* makeEndpoints
    const authorize = yield* makeAuthorize
    yield* router.get("/.well-known/oauth-authorization-server", endpoints.authorizationServerMetadata)
    yield* router.get("/.well-known/oauth-protected-resource", endpoints.protectedResourceMetadata)
    yield* router.get("/oauth/jwks", endpoints.jwks)
    yield* router.get("/oauth/authorize", authorize.get)
    yield* router.post("/oauth/authorize", authorize.post)
    yield* router.post("/oauth/token", endpoints.token)
    yield* router.post("/oauth/revoke", endpoints.revoke)
    yield* router.get("/oauth/userinfo", endpoints.userinfo)
    yield* router.post("/oauth/userinfo", endpoints.userinfo)
    yield* router.post("/oauth/register", endpoints.register)
  })
)
