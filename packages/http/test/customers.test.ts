import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestHost, type TestHost, type TestTenant } from "../../../test/support/host.js"
import { resourceClient } from "../../../test/support/resource-client.js"
import { storeKinds, testStore } from "../../../test/support/stores.js"

// Catalog ids (packages/core/src/catalogs/data): IBGE codes for Brazilian cities,
// 840 * 100 + FIPS for US states, 100000000 + geonames id for US cities.
const BR = { id: 76, iso2: "BR", iso3: "BRA", name: "Brazil" }
const US = { id: 840, iso2: "US", iso3: "USA", name: "United States" }
const SP = { id: 7635, state_code: "SP", name: "São Paulo" }
const RJ = { id: 7633, state_code: "RJ", name: "Rio de Janeiro" }
const CA = { id: 84006, state_code: "CA", name: "California" }
const SAO_PAULO = { id: 3550308, name: "São Paulo" }
const CAMPINAS = { id: 3509502, name: "Campinas" }
const LOS_ANGELES = { id: 105368361, name: "Los Angeles" }

const ISO_DATETIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const fullCustomer = () => ({
  legal_name: "  Padaria Pão Quente Ltda ",
  trade_name: "Pão Quente",
  tax_id: "11.222.333/0001-81",
  tax_id_type: "CNPJ",
  website: "https://paoquente.example.com",
  address_line1: "Rua Augusta, 1000",
  address_line2: "Loja 2",
  city_id: SAO_PAULO.id,
  postal_code: "01304-001",
  reference_code: `CUS-${randomUUID().slice(0, 8)}`,
  bank_code: "341",
  branch_number: "0001",
  account_number: "12345-6",
  account_type: "checking",
  emails: ["compras@paoquente.example", "fiscal@paoquente.example"],
  phones: ["+55 (11) 3333-4444"],
  tags: ["bakery", "vip"],
  is_blocked: false,
  metadata: { crm_id: 991, segment: "food" },
  br_data: {
    ie: "110.042.490.114",
    ie_exempt: false,
    im: "1234567",
    suframa: "123456789",
    tax_regime: "simples_nacional",
    cnae_primary: "1091-1/02",
    cnae_secondary: ["4721-1/02", "5611201"],
    nire: "35212345678",
    pix_key: "compras@paoquente.example",
    pix_key_type: "email",
    address_number: "1000",
    address_district: "Consolação"
  },
  us_data: {
    w9_on_file: true,
    w9_received_date: "2025-03-01",
    naics_code: "311811",
    sic_code: "5461",
    tax_classification: "c_corporation",
    sales_tax_exempt: true,
    sales_tax_exempt_certificate: "EX-1",
    sales_tax_exempt_expiry: "2027-12-31",
    resale_certificate: "RS-9",
    state_tax_id: "ST-77",
    state_of_incorporation: "DE",
    duns_number: "123456789",
    cage_code: "1ABC2",
    bank_name: "Chase",
    routing_number: "021000021",
    ach_authorized: true,
    ach_authorization_date: "2025-03-02"
  }
})

