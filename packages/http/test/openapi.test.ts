import { OpenApi } from "effect/http-api"
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

  it("gives every operation an operationId, summary, description, error responses with the spec's error body, and an example", () => {
    const document = spec as unknown as {
      paths: Record<string, Record<string, Record<string, any>>>
      components: { schemas: Record<string, { properties?: Record<string, unknown>; required?: ReadonlyArray<string> }> }
    }
    const errorSchema = (ref: string | undefined) => document.components.schemas[String(ref).replace("#/components/schemas/", "")]
    const operations = Object.entries(document.paths).flatMap(([route, item]) => Object.entries(item).map(([method, operation]) => ({ route, method, operation })))
    expect(operations.length).toBeGreaterThan(100)
    const lacking: Array<string> = []
    for (const { route, method, operation } of operations) {
      const where = `${method.toUpperCase()} ${route}`
      if (!operation.operationId || !operation.summary || !operation.description) lacking.push(`${where}: operationId, summary or description`)
      const errors = Object.entries(operation.responses as Record<string, any>).filter(([status]) => /^[45]/.test(status))
      if (!errors.some(([status]) => status.startsWith("4")) && route !== "/health" && route !== "/versions") lacking.push(`${where}: no 4xx`)
      for (const [status, response] of errors) {
        const media = response.content?.["application/json"]
        const body = errorSchema(media?.schema?.$ref)
        if (!body || !["status_code", "message", "error"].every((name) => body.required?.includes(name))) lacking.push(`${where}: ${status} is not the error body`)
        if (media?.example?.status_code !== Number(status)) lacking.push(`${where}: ${status} has no example`)
      }
      if (method === "post" && operation.requestBody?.content?.["application/json"] && !operation.requestBody.content["application/json"].example) {
        lacking.push(`${where}: request body without example`)
      }
    }
    expect(lacking).toEqual([])
  })

  it("names where it is served and how to authenticate", () => {
    const document = spec as unknown as { servers?: Array<{ url: string }>; components: { securitySchemes: Record<string, { description?: string }> } }
    expect(document.servers?.[0]?.url).toBe("{base_url}")
    const scheme = Object.values(document.components.securitySchemes)[0]
    expect(scheme.description).toMatch(/API key/)
    expect(scheme.description).toMatch(/OAuth 2\.1/)
  })
})
