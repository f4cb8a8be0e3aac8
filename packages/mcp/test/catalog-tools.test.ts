import { allResources, isTenantOwned, parsePermissionSpecs } from "@erp/core"
import { Result } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestHost, type TestHost, type TestTenant } from "../../../test/support/host.js"
import { storeKinds, testStore } from "../../../test/support/stores.js"
import { connectClient, keyPrincipal, type TestClient } from "./support.js"

const grants = (...specs: Array<string>) => Result.getOrThrow(parsePermissionSpecs(specs))
const catalogResources = allResources.filter((resource) => !isTenantOwned(resource))

const BANK = {
  bancoDoBrasil: "2c64446e-8915-5c0c-b51a-7a3ff87e75d4",
  itau: "3fe12489-cf24-5c1f-8431-20e79d761713",
  chase: "d5084b3b-22da-5387-829a-a231601fa6b9"
}
const PIX = "d4d3e857-f3ba-56a6-b870-3fff0f4b531c"
const LBR = "27ee6195-bcb1-5f57-b09d-a5f1603cdc4d"
const SAO_PAULO_STATE = 7635
const SAO_PAULO_CITY = 3550308

/** The tools the six catalogs should offer: lists, gets, their lookups and the two search routes; no writes. */
const CATALOG_TOOLS = [
  "list_banks", "get_bank", "get_bank_by_code", "get_bank_by_swift",
  "list_payment_methods", "get_payment_method", "get_payment_method_by_code",
  "list_units_of_measurement", "get_unit_of_measurement", "get_unit_of_measurement_by_code",
  "list_countries", "get_country", "get_country_by_iso2", "get_country_by_iso3",
  "list_states", "search_states", "get_state", "get_state_by_code",
  "list_cities", "search_cities", "get_city"
]

type Row = Record<string, any>