describe.each(storeKinds)("customers on %s", (kind) => {
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
    "customers",
    () => ({ host, token: tenant.token }),
    () => ({ legal_name: `Customer ${randomUUID().slice(0, 8)}` })
  )
  const refused = async (body: unknown, status: 400 | 422, field: string) => {
    const before = await count()
    const response = await post(body)
    expect(response.status, JSON.stringify(response.body)).toBe(status)
    expect(response.body).toMatchObject({ status_code: status, message: expect.any(String) })
    expect(Object.keys(response.body.details?.fields ?? {})).toContain(field)
    // Every 422 names its kind: geography that does not match, or a tax id its type refuses.
    if (status === 422) expect(response.body.code).toBe(/^tax_id/.test(field) ? "INVALID_TAX_ID" : "GEOGRAPHY_UNRESOLVED")
    expect(await count()).toBe(before)
    return response
  }

  describe("create", () => {
    it("answers 201 with defaults for what was not sent", async () => {
      const response = await post({ legal_name: "Acme" })
      expect(response.status).toBe(201)
      expect(response.body).toMatchObject({
        legal_name: "Acme",
        type: "company",
        tax_id: null,
        tax_id_type: null,
        trade_name: null,
        city: null,
        state: null,
        country: null,
        emails: [],
        phones: [],
        tags: [],
        is_blocked: false,
        metadata: {},
        deleted_at: null
      })
      expect(response.body.created_at).toMatch(ISO_DATETIME)
    })

    it("stores every field and answers the same record on GET", async () => {
      const body = fullCustomer()
      const created = await post(body)
      expect(created.status, JSON.stringify(created.body)).toBe(201)
      const read = await get(created.body.id)
      expect(read.status).toBe(200)
      expect(read.body).toEqual(created.body)
      expect(read.body).toMatchObject({
        type: "company",
        tax_id: "11222333000181",
        tax_id_type: "CNPJ",
        legal_name: "Padaria Pão Quente Ltda",
        trade_name: "Pão Quente",
        website: "https://paoquente.example.com",
        address_line1: "Rua Augusta, 1000",
        address_line2: "Loja 2",
        postal_code: "01304-001",
        reference_code: body.reference_code,
        bank_code: "341",
        branch_number: "0001",
        account_number: "12345-6",
        account_type: "checking",
        emails: ["compras@paoquente.example", "fiscal@paoquente.example"],
        phones: ["+55 (11) 3333-4444"],
        tags: ["bakery", "vip"],
        is_blocked: false,
        metadata: { crm_id: 991, segment: "food" }
      })
    })

    it("answers br_data with customer_id and normalised CNAE codes", async () => {
      const customer = await create(fullCustomer())
      expect((await get(customer.id)).body.br_data).toEqual({
        customer_id: customer.id,
        ie: "110.042.490.114",
        ie_exempt: false,
        im: "1234567",
        suframa: "123456789",
        tax_regime: "simples_nacional",
        cnae_primary: "1091102",
        cnae_secondary: ["4721102", "5611201"],
        nire: "35212345678",
        pix_key: "compras@paoquente.example",
        pix_key_type: "email",
        address_number: "1000",
        address_district: "Consolação"
      })
    })

    it("answers us_data with customer_id", async () => {
      const customer = await create(fullCustomer())
      const { us_data } = (await get(customer.id)).body
      expect(us_data).toEqual({ customer_id: customer.id, ...fullCustomer().us_data })
    })

    it("answers empty blocks with every key null and the customer_id", async () => {
      const customer = await create()
      expect(customer.br_data.customer_id).toBe(customer.id)
      expect(customer.us_data.customer_id).toBe(customer.id)
      expect(customer.br_data.ie).toBeNull()
      expect(customer.br_data.cnae_secondary).toBeNull()
      expect(customer.us_data.routing_number).toBeNull()
      expect(customer.us_data.w9_on_file).toBeNull()
    })
  })

  describe("geography", () => {
    it("fills state and country from city_id alone and embeds them with integer ids", async () => {
      const customer = await create({ city_id: SAO_PAULO.id })
      const read = (await get(customer.id)).body
      expect(read.city).toEqual(SAO_PAULO)
      expect(read.state).toEqual(SP)
      expect(read.country).toEqual(BR)
      expect(Number.isInteger(read.city.id)).toBe(true)
      expect(Number.isInteger(read.state.id)).toBe(true)
      expect(Number.isInteger(read.country.id)).toBe(true)
    })

    it("fills the country from state_id alone", async () => {
      const customer = await create({ state_id: CA.id })
      expect(customer).toMatchObject({ city: null, state: CA, country: US })
    })

    it("takes a consistent city, state and country sent together", async () => {
      const customer = await create({ city_id: LOS_ANGELES.id, state_id: CA.id, country_id: US.id })
      expect(customer).toMatchObject({ city: LOS_ANGELES, state: CA, country: US })
    })

    it("takes a country alone", async () => {
      const customer = await create({ country_id: US.id })
      expect(customer).toMatchObject({ city: null, state: null, country: US })
    })

    it("refuses a Brazilian city with a US state with 422 on city_id", async () => {
      const response = await refused({ legal_name: "x", city_id: SAO_PAULO.id, state_id: CA.id }, 422, "city_id")
      expect(response.body.error).toBe("Unprocessable Entity")
    })

    it("refuses a state outside the country sent with 422 on state_id", () =>
      refused({ legal_name: "x", state_id: SP.id, country_id: US.id }, 422, "state_id"))

    it("refuses a city in another country than the one sent", async () => {
      const response = await post({ legal_name: "x", city_id: SAO_PAULO.id, country_id: US.id })
      expect(response.status).toBe(422)
      expect(Object.keys(response.body.details.fields).length).toBeGreaterThan(0)
    })

    it("refuses a city id that does not exist with 422 on city_id", () =>
      refused({ legal_name: "x", city_id: 999999999 }, 422, "city_id"))

    it("refuses a state id that does not exist with 422 on state_id", () =>
      refused({ legal_name: "x", state_id: 99 }, 422, "state_id"))

    it("refuses a country id that does not exist with 422 on country_id", () =>
      refused({ legal_name: "x", country_id: 9999 }, 422, "country_id"))

    it("refuses a city_id sent as a string with 400", () => refused({ legal_name: "x", city_id: "3550308" }, 400, "city_id"))

    it("refuses a city_id of zero with 400", () => refused({ legal_name: "x", city_id: 0 }, 400, "city_id"))

    it("moves state and country with a new city on PATCH", async () => {
      const customer = await create({ city_id: SAO_PAULO.id })
      const response = await patch(customer.id, { city_id: LOS_ANGELES.id })
      expect(response.status, JSON.stringify(response.body)).toBe(200)
      expect((await get(customer.id)).body).toMatchObject({ city: LOS_ANGELES, state: CA, country: US })
    })

    it("keeps state and country when the new city is in the same state", async () => {
      const customer = await create({ city_id: SAO_PAULO.id })
      await patch(customer.id, { city_id: CAMPINAS.id })
      expect((await get(customer.id)).body).toMatchObject({ city: CAMPINAS, state: SP, country: BR })
    })

    it("refuses a new state that does not hold the stored city and keeps the record", async () => {
      const customer = await create({ city_id: SAO_PAULO.id })
      const response = await patch(customer.id, { state_id: RJ.id })
      expect(response.status).toBe(422)
      expect(Object.keys(response.body.details.fields).length).toBeGreaterThan(0)
      expect((await get(customer.id)).body).toMatchObject({ city: SAO_PAULO, state: SP, country: BR })
    })

    it("keeps state and country when only the city is cleared", async () => {
      const customer = await create({ city_id: SAO_PAULO.id })
      const response = await patch(customer.id, { city_id: null })
      expect(response.status).toBe(200)
      expect(response.body).toMatchObject({ city: null, state: SP, country: BR })
      const noState = await patch(customer.id, { state_id: null })
      expect(noState.body).toMatchObject({ city: null, state: null, country: BR })
    })

    it("moves city and state together on PATCH", async () => {
      const customer = await create({ city_id: SAO_PAULO.id })
      await patch(customer.id, { state_id: CA.id, city_id: LOS_ANGELES.id })
      expect((await get(customer.id)).body).toMatchObject({ city: LOS_ANGELES, state: CA, country: US })
    })

    it("refuses an unknown city on PATCH and keeps the stored geography", async () => {
      const customer = await create({ city_id: SAO_PAULO.id })
      const response = await patch(customer.id, { city_id: 123 })
      expect(response.status).toBe(422)
      expect(response.body.details.fields).toHaveProperty("city_id")
      expect((await get(customer.id)).body.city).toEqual(SAO_PAULO)
    })

    it("keeps geography on a PATCH that does not touch it", async () => {
      const customer = await create({ city_id: SAO_PAULO.id })
      await patch(customer.id, { trade_name: "New name" })
      expect((await get(customer.id)).body).toMatchObject({ city: SAO_PAULO, state: SP, country: BR, trade_name: "New name" })
    })
  })

  describe("geography by text (422 case 1)", () => {
    it.each([
      ["ISO2", "br"],
      ["ISO3", "BRA"],
      ["numeric code", "76"],
      ["English name", "brazil"],
      ["Portuguese name", "Brasil"],
      ["Spanish name", "BRASIL"]
    ])("matches a country by %s", async (_, code) => {
      const customer = await create({ country_code: code })
      expect(customer.country).toEqual(BR)
    })

    it("matches a state by code or by name within the country, accent-insensitively", async () => {
      expect((await create({ country_code: "BR", state: "sp" })).state).toEqual(SP)
      expect((await create({ country_code: "BR", state: "sao paulo" })).state).toEqual(SP)
      expect((await create({ country_code: "US", state: "california" })).state).toEqual(CA)
    })

    it("matches a city by name within the state and fills the hierarchy", async () => {
      const customer = await create({ country_code: "Brasil", state: "SP", city: "SAO PAULO" })
      expect(customer).toMatchObject({ city: SAO_PAULO, state: SP, country: BR })
      const byState = await create({ state_id: SP.id, city: "campinas" })
      expect(byState).toMatchObject({ city: CAMPINAS, state: SP, country: BR })
    })

    it("refuses an ambiguous state code without a country, naming the field and the candidates", async () => {
      const response = await refused({ legal_name: "x", state: "PA" }, 422, "state")
      expect(response.body.details.fields.state.join(" ")).toMatch(/PA in BR.*PA in US|PA in US.*PA in BR/)
      const resolved = await create({ country_code: "US", state: "PA" })
      expect(resolved.state).toMatchObject({ state_code: "PA", name: "Pennsylvania" })
    })

    it("refuses what matches nothing, each field named, and stores nothing", async () => {
      const response = await refused({ legal_name: "x", country_code: "Atlantis", state: "Nowhere", city: "Gotham" }, 422, "country_code")
      expect(Object.keys(response.body.details.fields)).toEqual(expect.arrayContaining(["country_code", "state", "city"]))
      expect(response.body.message).toContain("geography")
    })

    it("refuses a city that is not in the state sent", async () => {
      const response = await refused({ legal_name: "x", state: "RJ", country_code: "BR", city: "Campinas" }, 422, "city")
      expect(response.body.details.fields.city.join(" ")).toContain("no city")
    })

    it("refuses text that contradicts the id sent beside it", async () => {
      await refused({ legal_name: "x", country_id: US.id, country_code: "BR" }, 422, "country_code")
      await refused({ legal_name: "x", state_id: RJ.id, state: "SP" }, 422, "state")
    })

    it("matches a city sent alone on PATCH within the stored state", async () => {
      const customer = await create({ city_id: SAO_PAULO.id })
      const response = await patch(customer.id, { city: "Campinas" })
      expect(response.status, JSON.stringify(response.body)).toBe(200)
      expect(response.body).toMatchObject({ city: CAMPINAS, state: SP, country: BR })
    })
  })

  describe("tax ids", () => {
    it("stores a valid CPF as digits and infers an individual", async () => {
      const customer = await create({ tax_id: "529.982.247-25", tax_id_type: "CPF" })
      const read = (await get(customer.id)).body
      expect(read).toMatchObject({ tax_id: "52998224725", tax_id_type: "CPF", type: "individual" })
    })

    it("stores a valid CNPJ as digits and infers a company", async () => {
      const customer = await create({ tax_id: "11.222.333/0001-81", tax_id_type: "CNPJ" })
      expect((await get(customer.id)).body).toMatchObject({ tax_id: "11222333000181", tax_id_type: "CNPJ", type: "company" })
    })

    it("keeps an explicit type over the inferred one", async () => {
      const customer = await create({ tax_id: "52998224725", tax_id_type: "CPF", type: "company" })
      expect(customer.type).toBe("company")
    })

    it("refuses a CPF with wrong check digits with 422 on tax_id", async () => {
      const response = await refused({ legal_name: "x", tax_id: "529.982.247-24", tax_id_type: "CPF" }, 422, "tax_id")
      expect(response.body.details.fields.tax_id.join(" ")).toContain("CPF")
    })

    it("refuses a CPF of repeated digits", () => refused({ legal_name: "x", tax_id: "111.111.111-11", tax_id_type: "CPF" }, 422, "tax_id"))

    it("refuses a CPF of the wrong length", () => refused({ legal_name: "x", tax_id: "5299822472", tax_id_type: "CPF" }, 422, "tax_id"))

    it("refuses a CNPJ with wrong check digits", () => refused({ legal_name: "x", tax_id: "11.222.333/0001-82", tax_id_type: "CNPJ" }, 422, "tax_id"))

    it("stores a US EIN as nine digits", async () => {
      const customer = await create({ tax_id: "12-3456789", tax_id_type: "EIN" })
      expect(customer).toMatchObject({ tax_id: "123456789", type: "company" })
    })

    it("infers an individual for an SSN", async () => {
      const customer = await create({ tax_id: "123-45-6789", tax_id_type: "SSN" })
      expect(customer).toMatchObject({ tax_id: "123456789", type: "individual" })
    })

    it("refuses an unknown tax_id_type with 400", () => refused({ legal_name: "x", tax_id: "1", tax_id_type: "RG" }, 400, "tax_id_type"))

    it("recognises a valid CPF or CNPJ sent without tax_id_type", async () => {
      const person = await create({ tax_id: "529.982.247-25" })
      expect(person).toMatchObject({ tax_id: "52998224725", tax_id_type: "CPF", type: "individual" })
      const company = await create({ tax_id: "11.222.333/0001-81" })
      expect(company).toMatchObject({ tax_id: "11222333000181", tax_id_type: "CNPJ", type: "company" })
      const other = await create({ tax_id: "AB-123" })
      expect(other).toMatchObject({ tax_id: "AB-123", tax_id_type: null, type: "company" })
    })

    it("rechecks the stored tax_id when only tax_id_type changes", async () => {
      const customer = await create({ tax_id: "52998224725", tax_id_type: "CPF" })
      const refusedChange = await patch(customer.id, { tax_id_type: "CNPJ" })
      expect(refusedChange.status).toBe(422)
      expect(refusedChange.body.details.fields).toHaveProperty("tax_id_type")
      expect((await get(customer.id)).body).toMatchObject({ tax_id_type: "CPF", type: "individual" })
      const toCnpj = await patch(customer.id, { tax_id_type: "CNPJ", tax_id: "11.222.333/0001-81" })
      expect(toCnpj.status).toBe(200)
      expect(toCnpj.body).toMatchObject({ tax_id: "11222333000181", tax_id_type: "CNPJ", type: "company" })
    })

    it("validates a new tax_id on PATCH against the stored tax_id_type", async () => {
      const customer = await create({ tax_id: "52998224725", tax_id_type: "CPF" })
      const response = await patch(customer.id, { tax_id: "529.982.247-24" })
      expect(response.status).toBe(422)
      expect(response.body.details.fields).toHaveProperty("tax_id")
      expect((await get(customer.id)).body.tax_id).toBe("52998224725")
      const ok = await patch(customer.id, { tax_id: "111.444.777-35" })
      expect(ok.status).toBe(200)
      expect(ok.body.tax_id).toBe("11144477735")
    })
  })

  describe("lists in the body", () => {
    it("refuses a bad email with 400 naming the item", () => refused({ legal_name: "x", emails: ["ok@example.com", "not-an-email"] }, 400, "emails.1"))

    it("refuses emails that are not an array", () => refused({ legal_name: "x", emails: "a@example.com" }, 400, "emails"))

    it("refuses a bad phone with 400", () => refused({ legal_name: "x", phones: ["call me"] }, 400, "phones.0"))

    it("refuses an empty tag with 400", () => refused({ legal_name: "x", tags: [""] }, 400, "tags.0"))

    it("refuses more than 20 emails", () =>
      refused({ legal_name: "x", emails: Array.from({ length: 21 }, (_, index) => `u${index}@example.com`) }, 400, "emails"))

    it("trims emails and phones", async () => {
      const customer = await create({ emails: [" a@example.com "], phones: [" +1 212 555 0100 "] })
      expect(customer.emails).toEqual(["a@example.com"])
      expect(customer.phones).toEqual(["+1 212 555 0100"])
    })
  })

  describe("invalid bodies", () => {
    it("refuses a missing legal_name", async () => {
      const response = await refused({ trade_name: "x" }, 400, "legal_name")
      expect(response.body.details.fields.legal_name).toEqual(["is required"])
    })

    it("refuses an empty legal_name", () => refused({ legal_name: " " }, 400, "legal_name"))

    it("refuses an unknown field", () => refused({ legal_name: "x", county_code: "BR" }, 400, "county_code"))

    it("refuses an unknown type", () => refused({ legal_name: "x", type: "government" }, 400, "type"))

    it("refuses a bad website", () => refused({ legal_name: "x", website: "paoquente" }, 400, "website"))

    it("refuses an unknown account_type", () => refused({ legal_name: "x", account_type: "crypto" }, 400, "account_type"))

    it("refuses an unknown br_data.tax_regime", () => refused({ legal_name: "x", br_data: { tax_regime: "lucro_imaginario" } }, 400, "br_data.tax_regime"))

    it("refuses a CNAE that is not 7 digits in cnae_secondary", () =>
      refused({ legal_name: "x", br_data: { cnae_secondary: ["4721102", "123"] } }, 400, "br_data.cnae_secondary.1"))

    it("refuses cnae_secondary that is not an array", () => refused({ legal_name: "x", br_data: { cnae_secondary: "4721102" } }, 400, "br_data.cnae_secondary"))

    it("refuses a routing number that is not 9 digits", () => refused({ legal_name: "x", us_data: { routing_number: "12345" } }, 400, "us_data.routing_number"))

    it("refuses a NAICS code with letters", () => refused({ legal_name: "x", us_data: { naics_code: "54A" } }, 400, "us_data.naics_code"))

    it("refuses w9_on_file that is not a boolean", () => refused({ legal_name: "x", us_data: { w9_on_file: "yes" } }, 400, "us_data.w9_on_file"))

    it("refuses a date that is not YYYY-MM-DD in us_data", () => refused({ legal_name: "x", us_data: { w9_received_date: "03/01/2025" } }, 400, "us_data.w9_received_date"))

    it("refuses an impossible calendar date in us_data", () =>
      refused({ legal_name: "x", us_data: { w9_received_date: "2025-02-30" } }, 400, "us_data.w9_received_date"))
  })

  describe("update", () => {
    it("changes only the fields sent", async () => {
      const customer = await create(fullCustomer())
      const response = await patch(customer.id, { trade_name: "Pão Quentinho", is_blocked: true })
      expect(response.status).toBe(200)
      const read = (await get(customer.id)).body
      expect(read).toEqual(response.body)
      const { trade_name: _a, is_blocked: _b, updated_at: _c, ...before } = customer
      const { trade_name: _d, is_blocked: _e, updated_at: _f, ...after } = read
      expect(after).toEqual(before)
      expect(read).toMatchObject({ trade_name: "Pão Quentinho", is_blocked: true })
    })

    it("clears fields sent as null", async () => {
      const customer = await create(fullCustomer())
      await patch(customer.id, { trade_name: null, website: null, tax_id: null, account_type: null })
      expect((await get(customer.id)).body).toMatchObject({ trade_name: null, website: null, tax_id: null, account_type: null })
    })

    it("merges metadata key by key; null removes a key", async () => {
      const customer = await create({ metadata: { a: 1, b: 2 } })
      await patch(customer.id, { metadata: { a: null, c: 3 } })
      expect((await get(customer.id)).body.metadata).toEqual({ b: 2, c: 3 })
    })

    it("merges br_data key by key; null removes a key", async () => {
      const customer = await create(fullCustomer())
      await patch(customer.id, { br_data: { ie: null, tax_regime: "lucro_real", cnae_secondary: ["6201501"] } })
      const { br_data } = (await get(customer.id)).body
      expect(br_data).toMatchObject({
        customer_id: customer.id,
        ie: null,
        tax_regime: "lucro_real",
        cnae_secondary: ["6201501"],
        im: "1234567",
        pix_key_type: "email",
        address_district: "Consolação"
      })
    })

    it("merges us_data key by key", async () => {
      const customer = await create(fullCustomer())
      await patch(customer.id, { us_data: { w9_on_file: false, routing_number: null } })
      expect((await get(customer.id)).body.us_data).toMatchObject({
        customer_id: customer.id,
        w9_on_file: false,
        routing_number: null,
        naics_code: "311811",
        duns_number: "123456789"
      })
    })

    it("replaces emails as a whole", async () => {
      const customer = await create({ emails: ["a@example.com", "b@example.com"] })
      await patch(customer.id, { emails: ["c@example.com"] })
      expect((await get(customer.id)).body.emails).toEqual(["c@example.com"])
    })

    it("moves updated_at and keeps created_at", async () => {
      const customer = await create()
      await sleep(20)
      const response = await patch(customer.id, { trade_name: "later" })
      expect(response.body.created_at).toBe(customer.created_at)
      expect(Date.parse(response.body.updated_at)).toBeGreaterThan(Date.parse(customer.updated_at))
    })

    it("refuses an invalid PATCH body with 400 and keeps the record", async () => {
      const customer = await create({ emails: ["a@example.com"] })
      const response = await patch(customer.id, { emails: ["nope"], legal_name: "" })
      expect(response.status).toBe(400)
      expect(Object.keys(response.body.details.fields)).toEqual(expect.arrayContaining(["emails.0", "legal_name"]))
      expect((await get(customer.id)).body).toMatchObject({ emails: ["a@example.com"], legal_name: customer.legal_name })
    })

    it("answers 404 CUSTOMER_NOT_FOUND for an unknown id", async () => {
      const response = await patch(randomUUID(), { trade_name: "x" })
      expect(response.status).toBe(404)
      expect(response.body).toMatchObject({ status_code: 404, error: "Not Found", code: "CUSTOMER_NOT_FOUND" })
    })
  })

  describe("soft delete", () => {
    it("answers DELETE with 204 and an empty body, then GET with 404", async () => {
      const customer = await create()
      const removed = await remove(customer.id)
      expect(removed.status).toBe(204)
      expect(removed.body).toBeUndefined()
      const read = await get(customer.id)
      expect(read.status).toBe(404)
      expect(read.body.code).toBe("CUSTOMER_NOT_FOUND")
    })

    it("returns the deleted customer with with_deleted=true", async () => {
      const customer = await create({ city_id: SAO_PAULO.id })
      await remove(customer.id)
      const read = await get(customer.id, "?with_deleted=true")
      expect(read.status).toBe(200)
      expect(read.body.deleted_at).toMatch(ISO_DATETIME)
      expect(read.body.city).toEqual(SAO_PAULO)
    })

    it("leaves deleted customers out of lists unless with_deleted=true", async () => {
      const customer = await create()
      await remove(customer.id)
      expect((await list(`&id=${customer.id}`)).body.data).toEqual([])
      const withDeleted = (await list(`&id=${customer.id}&with_deleted=true`)).body.data
      expect(withDeleted).toHaveLength(1)
      expect(withDeleted[0].deleted_at).toMatch(ISO_DATETIME)
    })

    it("answers a second DELETE and a PATCH of the deleted customer with 404", async () => {
      const customer = await create({ trade_name: "before" })
      await remove(customer.id)
      expect((await remove(customer.id)).status).toBe(404)
      const changed = await patch(customer.id, { trade_name: "after" })
      expect(changed.status).toBe(404)
      expect(changed.body.code).toBe("CUSTOMER_NOT_FOUND")
      expect((await get(customer.id, "?with_deleted=true")).body.trade_name).toBe("before")
    })

    it("frees the reference_code of a deleted customer", async () => {
      const code = `REF-${randomUUID().slice(0, 8)}`
      const first = await create({ reference_code: code })
      expect((await post({ legal_name: "dup", reference_code: code })).status).toBe(409)
      await remove(first.id)
      expect((await post({ legal_name: "dup", reference_code: code })).status).toBe(201)
    })
  })

  describe("tenant isolation", () => {
    it("answers 404 CUSTOMER_NOT_FOUND to another tenant's GET, PATCH and DELETE", async () => {
      const customer = await create({ trade_name: "mine" })
      for (const response of [
        await get(customer.id, "", other.token),
        await get(customer.id, "?with_deleted=true", other.token),
        await patch(customer.id, { trade_name: "theirs" }, other.token),
        await remove(customer.id, other.token)
      ]) {
        expect(response.status).toBe(404)
        expect(response.body).toMatchObject({ status_code: 404, code: "CUSTOMER_NOT_FOUND" })
      }
      expect((await get(customer.id)).body).toMatchObject({ trade_name: "mine", deleted_at: null })
    })

    it("never lists another tenant's customers", async () => {
      const customer = await create({ legal_name: "Zebulon Private Ltda" })
      expect((await list("&with_deleted=true", other.token)).body.data.map((row: { id: string }) => row.id)).not.toContain(customer.id)
      expect((await list("&search=zebulon", other.token)).body.data).toEqual([])
      expect((await list("&search=zebulon")).body.data.map((row: { id: string }) => row.id)).toEqual([customer.id])
    })
  })
})
