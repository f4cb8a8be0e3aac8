import * as fs from "node:fs"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestHost, type TestHost, type TestTenant } from "../../../test/support/host.js"
import { storeKinds, testStore } from "../../../test/support/stores.js"

const units = (JSON.parse(
  fs.readFileSync(new URL("../../core/src/catalogs/data/units-of-measurement.json", import.meta.url), "utf8")
) as { records: Array<{ id: string; code: string }> }).records
const unitId = (code: string): string => {
  const found = units.find((row) => row.code === code)
  if (!found) throw new Error(`unit ${code} is not in the catalog`)
  return found.id
}
const KGM = unitId("KGM")
const LTR = unitId("LTR")
const H87 = unitId("H87")

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const q = encodeURIComponent

/** The same instant written with a +02:00 offset, e.g. 2026-01-01T12:00:00.000Z -> 2026-01-01T14:00:00.000+02:00. */
const withOffset = (iso: string) => new Date(Date.parse(iso) + 2 * 3600_000).toISOString().replace("Z", "+02:00")
const shiftDay = (date: string, days: number) => new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10)

// Created in this order (default sort created_at:asc answers them so).
const PRODUCTS = {
  cafe: {
    name: "Café Especial",
    reference_code: "CAF-1",
    description: "Grãos torrados",
    sale_price: "10.5",
    tags: ["coffee", "premium"],
    unit_of_measurement_id: KGM,
    br_data: { ncm_code: "0901.21.00", ibs_cbs_is_personal_use: true },
    metadata: { supplier: "Fazenda Aurora" }
  },
  cha: {
    name: "Chá Verde",
    reference_code: "CHA-1",
    sale_price: "5",
    tags: ["tea"],
    is_blocked: true,
    unit_of_measurement_id: LTR,
    br_data: { ncm_code: "0902.20.00", ibs_cbs_is_personal_use: false },
    us_data: { country_of_origin: "CN" }
  },
  acucar: { name: "Açúcar Mascavo" },
  filtro: {
    name: "Coffee Filter",
    reference_code: "FIL-1",
    description: "Paper filters for CAFÉ",
    sale_price: "25",
    tags: ["coffee", "accessory"],
    unit_of_measurement_id: H87
  },
  consultoria: { name: "Consultoria", type: "service", reference_code: "SRV-1", sale_price: "100", tags: ["service"] }
} as const
type ProductKey = keyof typeof PRODUCTS
const ALL: Array<ProductKey> = ["cafe", "cha", "acucar", "filtro", "consultoria"]
const except = (...keys: Array<ProductKey>) => ALL.filter((key) => !keys.includes(key))

const CUSTOMERS = {
  padaria: {
    legal_name: "Padaria São Jorge",
    city_id: 3550308,
    emails: ["contato@saojorge.example"],
    tags: ["bakery"],
    br_data: { tax_regime: "simples_nacional" }
  },
  mercado: { legal_name: "Mercado Central", city_id: 105368361, us_data: { naics_code: "445110", w9_on_file: true } },
  jose: { legal_name: "José Café ME", tax_id: "529.982.247-25", tax_id_type: "CPF", metadata: { note: "prefers pix" } }
} as const
type CustomerKey = keyof typeof CUSTOMERS

