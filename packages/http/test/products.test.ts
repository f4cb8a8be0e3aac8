import * as fs from "node:fs"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestHost, type TestHost, type TestTenant } from "../../../test/support/host.js"
import { resourceClient } from "../../../test/support/resource-client.js"
import { storeKinds, testStore } from "../../../test/support/stores.js"

interface UnitRow {
  readonly id: string
  readonly code: string
  readonly symbol: string | null
  readonly fiscal_codes: Record<string, string>
  readonly country_codes: ReadonlyArray<string>
}

const units = (JSON.parse(
  fs.readFileSync(new URL("../../core/src/catalogs/data/units-of-measurement.json", import.meta.url), "utf8")
) as { records: Array<UnitRow> }).records
const unit = (code: string): UnitRow => {
  const found = units.find((row) => row.code === code)
  if (!found) throw new Error(`unit ${code} is not in the catalog`)
  return found
}

const KGM = unit("KGM") // kilogram, universal, br_nfe fiscal code KG
const LTR = unit("LTR") // litre, universal
const LBR = unit("LBR") // pound, US only

const DECIMAL6 = /^-?\d+\.\d{6}$/
const ISO_DATETIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Every field a product takes, each with a value that shows its normalisation. */
const fullProduct = () => ({
  name: "  Espresso beans 1 kg  ",
  reference_code: `COF-${randomUUID().slice(0, 8)}`,
  description: "Whole roasted beans",
  tags: ["coffee", "premium"],
  type: "goods",
  sale_price: "10.5",
  image_url: "https://cdn.example.com/espresso.png",
  is_blocked: true,
  metadata: { origin_farm: "Fazenda Aurora", score: 86, nested: { lot: "A1" } },
  unit_of_measurement_id: KGM.id,
  br_data: {
    ncm_code: "0901.21.00",
    cest_code: "17.099.00",
    origin: "0",
    extipi: "01",
    ibs_cbs_cst: "000",
    ibs_cbs_classification: "000001",
    ibs_cbs_operation_indicator_code: "100101",
    ibs_cbs_is_personal_use: false
  },
  us_data: {
    hts_code: "0901.21.0020",
    schedule_b_code: "0901.21.0000",
    eccn_code: "EAR99",
    tax_code: "PF050001",
    sales_tax_category: "food",
    country_of_origin: "br",
    upc_code: "0123-4567-8905"
  }
})

