import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { OAuthConfig } from "@erp/core"
import { Effect } from "effect"
import { publicPath } from "../public-url.js"
import { makeAuthorize } from "./authorize.js"
import { makeEndpoints } from "./endpoints.js"

/** The OAuth and discovery routes, beside the HttpApi routes on the same router. */
export const layerOAuthRoutes = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function* () {
    const endpoints = yield* makeEndpoints
    const authorize = yield* makeAuthorize
    const config = yield* OAuthConfig
    /**
     * RFC 8414 and RFC 9728 put the documents of a base URL with a path at
     * `/.well-known/<document><path>`; only our own path is answered there.
     */
    const atOwnPath = (document: string, handler: typeof endpoints.authorizationServerMetadata) =>
      Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
        request.url.split("?")[0] === `/.well-known/${document}${publicPath(config)}` && publicPath(config) !== ""
          ? handler
          : Effect.succeed(HttpServerResponse.empty({ status: 404 })))
    yield* router.get("/.well-known/oauth-authorization-server", endpoints.authorizationServerMetadata)
    yield* router.get("/.well-known/oauth-authorization-server/*", atOwnPath("oauth-authorization-server", endpoints.authorizationServerMetadata))
    yield* router.get("/.well-known/oauth-protected-resource", endpoints.protectedResourceMetadata)
    yield* router.get("/.well-known/oauth-protected-resource/*", atOwnPath("oauth-protected-resource", endpoints.protectedResourceMetadata))
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