describe.each(storeKinds)("MCP catalog tools on %s", (kind) => {
  let host: TestHost
  let brTenant: TestTenant
  let usTenant: TestTenant
  let br: TestClient
  let us: TestClient
  const clients: Array<TestClient> = []

  const connect = async (token: string) => {
    const client = await connectClient(host.runtime, keyPrincipal(token))
    clients.push(client)
    return client
  }

  beforeAll(async () => {
    host = await startTestHost(testStore(kind))
    brTenant = await host.createTenant("BR")
    usTenant = await host.createTenant("US")
    br = await connect(brTenant.token)
    us = await connect(usTenant.token)
  })
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close()))
    await host?.close()
  })

  const http = async (path: string, tenant: TestTenant = brTenant) => host.request("GET", path, { token: tenant.token })
  const codesOf = (records: ReadonlyArray<Row>) => records.map((record) => record.code as string).sort()

  describe("tools/list", () => {
    it("offers every catalog tool", async () => {
      const names = (await br.client.listTools()).tools.map((tool) => tool.name)
      expect(names).toEqual(expect.arrayContaining(CATALOG_TOOLS))
    })

    it("offers no create, update, delete or undeclared search tool for a catalog", async () => {
      const names = new Set((await br.client.listTools()).tools.map((tool) => tool.name))
      expect(catalogResources).toHaveLength(6)
      for (const resource of catalogResources) {
        const singular = resource.singular.replace(/-/g, "_")
        for (const verb of ["create", "update", "delete"]) expect(names.has(`${verb}_${singular}`), `${verb}_${singular}`).toBe(false)
      }
      for (const name of ["search_banks", "search_countries", "search_payment_methods", "search_units_of_measurement"]) {
        expect(names.has(name), name).toBe(false)
      }
    })

    it("marks every catalog tool read-only", async () => {
      const { tools } = await br.client.listTools()
      for (const tool of tools.filter((candidate) => CATALOG_TOOLS.includes(candidate.name))) {
        expect(tool.annotations?.readOnlyHint, tool.name).toBe(true)
      }
    })

    it("asks for the lookup value and for q on search tools", async () => {
      const byName = new Map((await br.client.listTools()).tools.map((tool) => [tool.name, tool]))
      expect(byName.get("get_bank_by_swift")!.inputSchema.required).toEqual(["code"])
      expect(byName.get("get_country_by_iso2")!.inputSchema.required).toEqual(["code"])
      expect(byName.get("get_state_by_code")!.inputSchema.required).toEqual(["state_code"])
      expect(byName.get("search_cities")!.inputSchema.required).toContain("q")
      expect(byName.get("search_states")!.inputSchema.required).toContain("q")
      expect(byName.get("get_city")!.inputSchema.required).toEqual(["id"])
      expect(byName.get("search_cities")!.description).toContain("state_id")
      // Top-level, as REST takes it (GET /cities/search?state_id=…&q=…).
      expect(byName.get("search_cities")!.inputSchema.required).toEqual(expect.arrayContaining(["q", "state_id"]))
      expect(byName.get("search_cities")!.inputSchema.properties).toHaveProperty("state_id")
      expect(byName.get("list_cities")!.inputSchema.required).toEqual(["state_id"])
    })
  })

  describe("banks", () => {
    it("lists a BR tenant's banks in display order, Banco do Brasil first", async () => {
      const page = await br.ok("list_banks", { limit: 3 })
      expect(page.data.map((bank: Row) => bank.name)).toEqual(["Banco do Brasil", "Itaú", "Bradesco"])
      expect(page.meta.sort).toEqual({ field: "display_order", order: "asc" })
    })

    it("lists only US banks to a US tenant", async () => {
      const page = await us.ok("list_banks", { limit: 100 })
      expect(page.data.map((bank: Row) => bank.name)).toEqual(["Chase", "Bank of America", "Wells Fargo", "Citibank", "U.S. Bank", "PNC Bank"])
    })

    it("finds a bank by SWIFT in any country, 11-character XXX included", async () => {
      expect((await us.ok("get_bank_by_swift", { code: "itaubrsp" })).id).toBe(BANK.itau)
      expect((await us.ok("get_bank_by_swift", { code: "BRASBRRJXXX" })).id).toBe(BANK.bancoDoBrasil)
      expect((await br.ok("get_bank_by_swift", { code: "CHASUS33" })).id).toBe(BANK.chase)
      expect(await br.refused("get_bank_by_swift", { code: "ZZZZZZZZ" }, 404)).toMatchObject({ code: "BANK_NOT_FOUND" })
    })

    it("finds a bank by code in the tenant's country only", async () => {
      expect((await br.ok("get_bank_by_code", { code: "341" })).id).toBe(BANK.itau)
      expect(await us.refused("get_bank_by_code", { code: "341" }, 404)).toMatchObject({ code: "BANK_NOT_FOUND" })
    })

    // Gap: HTTP takes ?country_code=BR on /banks/code/{code}; the lookup tool takes only `code`.
    it("finds another country's bank code when country_code is given, as HTTP does", async () => {
      expect((await us.ok("get_bank_by_code", { code: "341", country_code: "BR" })).id).toBe(BANK.itau)
    })

    it("finds a bank by id in any country, and 400s an id that is not a UUID", async () => {
      expect((await br.ok("get_bank", { id: BANK.chase })).name).toBe("Chase")
      expect(await br.refused("get_bank", { id: "341" }, 400)).toMatchObject({ code: "INVALID_ID" })
    })
  })

  describe("payment methods and units", () => {
    it("lists the payment methods of the tenant's country plus universal ones", async () => {
      const brCodes = codesOf((await br.ok("list_payment_methods", { limit: 100 })).data)
      const usCodes = codesOf((await us.ok("list_payment_methods", { limit: 100 })).data)
      expect(brCodes).toEqual(expect.arrayContaining(["pix", "boleto", "cash", "check"]))
      expect(brCodes).not.toContain("ach")
      expect(usCodes).toEqual(expect.arrayContaining(["ach", "wire_transfer", "cash", "check"]))
      expect(usCodes).not.toContain("pix")
    })

    it("hides pix from a US tenant by code and by id", async () => {
      expect(await us.refused("get_payment_method_by_code", { code: "pix" }, 404)).toMatchObject({ code: "PAYMENT_METHOD_NOT_FOUND" })
      expect(await us.refused("get_payment_method", { id: PIX }, 404)).toMatchObject({ code: "PAYMENT_METHOD_NOT_FOUND" })
      expect((await br.ok("get_payment_method", { id: PIX })).code).toBe("pix")
    })

    it("hides the pound from a BR tenant and shows it to a US tenant", async () => {
      expect(codesOf((await br.ok("list_units_of_measurement", { limit: 100 })).data)).not.toContain("LBR")
      expect(codesOf((await us.ok("list_units_of_measurement", { limit: 100 })).data)).toContain("LBR")
      expect(await br.refused("get_unit_of_measurement_by_code", { code: "lbr" }, 404)).toMatchObject({ code: "UNIT_OF_MEASUREMENT_NOT_FOUND" })
      expect(await br.refused("get_unit_of_measurement", { id: LBR }, 404)).toMatchObject({ code: "UNIT_OF_MEASUREMENT_NOT_FOUND" })
      expect((await us.ok("get_unit_of_measurement_by_code", { code: "lbr" })).id).toBe(LBR)
    })

    it("filters units by fiscal_codes.br_nfe and by title operators", async () => {
      expect(codesOf((await br.ok("list_units_of_measurement", { filters: { "fiscal_codes.br_nfe": "KG" } })).data)).toEqual(["KGM"])
      const metres = await br.ok("list_units_of_measurement", { filters: { title_pt: { contains: "metro" } }, limit: 100 })
      expect(codesOf(metres.data)).toEqual(["CMT", "KMT", "MMT", "MTK", "MTQ", "MTR"])
      expect(await br.refused("list_units_of_measurement", { filters: { colour: "red" } }, 400)).toMatchObject({ code: "INVALID_FILTER" })
    })
  })

  describe("countries", () => {
    it("finds countries by ISO2 and ISO3, case-insensitively", async () => {
      expect((await br.ok("get_country_by_iso2", { code: "br" })).id).toBe(76)
      expect((await us.ok("get_country_by_iso3", { code: "usa" })).id).toBe(840)
      expect(await br.refused("get_country_by_iso2", { code: "QQ" }, 404)).toMatchObject({ code: "COUNTRY_NOT_FOUND" })
    })

    it("gets a country by integer id, given as a number or a string", async () => {
      expect((await br.ok("get_country", { id: 76 })).iso2).toBe("BR")
      expect((await br.ok("get_country", { id: "840" })).iso2).toBe("US")
      expect(await br.refused("get_country", { id: "abc" }, 400)).toMatchObject({ code: "INVALID_ID" })
    })

    it("searches countries accent-insensitively", async () => {
      const page = await br.ok("list_countries", { search: "alemanha" })
      expect(page.data.map((country: Row) => country.iso2)).toEqual(["DE"])
    })
  })

  describe("states", () => {
    it("lists Brazil's 27 UFs with a country selector", async () => {
      const page = await br.ok("list_states", { filters: { country_iso2: "BR" }, limit: 100 })
      expect(page.data).toHaveLength(27)
      expect((await us.ok("list_states", { filters: { country_iso3: "BRA" }, limit: 100 })).data).toHaveLength(27)
    })

    it("finds PA as Pará for a BR tenant and as Pennsylvania for a US tenant", async () => {
      expect((await br.ok("get_state_by_code", { state_code: "PA" })).name).toBe("Pará")
      expect((await us.ok("get_state_by_code", { state_code: "pa" })).name).toBe("Pennsylvania")
      expect(await us.refused("get_state_by_code", { state_code: "SP" }, 404)).toMatchObject({ code: "STATE_NOT_FOUND" })
    })

    // Gap: HTTP takes ?country_iso2=US on /states/code/{state_code}; the lookup tool takes only `state_code`.
    it("looks in the country a selector names, as HTTP does", async () => {
      expect((await br.ok("get_state_by_code", { state_code: "PA", country_iso2: "US" })).name).toBe("Pennsylvania")
    })

    it("searches states accent- and case-insensitively", async () => {
      const page = await br.ok("search_states", { q: "PARA", filters: { country_iso2: "BR" } })
      expect(page.data.map((state: Row) => state.name).sort()).toEqual(["Paraná", "Paraíba", "Pará"].sort())
    })

    it("refuses search_states without q with 400 naming q", async () => {
      expect((await br.refused("search_states", {}, 400)).details.fields).toHaveProperty("q")
    })

    // HTTP answers /states/search?q= with 400; the tool takes "" as no search and lists every state.
    it("refuses search_states with an empty q, as HTTP does", async () => {
      expect((await http("/states/search?q=")).status).toBe(400)
      await br.refused("search_states", { q: "" }, 400)
    })
  })

  describe("cities", () => {
    it("refuses list_cities without state_id with the spec's 400 body", async () => {
      const body = await br.refused("list_cities", {}, 400)
      expect(body).toMatchObject({ error: "Bad Request", code: "MISSING_PARAMETER" })
      expect(body.message).toContain("state_id")
    })

    it("refuses search_cities without state_id with 400 naming it", async () => {
      const body = await br.refused("search_cities", { q: "sao paulo" }, 400)
      expect(body.code).toBe("MISSING_PARAMETER")
      expect(body.message).toContain("state_id")
    })

    it("searches a state's cities without accents", async () => {
      const page = await br.ok("search_cities", { q: "sao paulo", state_id: SAO_PAULO_STATE })
      expect(page.data.map((city: Row) => city.id)).toContain(SAO_PAULO_CITY)
      expect(page.data.every((city: Row) => city.state_id === SAO_PAULO_STATE)).toBe(true)
    })

    it("gets São Paulo by id, and answers 400 and 404 for bad and unknown ids", async () => {
      expect(await us.ok("get_city", { id: SAO_PAULO_CITY })).toMatchObject({ name: "São Paulo", state_code: "SP", country_code: "BR" })
      expect(await br.refused("get_city", { id: "abc" }, 400)).toMatchObject({ code: "INVALID_ID" })
      expect(await br.refused("get_city", { id: 1 }, 404)).toMatchObject({ code: "CITY_NOT_FOUND" })
    })

    it("walks São Paulo's 645 municipalities with next_cursor, each once", async () => {
      const ids: Array<number> = []
      let cursor: string | undefined
      let pages = 0
      do {
        const page = await br.ok("list_cities", { state_id: SAO_PAULO_STATE, limit: 100, ...(cursor ? { cursor } : {}) })
        ids.push(...page.data.map((city: Row) => city.id as number))
        cursor = page.pagination.has_next_page ? page.pagination.next_cursor : undefined
        pages++
      } while (cursor)
      expect(pages).toBe(7)
      expect(ids).toHaveLength(645)
      expect(new Set(ids).size).toBe(645)
    })
  })

  describe("answers like HTTP", () => {
    it.each([
      ["list_banks", { limit: 5 }, "/banks?limit=5"],
      ["get_bank_by_swift", { code: "brasbrrjxxx" }, "/banks/swift/brasbrrjxxx"],
      ["get_bank_by_code", { code: "341" }, "/banks/code/341"],
      ["list_payment_methods", { limit: 100 }, "/payment-methods?limit=100"],
      ["get_unit_of_measurement_by_code", { code: "KGM" }, "/units-of-measurement/code/KGM"],
      ["list_units_of_measurement", { filters: { "display_order[lte]": 3 } }, "/units-of-measurement?display_order[lte]=3"],
      ["get_country_by_iso3", { code: "bra" }, "/countries/iso3/bra"],
      ["get_country", { id: 840 }, "/countries/840"],
      ["list_states", { filters: { country_id: 76 }, limit: 7 }, "/states?country_id=76&limit=7"],
      ["search_states", { q: "sao" }, "/states/search?q=sao"],
      ["get_state_by_code", { state_code: "PA" }, "/states/code/PA"],
      ["list_cities", { state_id: SAO_PAULO_STATE, limit: 10 }, `/cities?state_id=${SAO_PAULO_STATE}&limit=10`],
      ["search_cities", { q: "sao paulo", state_id: SAO_PAULO_STATE }, `/cities/search?state_id=${SAO_PAULO_STATE}&q=sao%20paulo`],
      ["search_cities", { q: "sao paulo", state_id: String(SAO_PAULO_STATE), limit: 3 }, `/cities/search?state_id=${SAO_PAULO_STATE}&q=sao%20paulo&limit=3`],
      ["get_city", { id: SAO_PAULO_CITY }, `/cities/${SAO_PAULO_CITY}`]
    ] as const)("%s %j matches GET %s", async (tool, args, path) => {
      const response = await http(path)
      expect(response.status).toBe(200)
      expect(await br.ok(tool, { ...args })).toEqual(response.body)
    })

    it.each([
      ["list_cities", {}, "/cities"],
      ["get_city", { id: 1 }, "/cities/1"],
      ["get_payment_method_by_code", { code: "pix" }, "/payment-methods/code/pix"],
      ["get_state_by_code", { state_code: "SP" }, "/states/code/SP"]
    ] as const)("refuses %s %j with the body of GET %s for a US tenant", async (tool, args, path) => {
      const response = await http(path, usTenant)
      expect(response.status).toBeGreaterThanOrEqual(400)
      expect(await us.refused(tool, { ...args }, response.status)).toEqual(response.body)
    })
  })

  describe("permissions", () => {
    it("lets a countries:read key list countries and refuses banks with 403", async () => {
      const { token } = await host.createKey(brTenant.id, grants("countries:read"))
      const client = await connect(token)
      expect((await client.ok("list_countries", { limit: 1 })).data).toHaveLength(1)
      expect((await client.ok("get_country_by_iso2", { code: "BR" })).id).toBe(76)
      expect(await client.refused("list_banks", {}, 403)).toMatchObject({ error: "Forbidden", code: "PERMISSION_DENIED" })
      await client.refused("get_bank_by_swift", { code: "ITAUBRSP" }, 403)
      await client.refused("search_cities", { q: "sao", filters: { state_id: SAO_PAULO_STATE } }, 403)
    })
  })
})
