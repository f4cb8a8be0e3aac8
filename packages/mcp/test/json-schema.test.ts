import { inputJsonSchema } from "@erp/mcp"
import { Schema, SchemaTransformation } from "effect"
import { describe, expect, it } from "vitest"

describe("tool input schemas", () => {
  it("puts an identified struct at the root, keeping only the definitions still referenced", () => {
    const Address = Schema.Struct({ city: Schema.String }).annotate({ identifier: "Address" })
    const Person = Schema.Struct({ name: Schema.String, home: Schema.optionalKey(Address) }).annotate({ identifier: "Person" })
    const schema = inputJsonSchema(Person)
    expect(schema).toMatchObject({ type: "object", required: ["name"], additionalProperties: false })
    expect(schema.properties.home).toEqual({ $ref: "#/$defs/Address" })
    expect(Object.keys(schema.$defs as object)).toEqual(["Address"])
  })

  it("describes what the caller sends (the encoded side), not the decoded value", () => {
    const Upper = Schema.String.pipe(Schema.decodeTo(Schema.String, SchemaTransformation.transform({ decode: (text) => text.toUpperCase(), encode: (text) => text })))
    expect(inputJsonSchema(Schema.Struct({ code: Upper })).properties.code).toMatchObject({ type: "string" })
  })

  it("refuses a schema that is not an object, since MCP requires one at the root", () => {
    expect(() => inputJsonSchema(Schema.String)).toThrow(/object schema/)
    expect(() => inputJsonSchema(Schema.Union([Schema.Struct({ a: Schema.String }), Schema.Struct({ b: Schema.String })]))).toThrow(/object schema/)
  })
})