describe.each(storeKinds)("products on %s", (kind) => {
  let host: TestHost
  let tenant: TestTenant
  let other: TestTenant

  beforeAll(async () => {
    host = await startTestHost(testStore(kind))
    tenant = await host.createTenant("BR")
    other = await host.createTenant("BR")
  })
  afterAll(() => host?.close())

  const { post, get, patch, remove, list, count, create } = resourceClient(
    "products",
    () => ({ host, token: tenant.token }),
    () => ({ name: `Product ${randomUUID().slice(0, 8)}` })
  )

  describe("create", () => {
    it("answers 201 with the stored record", async () => {
      const response = await post({ name: "Plain product" })
      expect(response.status).toBe(201)
      expect(response.body.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/)
      expect(response.body.name).toBe("Plain product")
    })

    it("fills defaults for the fields not sent", async () => {
      const product = await create({ name: "Defaults" })
      expect(product).toMatchObject({
        reference_code: null,
        description: null,
        tags: [],
        type: "goods",
        sale_price: null,
        image_url: null,
        is_blocked: false,
        metadata: {},
        unit_of_measurement: null,
        deleted_at: null
      })
      expect(product.br_data).toEqual({
        ncm_code: null,
        cest_code: null,
        origin: null,
        extipi: null,
        ibs_cbs_cst: null,
        ibs_cbs_classification: null,
        ibs_cbs_operation_indicator_code: null,
        ibs_cbs_is_personal_use: null
      })
      expect(product.us_data).toEqual({
        hts_code: null,
        schedule_b_code: null,
        eccn_code: null,
        tax_code: null,
        sales_tax_category: null,
        country_of_origin: null,
        upc_code: null
      })
      expect(product.created_at).toMatch(ISO_DATETIME)
      expect(product.updated_at).toMatch(ISO_DATETIME)
    })

    it("stores every field and answers the same record on GET", async () => {
      const body = fullProduct()
      const created = await post(body)
      expect(created.status).toBe(201)
      const read = await get(created.body.id)
      expect(read.status).toBe(200)
      expect(read.body).toEqual(created.body)
      expect(read.body).toMatchObject({
        name: "Espresso beans 1 kg",
        reference_code: body.reference_code,
        description: "Whole roasted beans",
        tags: ["coffee", "premium"],
        type: "goods",
        sale_price: "10.500000",
        image_url: "https://cdn.example.com/espresso.png",
        is_blocked: true,
        metadata: { origin_farm: "Fazenda Aurora", score: 86, nested: { lot: "A1" } },
        unit_of_measurement: { id: KGM.id, code: "KGM", symbol: "kg" },
        deleted_at: null
      })
    })

    it("normalises br_data codes to digits and keeps the other br_data fields", async () => {
      const product = await create(fullProduct())
      expect((await get(product.id)).body.br_data).toEqual({
        ncm_code: "09012100",
        cest_code: "1709900",
        origin: "0",
        extipi: "01",
        ibs_cbs_cst: "000",
        ibs_cbs_classification: "000001",
        ibs_cbs_operation_indicator_code: "100101",
        ibs_cbs_is_personal_use: false
      })
    })

    it("stores us_data, upper-casing the country of origin and keeping only UPC digits", async () => {
      const product = await create(fullProduct())
      expect((await get(product.id)).body.us_data).toEqual({
        hts_code: "0901.21.0020",
        schedule_b_code: "0901.21.0000",
        eccn_code: "EAR99",
        tax_code: "PF050001",
        sales_tax_category: "food",
        country_of_origin: "BR",
        upc_code: "012345678905"
      })
    })

    it("accepts a service type", async () => {
      const product = await create({ type: "service" })
      expect((await get(product.id)).body.type).toBe("service")
    })

    it.each([
      ["10.5", "10.500000"],
      ["0", "0.000000"],
      ["7", "7.000000"],
      ["0.000001", "0.000001"],
      ["12345678901234.123456", "12345678901234.123456"],
      [" 3.25 ", "3.250000"]
    ])("answers sale_price %j as the decimal string %j", async (sent, answered) => {
      const product = await create({ sale_price: sent })
      expect(product.sale_price).toBe(answered)
      const read = await get(product.id)
      expect(typeof read.body.sale_price).toBe("string")
      expect(read.body.sale_price).toBe(answered)
      expect(read.body.sale_price).toMatch(DECIMAL6)
    })

    it("answers sale_price as a six-digit string in lists too", async () => {
      const product = await create({ sale_price: "99.9" })
      const listed = (await list(`&id=${product.id}`)).body.data
      expect(listed).toHaveLength(1)
      expect(listed[0].sale_price).toBe("99.900000")
    })
  })

  describe("invalid create bodies", () => {
    const refused = async (body: unknown, field: string) => {
      const before = await count()
      const response = await post(body)
      expect(response.status, JSON.stringify(response.body)).toBe(400)
      expect(response.body).toMatchObject({ status_code: 400, error: "Bad Request", message: expect.any(String) })
      expect(Object.keys(response.body.details?.fields ?? {})).toContain(field)
      expect(response.body.details.fields[field].length).toBeGreaterThan(0)
      for (const reason of response.body.details.fields[field]) expect(typeof reason).toBe("string")
      expect(await count()).toBe(before)
      return response
    }

    it("refuses a missing name", async () => {
      const response = await refused({ sale_price: "1" }, "name")
      expect(response.body.details.fields.name).toEqual(["is required"])
    })

    it("refuses an empty name", () => refused({ name: "" }, "name"))

    it("refuses a name of blanks", () => refused({ name: "   " }, "name"))

    it("refuses a name that is not a string", () => refused({ name: 42 }, "name"))

    it("refuses sale_price \"abc\"", () => refused({ name: "x", sale_price: "abc" }, "sale_price"))

    it("refuses sale_price with seven decimals", () => refused({ name: "x", sale_price: "1.1234567" }, "sale_price"))

    it("refuses a negative sale_price", async () => {
      const response = await refused({ name: "x", sale_price: "-1.00" }, "sale_price")
      expect(response.body.details.fields.sale_price.join(" ")).toContain("negative")
    })

    it("refuses sale_price sent as a JSON number", () => refused({ name: "x", sale_price: 10.5 }, "sale_price"))

    it("refuses sale_price in exponent notation", () => refused({ name: "x", sale_price: "1e3" }, "sale_price"))

    it("refuses an unknown field", async () => {
      const response = await refused({ name: "x", colour: "red" }, "colour")
      expect(response.body.details.fields.colour).toEqual(["is not a field of this request"])
    })

    it("refuses an unknown field inside br_data", () => refused({ name: "x", br_data: { ncm: "09012100" } }, "br_data.ncm"))

    it("refuses is_blocked as a string", () => refused({ name: "x", is_blocked: "yes" }, "is_blocked"))

    it("refuses tags that are not an array of strings", () => refused({ name: "x", tags: "coffee" }, "tags"))

    it("refuses an empty tag", () => refused({ name: "x", tags: ["ok", ""] }, "tags.1"))

    it("refuses metadata that is not an object", () => refused({ name: "x", metadata: ["a"] }, "metadata"))

    it("refuses a sale_price over fourteen integer digits", () => refused({ name: "x", sale_price: "123456789012345" }, "sale_price"))

    it("refuses metadata with more than 50 keys", () =>
      refused({ name: "x", metadata: Object.fromEntries(Array.from({ length: 51 }, (_, index) => [`k${index}`, index])) }, "metadata"))

    it("refuses metadata over 16 KiB", () => refused({ name: "x", metadata: { blob: "x".repeat(17_000) } }, "metadata"))

    it("refuses an unknown type", () => refused({ name: "x", type: "hardware" }, "type"))

    it("refuses an image_url that is not a URL", () => refused({ name: "x", image_url: "not a url" }, "image_url"))

    it("refuses an image_url that is not http or https", () => refused({ name: "x", image_url: "ftp://example.com/a.png" }, "image_url"))

    it("refuses an ncm_code of 5 digits", async () => {
      const response = await refused({ name: "x", br_data: { ncm_code: "09012" } }, "br_data.ncm_code")
      expect(response.body.details.fields["br_data.ncm_code"].join(" ")).toContain("8 digits")
    })

    it("refuses an origin outside 0-8", () => refused({ name: "x", br_data: { origin: "9" } }, "br_data.origin"))

    it("refuses a unit_of_measurement_id that is not a UUID", () => refused({ name: "x", unit_of_measurement_id: "KGM" }, "unit_of_measurement_id"))

    it("names every bad field of one body at once", async () => {
      const response = await refused({ name: "", sale_price: "abc", image_url: "nope", br_data: { ncm_code: "1" } }, "name")
      expect(Object.keys(response.body.details.fields)).toEqual(
        expect.arrayContaining(["br_data.ncm_code", "image_url", "name", "sale_price"])
      )
    })

    it("gives only the real reason for a bad clearable field", async () => {
      const response = await refused({ name: "x", sale_price: "abc" }, "sale_price")
      expect(response.body.details.fields).toEqual({
        sale_price: ["must be a decimal number written as a string, for example \"10.50\""]
      })
    })

    it("names only the nested key, not its valid parent block", async () => {
      const response = await refused({ name: "x", br_data: { ncm_code: "09012" } }, "br_data.ncm_code")
      expect(Object.keys(response.body.details.fields)).toEqual(["br_data.ncm_code"])
    })

    it("refuses a body that is not an object", async () => {
      const before = await count()
      const response = await post("\"just a string\"")
      expect(response.status).toBe(400)
      expect(await count()).toBe(before)
    })
  })

  describe("unit of measurement", () => {
    it("embeds the unit as {id, code, symbol}", async () => {
      const product = await create({ unit_of_measurement_id: LTR.id })
      expect((await get(product.id)).body.unit_of_measurement).toEqual({ id: LTR.id, code: "LTR", symbol: "l" })
    })

    it("resolves the deprecated br_data.unit_of_measure given as a uuid", async () => {
      const product = await create({ br_data: { unit_of_measure: KGM.id } })
      const read = await get(product.id)
      expect(read.body.unit_of_measurement).toEqual({ id: KGM.id, code: "KGM", symbol: "kg" })
      expect(read.body.br_data).not.toHaveProperty("unit_of_measure")
    })

    it("resolves the deprecated br_data.unit_of_measure given as the fiscal code KG", async () => {
      const product = await create({ br_data: { unit_of_measure: "KG" } })
      expect((await get(product.id)).body.unit_of_measurement).toEqual({ id: KGM.id, code: "KGM", symbol: "kg" })
    })

    it("resolves the deprecated br_data.unit_of_measure given as the code KGM", async () => {
      const product = await create({ br_data: { unit_of_measure: "KGM" } })
      expect((await get(product.id)).body.unit_of_measurement?.id).toBe(KGM.id)
    })

    it("accepts both fields when they name the same unit", async () => {
      const byId = await create({ unit_of_measurement_id: KGM.id, br_data: { unit_of_measure: KGM.id } })
      expect(byId.unit_of_measurement.id).toBe(KGM.id)
      const byCode = await create({ unit_of_measurement_id: KGM.id, br_data: { unit_of_measure: "KG" } })
      expect((await get(byCode.id)).body.unit_of_measurement.id).toBe(KGM.id)
    })

    it("refuses both fields naming different units with 422 on br_data.unit_of_measure", async () => {
      const before = await count()
      const response = await post({ name: "x", unit_of_measurement_id: KGM.id, br_data: { unit_of_measure: LTR.id } })
      expect(response.status).toBe(422)
      expect(response.body).toMatchObject({ status_code: 422, error: "Unprocessable Entity", code: "INVALID_UNIT_OF_MEASUREMENT" })
      expect(Object.keys(response.body.details.fields)).toEqual(["br_data.unit_of_measure"])
      expect(await count()).toBe(before)
    })

    it("refuses an unknown unit id with 422 on unit_of_measurement_id", async () => {
      const before = await count()
      const response = await post({ name: "x", unit_of_measurement_id: randomUUID() })
      expect(response.status).toBe(422)
      expect(response.body.details.fields).toHaveProperty("unit_of_measurement_id")
      expect(await count()).toBe(before)
    })

    it("refuses an unknown deprecated unit code with 422 on br_data.unit_of_measure", async () => {
      const response = await post({ name: "x", br_data: { unit_of_measure: "NOPE" } })
      expect(response.status).toBe(422)
      expect(response.body.details.fields).toHaveProperty(["br_data.unit_of_measure"])
    })

    it("refuses a US-only unit on a Brazilian tenant with 422", async () => {
      expect(LBR.country_codes).toEqual(["US"])
      const before = await count()
      const response = await post({ name: "x", unit_of_measurement_id: LBR.id })
      expect(response.status).toBe(422)
      expect(response.body.details.fields).toHaveProperty("unit_of_measurement_id")
      expect(await count()).toBe(before)
    })

    it("refuses a US-only unit sent through the deprecated field on a Brazilian tenant", async () => {
      const response = await post({ name: "x", br_data: { unit_of_measure: "LBR" } })
      expect(response.status).toBe(422)
      expect(response.body.details.fields).toHaveProperty(["br_data.unit_of_measure"])
    })

    it("accepts a US-only unit on a US tenant", async () => {
      const us = await host.createTenant("US")
      const product = await create({ unit_of_measurement_id: LBR.id }, us.token)
      expect(product.unit_of_measurement).toEqual({ id: LBR.id, code: "LBR", symbol: "lb" })
    })

    it("changes the unit on PATCH and refuses a mismatch there too", async () => {
      const product = await create({ unit_of_measurement_id: KGM.id })
      const changed = await patch(product.id, { br_data: { unit_of_measure: "LT" } })
      expect(changed.status).toBe(200)
      expect(changed.body.unit_of_measurement.id).toBe(LTR.id)
      const mismatch = await patch(product.id, { unit_of_measurement_id: KGM.id, br_data: { unit_of_measure: "LT" } })
      expect(mismatch.status).toBe(422)
      expect(mismatch.body.details.fields).toHaveProperty(["br_data.unit_of_measure"])
      expect((await get(product.id)).body.unit_of_measurement.id).toBe(LTR.id)
    })

    it("clears the unit with unit_of_measurement_id null", async () => {
      const product = await create({ unit_of_measurement_id: KGM.id })
      const cleared = await patch(product.id, { unit_of_measurement_id: null })
      expect(cleared.status).toBe(200)
      expect((await get(product.id)).body.unit_of_measurement).toBeNull()
    })
  })

  describe("update", () => {
    it("changes only the fields sent", async () => {
      const product = await create(fullProduct())
      const response = await patch(product.id, { name: "Renamed", sale_price: "12" })
      expect(response.status).toBe(200)
      const read = await get(product.id)
      expect(read.body).toEqual(response.body)
      expect(read.body).toMatchObject({ name: "Renamed", sale_price: "12.000000" })
      const { name: _a, sale_price: _b, updated_at: _c, ...untouchedBefore } = product
      const { name: _d, sale_price: _e, updated_at: _f, ...untouchedAfter } = read.body
      expect(untouchedAfter).toEqual(untouchedBefore)
    })

    it("clears a field sent as null", async () => {
      const product = await create(fullProduct())
      const response = await patch(product.id, { sale_price: null, description: null, image_url: null, reference_code: null })
      expect(response.status).toBe(200)
      expect((await get(product.id)).body).toMatchObject({ sale_price: null, description: null, image_url: null, reference_code: null, name: "Espresso beans 1 kg" })
    })

    it("refuses null for the required name", async () => {
      const product = await create()
      const response = await patch(product.id, { name: null })
      expect(response.status).toBe(400)
      expect(response.body.details.fields).toHaveProperty("name")
      expect((await get(product.id)).body.name).toBe(product.name)
    })

    it("replaces tags as a whole", async () => {
      const product = await create({ tags: ["a", "b"] })
      await patch(product.id, { tags: ["c"] })
      expect((await get(product.id)).body.tags).toEqual(["c"])
      await patch(product.id, { tags: [] })
      expect((await get(product.id)).body.tags).toEqual([])
    })

    it("merges metadata key by key; null removes a key", async () => {
      const product = await create({ metadata: { a: 1, b: "two", c: { deep: true } } })
      const response = await patch(product.id, { metadata: { b: null, d: "new", a: 10 } })
      expect(response.status).toBe(200)
      expect((await get(product.id)).body.metadata).toEqual({ a: 10, c: { deep: true }, d: "new" })
    })

    it("merges br_data key by key; null removes a key", async () => {
      const product = await create(fullProduct())
      const response = await patch(product.id, { br_data: { cest_code: null, origin: "2" } })
      expect(response.status).toBe(200)
      expect((await get(product.id)).body.br_data).toEqual({
        ncm_code: "09012100",
        cest_code: null,
        origin: "2",
        extipi: "01",
        ibs_cbs_cst: "000",
        ibs_cbs_classification: "000001",
        ibs_cbs_operation_indicator_code: "100101",
        ibs_cbs_is_personal_use: false
      })
    })

    it("merges us_data key by key", async () => {
      const product = await create(fullProduct())
      await patch(product.id, { us_data: { tax_code: "P0000000", upc_code: null } })
      expect((await get(product.id)).body.us_data).toMatchObject({ hts_code: "0901.21.0020", tax_code: "P0000000", upc_code: null, country_of_origin: "BR" })
    })

    it("clears a whole block with null", async () => {
      const product = await create(fullProduct())
      await patch(product.id, { br_data: null })
      const read = (await get(product.id)).body
      expect(Object.values(read.br_data).every((value) => value === null)).toBe(true)
      expect(read.us_data.hts_code).toBe("0901.21.0020")
    })

    it("validates PATCH bodies like create bodies and keeps the record", async () => {
      const product = await create({ sale_price: "1" })
      const response = await patch(product.id, { sale_price: "1.1234567", br_data: { ncm_code: "123" }, unknown: 1 })
      expect(response.status).toBe(400)
      expect(Object.keys(response.body.details.fields)).toEqual(expect.arrayContaining(["br_data.ncm_code", "sale_price", "unknown"]))
      expect((await get(product.id)).body.sale_price).toBe("1.000000")
    })

    it("moves updated_at and keeps created_at", async () => {
      const product = await create()
      await sleep(20)
      const response = await patch(product.id, { description: "changed" })
      expect(response.body.created_at).toBe(product.created_at)
      expect(Date.parse(response.body.updated_at)).toBeGreaterThan(Date.parse(product.updated_at))
      expect((await get(product.id)).body.updated_at).toBe(response.body.updated_at)
    })

    it("answers an empty PATCH with the unchanged record", async () => {
      const product = await create({ sale_price: "3" })
      const response = await patch(product.id, {})
      expect(response.status).toBe(200)
      expect(response.body).toEqual(product)
    })

    it("answers 404 PRODUCT_NOT_FOUND for an unknown id", async () => {
      const response = await patch(randomUUID(), { name: "x" })
      expect(response.status).toBe(404)
      expect(response.body).toMatchObject({ status_code: 404, error: "Not Found", code: "PRODUCT_NOT_FOUND" })
    })

    it("answers 400 for an id that is not a UUID", async () => {
      expect((await patch("not-a-uuid", { name: "x" })).status).toBe(400)
      expect((await get("not-a-uuid")).status).toBe(400)
      expect((await remove("not-a-uuid")).status).toBe(400)
    })
  })

  describe("soft delete", () => {
    it("answers DELETE with 204 and an empty body", async () => {
      const product = await create()
      const response = await remove(product.id)
      expect(response.status).toBe(204)
      expect(response.body).toBeUndefined()
    })

    it("hides the deleted record from GET with 404", async () => {
      const product = await create()
      await remove(product.id)
      const response = await get(product.id)
      expect(response.status).toBe(404)
      expect(response.body).toMatchObject({ status_code: 404, code: "PRODUCT_NOT_FOUND" })
    })

    it("returns the deleted record with with_deleted=true and deleted_at set", async () => {
      const product = await create({ sale_price: "4.2" })
      await remove(product.id)
      const response = await get(product.id, "?with_deleted=true")
      expect(response.status).toBe(200)
      expect(response.body.deleted_at).toMatch(ISO_DATETIME)
      expect(response.body).toMatchObject({ id: product.id, name: product.name, sale_price: "4.200000" })
      expect((await get(product.id, "?with_deleted=false")).status).toBe(404)
    })

    it("answers 400 for a with_deleted that is not a boolean", async () => {
      const product = await create()
      const response = await get(product.id, "?with_deleted=yes")
      expect(response.status).toBe(400)
      expect(response.body.message).toContain("with_deleted")
    })

    it("leaves the deleted record out of lists unless with_deleted=true", async () => {
      const product = await create()
      await remove(product.id)
      expect((await list(`&id=${product.id}`)).body.data).toEqual([])
      expect((await list(`&id=${product.id}&with_deleted=false`)).body.data).toEqual([])
      const withDeleted = (await list(`&id=${product.id}&with_deleted=true`)).body.data
      expect(withDeleted).toHaveLength(1)
      expect(withDeleted[0].deleted_at).toMatch(ISO_DATETIME)
    })

    it("finds deleted records with deleted_at filters only under with_deleted=true", async () => {
      const product = await create()
      await remove(product.id)
      expect((await list("&deleted_at[is_not_null]=true")).body.data).toEqual([])
      const deleted = (await list("&with_deleted=true&deleted_at[is_not_null]=true")).body.data.map((row: { id: string }) => row.id)
      expect(deleted).toContain(product.id)
      expect((await list(`&with_deleted=true&deleted_at[is_null]=true&id=${product.id}`)).body.data).toEqual([])
    })

    it("answers a second DELETE with 404", async () => {
      const product = await create()
      expect((await remove(product.id)).status).toBe(204)
      const again = await remove(product.id)
      expect(again.status).toBe(404)
      expect(again.body.code).toBe("PRODUCT_NOT_FOUND")
    })

    it("answers PATCH of a deleted record with 404 and leaves it unchanged", async () => {
      const product = await create({ description: "before" })
      await remove(product.id)
      const response = await patch(product.id, { description: "after" })
      expect(response.status).toBe(404)
      expect((await get(product.id, "?with_deleted=true")).body.description).toBe("before")
    })

    it("answers DELETE of an unknown id with 404", async () => {
      expect((await remove(randomUUID())).status).toBe(404)
    })
  })

  describe("reference_code uniqueness", () => {
    it("refuses a duplicate reference_code in the same tenant with 409", async () => {
      const code = `DUP-${randomUUID().slice(0, 8)}`
      await create({ reference_code: code })
      const before = await count()
      const response = await post({ name: "second", reference_code: code })
      expect(response.status).toBe(409)
      expect(response.body).toMatchObject({ status_code: 409, error: "Conflict" })
      expect(response.body.message).toContain("reference_code")
      expect(await count()).toBe(before)
    })

    it("refuses taking another product's reference_code on PATCH with 409", async () => {
      const code = `DUP-${randomUUID().slice(0, 8)}`
      await create({ reference_code: code })
      const second = await create({ reference_code: `${code}-B` })
      const response = await patch(second.id, { reference_code: code })
      expect(response.status).toBe(409)
      expect((await get(second.id)).body.reference_code).toBe(`${code}-B`)
    })

    it("allows the reference_code again once the first product is deleted", async () => {
      const code = `DUP-${randomUUID().slice(0, 8)}`
      const first = await create({ reference_code: code })
      await remove(first.id)
      const response = await post({ name: "again", reference_code: code })
      expect(response.status).toBe(201)
      expect(response.body.reference_code).toBe(code)
    })

    it("allows the same reference_code in another tenant", async () => {
      const code = `DUP-${randomUUID().slice(0, 8)}`
      await create({ reference_code: code })
      const response = await post({ name: "other tenant", reference_code: code }, other.token)
      expect(response.status).toBe(201)
    })

    it("allows several products without reference_code", async () => {
      await create({ reference_code: null })
      await create({ reference_code: null })
    })
  })

  describe("tenant isolation", () => {
    it("answers 404 to another tenant's GET, PATCH and DELETE and leaves the record alone", async () => {
      const product = await create({ description: "mine" })
      const read = await get(product.id, "", other.token)
      expect(read.status).toBe(404)
      expect(read.body.code).toBe("PRODUCT_NOT_FOUND")
      expect((await get(product.id, "?with_deleted=true", other.token)).status).toBe(404)
      const changed = await patch(product.id, { description: "theirs" }, other.token)
      expect(changed.status).toBe(404)
      expect(changed.body.code).toBe("PRODUCT_NOT_FOUND")
      const removed = await remove(product.id, other.token)
      expect(removed.status).toBe(404)
      const mine = await get(product.id)
      expect(mine.status).toBe(200)
      expect(mine.body).toMatchObject({ description: "mine", deleted_at: null })
    })

    it("never lists another tenant's products", async () => {
      const product = await create({ name: "Invisible elsewhere" })
      const theirs = await list("&with_deleted=true", other.token)
      expect(theirs.status).toBe(200)
      expect(theirs.body.data.map((row: { id: string }) => row.id)).not.toContain(product.id)
      expect((await list(`&id=${product.id}`, other.token)).body.data).toEqual([])
      expect((await list("&search=invisible", other.token)).body.data).toEqual([])
    })
  })
})
