import { OpenApi } from "@effect/platform"
import { publicResources, resources } from "@erp/core"
import { describe, expect, it } from "vitest"
import { Api } from "../src/api.js"

/** The OpenAPI document is a reviewed artifact: a change to the contract shows up as a diff of openapi.json. */
describe("OpenAPI", () => {
  const spec = OpenApi.fromApi(Api)

  it("matches the committed document", async () => {
    await expect(JSON.stringify(spec, null, 2) + "\n").toMatchFileSnapshot("../openapi.json")
  })

  it("documents the five operations of every declared resource with the error bodies", () => {
    for (const resource of publicResources(resources)) {
      const collection = spec.paths[`/${resource.name}`]
      const item = spec.paths[`/${resource.name}/{id}`]
      expect(Object.keys(collection ?? {}).sort()).toEqual(["get", "post"])
      expect(Object.keys(item ?? {}).sort()).toEqual(["delete", "get", "patch"])
      expect(Object.keys(collection!.post!.responses)).toEqual(expect.arrayContaining(["201", "400", "401", "403", "422"]))
      expect(Object.keys(item!.get!.responses)).toEqual(expect.arrayContaining(["200", "400", "401", "403", "404"]))
    }
  })
})