describe.each(storeKinds)("list filters on %s", (kind) => {
  let host: TestHost
  let tenant: TestTenant
  const products = {} as Record<ProductKey, { id: string; created_at: string }>
  const customers = {} as Record<CustomerKey, { id: string }>

  beforeAll(async () => {
    host = await startTestHost(testStore(kind))
    tenant = await host.createTenant("BR")
    for (const key of ALL) {
      const response = await host.request("POST", "/products", { token: tenant.token, body: PRODUCTS[key] })
      if (response.status !== 201) throw new Error(`seeding ${key}: ${JSON.stringify(response.body)}`)
      products[key] = response.body
      await sleep(15)
    }
    for (const key of Object.keys(CUSTOMERS) as Array<CustomerKey>) {
      const response = await host.request("POST", "/customers", { token: tenant.token, body: CUSTOMERS[key] })
      if (response.status !== 201) throw new Error(`seeding ${key}: ${JSON.stringify(response.body)}`)
      customers[key] = response.body
      await sleep(15)
    }
  })
  afterAll(() => host?.close())

  const listProducts = (query: string) => host.request("GET", `/products?${query}`, { token: tenant.token })
  const listCustomers = (query: string) => host.request("GET", `/customers?${query}`, { token: tenant.token })

  /** The keys of the products a query returns, in answer order. */
  const productKeys = async (query: string): Promise<Array<ProductKey>> => {
    const response = await listProducts(`limit=100&${query}`)
    expect(response.status, JSON.stringify(response.body)).toBe(200)
    return response.body.data.map((row: { id: string }) => {
      const key = ALL.find((name) => products[name].id === row.id)
      if (!key) throw new Error(`unexpected product ${row.id}`)
      return key
    })
  }
  const customerKeys = async (query: string): Promise<Array<CustomerKey>> => {
    const response = await listCustomers(`limit=100&${query}`)
    expect(response.status, JSON.stringify(response.body)).toBe(200)
    return response.body.data.map((row: { id: string }) => {
      const key = (Object.keys(customers) as Array<CustomerKey>).find((name) => customers[name].id === row.id)
      if (!key) throw new Error(`unexpected customer ${row.id}`)
      return key
    })
  }
  /** A 400 with the spec's error body whose message names `parameter`. */
  const badRequest = async (query: string, parameter: string, path = "/products") => {
    const response = await host.request("GET", `${path}?${query}`, { token: tenant.token })
    expect(response.status, JSON.stringify(response.body)).toBe(400)
    expect(response.body).toMatchObject({ status_code: 400, error: "Bad Request", message: expect.any(String) })
    expect(response.body.message).toContain(parameter)
    return response.body
  }

  it("answers every product in creation order without filters", async () => {
    expect(await productKeys("")).toEqual(ALL)
  })

  describe("string operators", () => {
    it("eq matches the exact value", async () => {
      expect(await productKeys(`name=${q("Chá Verde")}`)).toEqual(["cha"])
      expect(await productKeys(`name=${q("chá verde")}`)).toEqual([])
    })

    it("neq excludes the value", async () => {
      expect(await productKeys(`name[neq]=${q("Chá Verde")}`)).toEqual(except("cha"))
    })

    it("neq keeps records whose value is null", async () => {
      expect(await productKeys("reference_code[neq]=CAF-1")).toEqual(except("cafe"))
    })

    it("contains ignores case and accents: cafe matches Café", async () => {
      expect(await productKeys("name[contains]=cafe")).toEqual(["cafe"])
      expect(await productKeys("name[contains]=CAFÉ")).toEqual(["cafe"])
      expect(await productKeys("description[contains]=cafe")).toEqual(["filtro"])
      expect(await productKeys("name[contains]=acucar")).toEqual(["acucar"])
    })

    it("contains matches in the middle of the text", async () => {
      expect(await productKeys("name[contains]=ERD")).toEqual(["cha"])
    })

    it("contains takes % and _ literally", async () => {
      expect(await productKeys(`name[contains]=${q("%")}`)).toEqual([])
      expect(await productKeys("name[contains]=_")).toEqual([])
    })

    it("not_contains excludes matches, ignoring case and accents", async () => {
      expect(await productKeys("name[not_contains]=CO")).toEqual(["cafe", "cha", "acucar"])
    })

    it("not_contains keeps records whose value is null", async () => {
      expect(await productKeys("description[not_contains]=paper")).toEqual(except("filtro"))
    })

    it("filters on type", async () => {
      expect(await productKeys("type=service")).toEqual(["consultoria"])
      expect(await productKeys("type[neq]=service")).toEqual(except("consultoria"))
    })
  })

  describe("number operators (sale_price)", () => {
    it("gt, gte, lt, lte compare as numbers", async () => {
      expect(await productKeys("sale_price[gt]=10")).toEqual(["cafe", "filtro", "consultoria"])
      expect(await productKeys("sale_price[gt]=10.5")).toEqual(["filtro", "consultoria"])
      expect(await productKeys("sale_price[gte]=10.5")).toEqual(["cafe", "filtro", "consultoria"])
      expect(await productKeys("sale_price[lt]=10.5")).toEqual(["cha"])
      expect(await productKeys("sale_price[lte]=10.500000")).toEqual(["cafe", "cha"])
      expect(await productKeys("sale_price[gt]=9")).toEqual(["cafe", "filtro", "consultoria"])
    })

    it("eq ignores trailing zeros", async () => {
      expect(await productKeys("sale_price=25")).toEqual(["filtro"])
      expect(await productKeys("sale_price=25.000000")).toEqual(["filtro"])
    })

    it("neq keeps records without a price", async () => {
      expect(await productKeys("sale_price[neq]=25")).toEqual(except("filtro"))
    })

    it("takes negative numbers", async () => {
      expect(await productKeys("sale_price[gt]=-1")).toEqual(except("acucar"))
    })
  })

  describe("datetime operators (created_at)", () => {
    it("compares with a full ISO datetime", async () => {
      const at = products.cha.created_at
      expect(await productKeys(`created_at=${q(at)}`)).toEqual(["cha"])
      expect(await productKeys(`created_at[neq]=${q(at)}`)).toEqual(except("cha"))
      expect(await productKeys(`created_at[gt]=${q(at)}`)).toEqual(["acucar", "filtro", "consultoria"])
      expect(await productKeys(`created_at[gte]=${q(at)}`)).toEqual(["cha", "acucar", "filtro", "consultoria"])
      expect(await productKeys(`created_at[lt]=${q(at)}`)).toEqual(["cafe"])
      expect(await productKeys(`created_at[lte]=${q(at)}`)).toEqual(["cafe", "cha"])
    })

    it("honours a UTC offset in the datetime", async () => {
      const at = withOffset(products.cha.created_at)
      expect(await productKeys(`created_at=${q(at)}`)).toEqual(["cha"])
      expect(await productKeys(`created_at[gte]=${q(at)}`)).toEqual(["cha", "acucar", "filtro", "consultoria"])
    })

    it("reads a date as that whole UTC day", async () => {
      const today = products.cafe.created_at.slice(0, 10)
      expect(products.consultoria.created_at.slice(0, 10)).toBe(today)
      expect(await productKeys(`created_at=${today}`)).toEqual(ALL)
      expect(await productKeys(`created_at[lte]=${today}`)).toEqual(ALL)
      expect(await productKeys(`created_at[gte]=${today}`)).toEqual(ALL)
      expect(await productKeys(`created_at[gt]=${today}`)).toEqual([])
      expect(await productKeys(`created_at[lt]=${today}`)).toEqual([])
      expect(await productKeys(`created_at[neq]=${today}`)).toEqual([])
    })

    it("compares dates of other days", async () => {
      const today = products.cafe.created_at.slice(0, 10)
      expect(await productKeys(`created_at[gt]=${shiftDay(today, -1)}`)).toEqual(ALL)
      expect(await productKeys(`created_at[lt]=${shiftDay(today, 1)}`)).toEqual(ALL)
      expect(await productKeys(`created_at=${shiftDay(today, -1)}`)).toEqual([])
      expect(await productKeys(`created_at[neq]=${shiftDay(today, 1)}`)).toEqual(ALL)
    })
  })

  describe("boolean, uuid and null operators", () => {
    it("boolean eq and neq (is_blocked)", async () => {
      expect(await productKeys("is_blocked=true")).toEqual(["cha"])
      expect(await productKeys("is_blocked=false")).toEqual(except("cha"))
      expect(await productKeys("is_blocked[neq]=true")).toEqual(except("cha"))
    })

    it("uuid eq (unit_of_measurement_id), in any letter case", async () => {
      expect(await productKeys(`unit_of_measurement_id=${KGM}`)).toEqual(["cafe"])
      expect(await productKeys(`unit_of_measurement_id=${KGM.toUpperCase()}`)).toEqual(["cafe"])
    })

    it("uuid neq keeps records without a unit", async () => {
      expect(await productKeys(`unit_of_measurement_id[neq]=${KGM}`)).toEqual(except("cafe"))
    })

    it("filters on id", async () => {
      expect(await productKeys(`id=${products.acucar.id}`)).toEqual(["acucar"])
    })

    it("is_null and is_not_null on reference_code", async () => {
      expect(await productKeys("reference_code[is_null]=true")).toEqual(["acucar"])
      expect(await productKeys("reference_code[is_not_null]=true")).toEqual(except("acucar"))
    })

    it("is_null and is_not_null on sale_price", async () => {
      expect(await productKeys("sale_price[is_null]=true")).toEqual(["acucar"])
      expect(await productKeys("sale_price[is_not_null]=true")).toEqual(except("acucar"))
    })

    it("is_null=false means is not null", async () => {
      expect(await productKeys("reference_code[is_null]=false")).toEqual(except("acucar"))
    })

    it("is_null on a uuid field", async () => {
      expect(await productKeys("unit_of_measurement_id[is_null]=true")).toEqual(["acucar", "consultoria"])
    })
  })

  describe("nested block fields", () => {
    it("eq on br_data.ncm_code", async () => {
      expect(await productKeys("br_data.ncm_code=09012100")).toEqual(["cafe"])
    })

    it("contains and is_null on br_data.ncm_code", async () => {
      expect(await productKeys("br_data.ncm_code[contains]=0902")).toEqual(["cha"])
      expect(await productKeys("br_data.ncm_code[is_null]=true")).toEqual(["acucar", "filtro", "consultoria"])
      expect(await productKeys("br_data.ncm_code[neq]=09012100")).toEqual(except("cafe"))
    })

    it("boolean block field br_data.ibs_cbs_is_personal_use", async () => {
      expect(await productKeys("br_data.ibs_cbs_is_personal_use=true")).toEqual(["cafe"])
      expect(await productKeys("br_data.ibs_cbs_is_personal_use=false")).toEqual(["cha"])
    })

    it("us_data.country_of_origin", async () => {
      expect(await productKeys("us_data.country_of_origin=CN")).toEqual(["cha"])
    })

    it("refuses an undeclared key of a block", async () => {
      await badRequest("br_data.unit_of_measure=KG", "br_data.unit_of_measure")
    })
  })

  describe("array fields (tags)", () => {
    it("eq means has the tag", async () => {
      expect(await productKeys("tags=coffee")).toEqual(["cafe", "filtro"])
      expect(await productKeys("tags=coff")).toEqual([])
    })

    it("neq means lacks the tag", async () => {
      expect(await productKeys("tags[neq]=coffee")).toEqual(["cha", "acucar", "consultoria"])
    })

    it("contains means a tag contains the text, ignoring case", async () => {
      expect(await productKeys("tags[contains]=acc")).toEqual(["filtro"])
      expect(await productKeys("tags[contains]=PREM")).toEqual(["cafe"])
    })

    it("not_contains keeps products without tags", async () => {
      expect(await productKeys("tags[not_contains]=co")).toEqual(["cha", "acucar", "consultoria"])
    })
  })

  describe("combining filters", () => {
    it("ANDs different filters", async () => {
      expect(await productKeys("tags=coffee&sale_price[lt]=20")).toEqual(["cafe"])
      expect(await productKeys(`tags=coffee&is_blocked=false&unit_of_measurement_id=${KGM}`)).toEqual(["cafe"])
      expect(await productKeys("is_blocked=true&sale_price[gt]=50")).toEqual([])
    })

    it("ANDs the same key given twice", async () => {
      expect(await productKeys("tags=coffee&tags=premium")).toEqual(["cafe"])
      expect(await productKeys("sale_price[gte]=5&sale_price[lte]=25")).toEqual(["cafe", "cha", "filtro"])
      expect(await productKeys("name[contains]=c&name[contains]=f")).toEqual(["cafe", "filtro"])
    })
  })

  describe("JSON filter parameter", () => {
    const json = (value: unknown) => `filter=${q(JSON.stringify(value))}`

    it("applies an and group", async () => {
      expect(await productKeys(json({ logic: "and", conditions: [{ f: "sale_price", op: "gte", v: "10" }] }))).toEqual(["cafe", "filtro", "consultoria"])
    })

    it("applies an or group", async () => {
      const filter = { logic: "or", conditions: [{ f: "name", op: "contains", v: "chá" }, { f: "sale_price", op: "gte", v: 100 }] }
      expect(await productKeys(json(filter))).toEqual(["cha", "consultoria"])
    })

    it("applies nested groups", async () => {
      const filter = {
        logic: "and",
        conditions: [
          { f: "tags", op: "eq", v: "coffee" },
          { logic: "or", conditions: [{ f: "sale_price", op: "lt", v: "11" }, { f: "reference_code", op: "eq", v: "NONE" }] }
        ]
      }
      expect(await productKeys(json(filter))).toEqual(["cafe"])
    })

    it("ANDs the JSON filter with bracket filters", async () => {
      const filter = { logic: "or", conditions: [{ f: "name", op: "contains", v: "chá" }, { f: "sale_price", op: "gte", v: "100" }] }
      expect(await productKeys(`${json(filter)}&is_blocked=false`)).toEqual(["consultoria"])
    })

    it("takes is_null without v and eq as the default operator", async () => {
      expect(await productKeys(json({ logic: "and", conditions: [{ f: "reference_code", op: "is_null" }] }))).toEqual(["acucar"])
      expect(await productKeys(json({ conditions: [{ f: "type", v: "service" }] }))).toEqual(["consultoria"])
    })

    it("validates JSON conditions like bracket filters", async () => {
      await badRequest(json({ logic: "and", conditions: [{ f: "colour", op: "eq", v: "red" }] }), "colour")
      await badRequest(json({ logic: "and", conditions: [{ f: "name", op: "gt", v: "a" }] }), "filter")
      await badRequest(json({ logic: "and", conditions: [{ f: "sale_price", op: "gte", v: "ten" }] }), "sale_price")
    })

    it("refuses a logic other than and/or", async () => {
      await badRequest(json({ logic: "xor", conditions: [] }), "logic")
    })

    it("refuses malformed JSON", async () => {
      await badRequest(`filter=${q("{\"logic\":")}`, "filter")
    })

    it("refuses a JSON value that is not an object", async () => {
      await badRequest(`filter=${q("[1,2]")}`, "filter")
    })
  })

  describe("invalid filters", () => {
    it("refuses an unknown field", async () => {
      const body = await badRequest("colour=red", "colour")
      expect(body.message).toContain("Unknown filter field")
    })

    it("refuses an unknown operator", async () => {
      await badRequest("name[like]=x", "like")
    })

    it("refuses gt on a string", async () => {
      await badRequest("name[gt]=a", "name[gt]")
    })

    it("refuses contains on a number", async () => {
      await badRequest("sale_price[contains]=1", "sale_price[contains]")
    })

    it("refuses contains on a uuid", async () => {
      await badRequest("unit_of_measurement_id[contains]=abc", "unit_of_measurement_id[contains]")
    })

    it("refuses gt on a boolean", async () => {
      await badRequest("is_blocked[gt]=true", "is_blocked[gt]")
    })

    it("refuses text in a numeric field", async () => {
      await badRequest("sale_price=abc", "sale_price")
      await badRequest("sale_price[gte]=1e3", "sale_price[gte]")
      await badRequest("sale_price[gt]=", "sale_price[gt]")
    })

    it("refuses a bad date or datetime", async () => {
      await badRequest("created_at=yesterday", "created_at")
      await badRequest("created_at[gt]=2024-02-30", "created_at[gt]")
      await badRequest("created_at[lt]=2024-13-01", "created_at[lt]")
      await badRequest(`created_at=${q("2024-01-01 10:00")}`, "created_at")
    })

    it("refuses a bad uuid", async () => {
      await badRequest("unit_of_measurement_id=KGM", "unit_of_measurement_id")
      await badRequest("id=123", "id")
    })

    it("refuses a bad boolean", async () => {
      await badRequest("is_blocked=yes", "is_blocked")
      await badRequest("is_blocked=1", "is_blocked")
    })

    it("refuses is_null on a non-nullable field", async () => {
      const body = await badRequest("name[is_null]=true", "name[is_null]")
      expect(body.message).toContain("not nullable")
      await badRequest("is_blocked[is_not_null]=true", "is_blocked[is_not_null]")
    })

    it("refuses an is_null value other than true or false", async () => {
      await badRequest("reference_code[is_null]=maybe", "reference_code[is_null]")
    })

    it.each(["0", "101", "abc", "-1", "1.5"])("refuses limit=%s", async (limit) => {
      await badRequest(`limit=${limit}`, "limit")
    })

    it("accepts limit 1 and 100", async () => {
      expect((await listProducts("limit=1")).body.data).toHaveLength(1)
      expect((await listProducts("limit=100")).body.pagination.limit).toBe(100)
    })

    it("refuses a non-boolean with_deleted or include_payload_search", async () => {
      await badRequest("with_deleted=maybe", "with_deleted")
      await badRequest("include_payload_search=1", "include_payload_search")
    })
  })

  describe("sort", () => {
    it("sorts by name ascending and descending", async () => {
      const ascending = ["acucar", "cafe", "cha", "filtro", "consultoria"]
      expect(await productKeys("sort=name:asc")).toEqual(ascending)
      expect(await productKeys("sort=name:desc")).toEqual([...ascending].reverse())
    })

    it("sorts ascending when the order is left out", async () => {
      const response = await listProducts("sort=name")
      expect(response.body.meta.sort).toEqual({ field: "name", order: "asc" })
      expect(response.body.data[0].name).toBe("Açúcar Mascavo")
    })

    it("sorts by sale_price with nulls first descending and last ascending", async () => {
      expect(await productKeys("sort=sale_price:desc")).toEqual(["acucar", "consultoria", "filtro", "cafe", "cha"])
      expect(await productKeys("sort=sale_price:asc")).toEqual(["cha", "cafe", "filtro", "consultoria", "acucar"])
    })

    it("pages through sale_price:desc visiting every product once", async () => {
      const seen: Array<string> = []
      let query = "limit=2&sort=sale_price:desc"
      for (let page = 0; page < 10; page++) {
        const response = await listProducts(query)
        expect(response.status).toBe(200)
        seen.push(...response.body.data.map((row: { name: string }) => row.name))
        if (!response.body.pagination.has_next_page) break
        query = `limit=2&sort=sale_price:desc&cursor=${q(response.body.pagination.next_cursor)}`
      }
      expect(seen).toEqual(["Açúcar Mascavo", "Consultoria", "Coffee Filter", "Café Especial", "Chá Verde"])
    })

    it("combines sort with filters", async () => {
      expect(await productKeys("sort=sale_price:desc&tags=coffee")).toEqual(["filtro", "cafe"])
    })

    it("refuses an unknown sort field", async () => {
      const body = await badRequest("sort=colour:asc", "colour")
      expect(body.message).toContain("sort")
    })

    it("refuses a field that is filterable but not sortable", async () => {
      await badRequest("sort=description:asc", "description")
    })

    it("refuses an order other than asc or desc", async () => {
      await badRequest("sort=name:up", "sort")
    })
  })

  describe("search", () => {
    it("ignores accents and case", async () => {
      expect(await productKeys("search=CAFE")).toEqual(["cafe", "filtro"])
      expect(await productKeys(`search=${q("açúcar")}`)).toEqual(["acucar"])
      expect(await productKeys("search=acucar")).toEqual(["acucar"])
    })

    it("matches word prefixes", async () => {
      expect(await productKeys("search=espec")).toEqual(["cafe"])
      expect(await productKeys("search=consult")).toEqual(["consultoria"])
    })

    it("needs every word to match", async () => {
      expect(await productKeys(`search=${q("cafe especial")}`)).toEqual(["cafe"])
      expect(await productKeys(`search=${q("cafe paper")}`)).toEqual(["filtro"])
      expect(await productKeys(`search=${q("cafe verde")}`)).toEqual([])
    })

    it("finds tags", async () => {
      expect(await productKeys("search=premium")).toEqual(["cafe"])
    })

    it("finds customers by name regardless of accents: SAO finds São", async () => {
      expect(await customerKeys("search=SAO")).toEqual(["padaria"])
      expect(await customerKeys("search=jose")).toEqual(["jose"])
      expect(await customerKeys("search=cafe")).toEqual(["jose"])
    })

    it("answers a page whose records and search echo hold multi-byte characters with their UTF-8 bytes and length", async () => {
      const response = await fetch(`${host.url}/customers?limit=100&search=${encodeURIComponent("São Jorge ✓")}`, { headers: { authorization: `Bearer ${tenant.token}` } })
      const bytes = Buffer.from(await response.arrayBuffer())
      expect(response.status).toBe(200)
      expect(Number(response.headers.get("content-length"))).toBe(bytes.length)
      const page = JSON.parse(bytes.toString("utf8"))
      expect(page.meta.search).toBe("São Jorge ✓")
      expect(page.data.map((row: { legal_name: string }) => row.legal_name)).toEqual(["Padaria São Jorge"])
    })

    it("finds a term only in metadata with include_payload_search=true, and not without", async () => {
      expect(await productKeys("search=aurora")).toEqual([])
      expect(await productKeys("search=aurora&include_payload_search=false")).toEqual([])
      expect(await productKeys("search=aurora&include_payload_search=true")).toEqual(["cafe"])
      expect(await customerKeys("search=pix")).toEqual([])
      expect(await customerKeys("search=pix&include_payload_search=true")).toEqual(["jose"])
    })

    it("combines search with filters", async () => {
      expect(await productKeys("search=cafe&sale_price[lt]=20")).toEqual(["cafe"])
    })

    it("finds a whole reference code with punctuation, as it was indexed", async () => {
      expect(await productKeys("search=CHA-1")).toEqual(["cha"])
      expect(await productKeys("search=srv-1")).toEqual(["consultoria"])
    })

    it("finds a customer by a whole email address", async () => {
      expect(await customerKeys(`search=${q("contato@saojorge.example")}`)).toEqual(["padaria"])
    })

    it("finds nothing for a search of punctuation only", async () => {
      expect(await productKeys(`search=${q("!!!")}`)).toEqual([])
    })
  })

  describe("meta", () => {
    it("echoes bracket filters with typed values, search and the sort applied", async () => {
      const response = await listProducts("sale_price[gte]=10&is_blocked=false&tags=coffee&tags=premium&search=cafe&sort=name:desc")
      expect(response.status).toBe(200)
      expect(response.body.meta).toEqual({
        filters: { sale_price: { gte: "10" }, is_blocked: { eq: false }, tags: { eq: ["coffee", "premium"] } },
        search: "cafe",
        sort: { field: "name", order: "desc" }
      })
      expect(response.body.data.map((row: { name: string }) => row.name)).toEqual(["Café Especial"])
    })

    it("echoes the default sort and an empty filter set", async () => {
      const response = await listProducts("")
      expect(response.body.meta).toEqual({ filters: {}, search: null, sort: { field: "created_at", order: "asc" } })
    })

    it("echoes the JSON filter", async () => {
      const filter = { logic: "or", conditions: [{ f: "sale_price", op: "gte", v: "10" }] }
      const response = await listProducts(`filter=${q(JSON.stringify(filter))}&type=goods`)
      expect(response.body.meta.filters).toEqual({ type: { eq: "goods" }, filter })
    })

    it("answers the pagination block", async () => {
      const response = await listProducts("limit=2")
      expect(response.body.pagination).toMatchObject({ limit: 2, has_next_page: true, has_previous_page: false, previous_cursor: null })
      expect(typeof response.body.pagination.next_cursor).toBe("string")
    })
  })

  describe("customer filters", () => {
    it("filters on geography ids", async () => {
      expect(await customerKeys("city_id=3550308")).toEqual(["padaria"])
      expect(await customerKeys("state_id=84006")).toEqual(["mercado"])
      expect(await customerKeys("country_id[neq]=76")).toEqual(["mercado", "jose"])
      expect(await customerKeys("country_code=br")).toEqual(["padaria"])
      expect(await customerKeys("country_code=US")).toEqual(["mercado"])
      expect(await customerKeys("country_code[is_null]=true")).toEqual(["jose"])
      expect(await customerKeys("city_id[is_null]=true")).toEqual(["jose"])
    })

    it("filters on country blocks", async () => {
      expect(await customerKeys("br_data.tax_regime=simples_nacional")).toEqual(["padaria"])
      expect(await customerKeys("us_data.w9_on_file=true")).toEqual(["mercado"])
      expect(await customerKeys("us_data.naics_code[contains]=4451")).toEqual(["mercado"])
    })

    it("filters on emails and tax ids", async () => {
      expect(await customerKeys("emails=contato@saojorge.example")).toEqual(["padaria"])
      expect(await customerKeys("emails[contains]=SAOJORGE")).toEqual(["padaria"])
      expect(await customerKeys("tax_id_type=CPF")).toEqual(["jose"])
      expect(await customerKeys("tax_id=52998224725")).toEqual(["jose"])
      expect(await customerKeys("type=individual")).toEqual(["jose"])
    })

    it("contains on legal_name ignores accents", async () => {
      expect(await customerKeys("legal_name[contains]=sao")).toEqual(["padaria"])
    })

    it("sorts by legal_name", async () => {
      expect(await customerKeys("sort=legal_name:asc")).toEqual(["jose", "mercado", "padaria"])
      expect(await customerKeys("sort=legal_name:desc")).toEqual(["padaria", "mercado", "jose"])
    })

    it("refuses operators and values that do not fit the customer fields", async () => {
      await badRequest("tax_id[gt]=1", "tax_id[gt]", "/customers")
      await badRequest("city_id=abc", "city_id", "/customers")
      await badRequest("country_code[gt]=BR", "country_code[gt]", "/customers")
      await badRequest("legal_name[is_null]=true", "legal_name[is_null]", "/customers")
    })
  })
})
