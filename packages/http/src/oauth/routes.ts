import { OAuthConfig } from "@erp/core"
import { Effect } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { publicPath } from "../public-url.js"
import { makeAuthorize } from "./authorize.js"
import { makeEndpoints } from "./endpoints.js"

/** The OAuth and discovery routes, beside the HttpApi routes on the same router. */
export const layerOAuthRoutes = HttpRouter.use((router) =>
  Effect.gen(function* () {
    const endpoints = yield* makeEndpoints
    const authorize = yield* makeAuthorize
    const config = yield* OAuthConfig
    /**
     * RFC 8414 and RFC 9728 put the documents of a base URL with a path at
     * `/.well-known/<document><path>`; only our own path is answered there. The route
     * `/.well-known/<document>/*` also takes `/.well-known/<document>` itself (with or
     * without a trailing slash): the document of the host's root.
     */
    const wellKnown = (document: string, handler: typeof endpoints.authorizationServerMetadata) =>
      Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
        const path = request.url.split("?")[0]
        const atRoot = path === `/.well-known/${document}` || path === `/.well-known/${document}/`
        const atOwnPath = publicPath(config) !== "" && path === `/.well-known/${document}${publicPath(config)}`
        return atRoot || atOwnPath ? handler : Effect.succeed(HttpServerResponse.empty({ status: 404 }))
      })
    yield* router.add("GET", "/.well-known/oauth-authorization-server/*", wellKnown("oauth-authorization-server", endpoints.authorizationServerMetadata))
    yield* router.add("GET", "/.well-known/oauth-protected-resource/*", wellKnown("oauth-protected-resource", endpoints.protectedResourceMetadata))
    yield* router.add("GET", "/oauth/jwks", endpoints.jwks)
    yield* router.add("GET", "/oauth/authorize", authorize.get)
    yield* router.add("POST", "/oauth/authorize", authorize.post)
    yield* router.add("POST", "/oauth/token", endpoints.token)
    yield* router.add("POST", "/oauth/revoke", endpoints.revoke)
    yield* router.add("GET", "/oauth/userinfo", endpoints.userinfo)
    yield* router.add("POST", "/oauth/userinfo", endpoints.userinfo)
    yield* router.add("POST", "/oauth/register", endpoints.register)
  })
)
