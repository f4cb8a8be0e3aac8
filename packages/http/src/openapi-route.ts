import { HttpApi, HttpApiBuilder, HttpServerResponse, OpenApi } from "@effect/platform"
import { Effect } from "effect"

/**
 * `/openapi.json`, built on its first request rather than at start: the document of every
 * resource takes about 0.1 s to build, a cost most hosts' starts never need to pay.
 */
export const layerOpenApiRoute = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function* () {
    const { api } = yield* HttpApi.Api
    let body: string | undefined
    const document = Effect.sync(() => {
      body ??= JSON.stringify(OpenApi.fromApi(api))
      return HttpServerResponse.text(body, { contentType: "application/json" })
    })
    yield* router.get("/openapi.json", document)
  })
)
