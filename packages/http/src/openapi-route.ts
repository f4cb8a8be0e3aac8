import { Effect } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import { type HttpApi, type HttpApiGroup, OpenApi } from "effect/http-api"

/**
 * `/openapi.json` of `api`, built on its first request rather than at start: the document of
 * every resource is slow to build, a cost most hosts' starts never need to pay.
 */
export const layerOpenApiRoute = <Id extends string, Groups extends HttpApiGroup.Constraint>(api: HttpApi.HttpApi<Id, Groups>) =>
  HttpRouter.use((router) => {
    let body: string | undefined
    const document = Effect.sync(() => {
      body ??= JSON.stringify(OpenApi.fromApi(api))
      return HttpServerResponse.text(body, { contentType: "application/json" })
    })
    return router.add("GET", "/openapi.json", document)
  })
