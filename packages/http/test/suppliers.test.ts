import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestHost, type TestHost, type TestTenant } from "../../../test/support/host.js"
import { resourceClient } from "../../../test/support/resource-client.js"
import { storeKinds, testStore } from "../../../test/support/stores.js"

const SAO_PAULO = { id: 3550308, name: "São Paulo" }
const SP = { id: 7635, state_code: "SP", name: "São Paulo" }
// 04.252.011/0001-10: a CNPJ with valid check digits.
const CNPJ = "04.252.011/0001-10"

/**
 * Suppliers share the party rules of customers (tested in full there); these
 * tests cover what differs: the country as an ISO2 string, the supplier_id in the
 * blocks, the tax-id lookup, and filters on every scalar field.
 */
describe.each(storeKinds)("suppliers on %s", (kind) => {
  let host: TestHost
  let tenant: TestTenant
  let other: TestTenant
  const suppliers = resourceClient("suppliers", () => ({ host, token: tenant.token }), () => ({ legal_name: `Supplier ${randomUUID().slice(0, 6)}` }))

  beforeAll(async () => {
    host = await startTestHost(testStore(kind))
    tenant = await host.createTenant("BR")
    other = await host.createTenant("BR")
  })
  afterAll(() => host?.close())

  it("answers the country as its ISO2 code, the geography from the city, and supplier_id in both blocks", async () => {
    const created = await suppliers.create({
      tax_id: CNPJ,
      city_id: SAO_PAULO.id,
      address_line1: "Rua da Mooca, 10",
      br_data: { ie: "110.042.490.114", tax_regime: "lucro_presumido" },
      us_data: { naics_code: "311920" }
    })
    expect(created).toMatchObject({
      tax_id: "04252011000110",
      tax_id_type: "CNPJ",
      type: "company",
      city: SAO_PAULO,
      state: SP,
      country_code: "BR",
      deleted_at: null
    })
    expect(created).not.toHaveProperty("country")
    expect(created).not.toHaveProperty("city_id")
    expect(created.br_data).toMatchObject({ supplier_id: created.id, ie: "110.042.490.114", tax_regime: "lucro_presumido", cnae_primary: null })
    expect(created.us_data).toMatchObject({ supplier_id: created.id, naics_code: "311920", w9_on_file: null })
    expect((await suppliers.get(created.id)).body).toEqual(created)
  })

  it("matches country_code text by ISO2, ISO3 or name and refuses what matches nothing with 422 naming it", async () => {
    expect((await suppliers.create({ country_code: "Estados Unidos" })).country_code).toBe("US")
    expect((await suppliers.create({ country_code: "bra" })).country_code).toBe("BR")
    const refused = await suppliers.post({ legal_name: "Nowhere Ltd", country_code: "Narnia", city: "Springfield" })
    expect(refused.status).toBe(422)
    expect(refused.body).toMatchObject({ status_code: 422, code: "GEOGRAPHY_UNRESOLVED" })
    expect(refused.body.details.fields.country_code).toEqual([expect.stringContaining("matches no country")])
    const cleared = await suppliers.create({ country_code: "BR" })
    expect((await suppliers.patch(cleared.id, { country_code: null })).body.country_code).toBeNull()
  })

  it("finds a supplier by tax id, formatted or as digits; 404 SUPPLIER_NOT_FOUND otherwise, another tenant's included", async () => {
    const cpf = "529.982.247-25"
    const created = await suppliers.create({ tax_id: cpf })
    for (const form of [cpf, "52998224725"]) {
      const found = await host.request("GET", `/suppliers/tax-id/${encodeURIComponent(form)}`, { token: tenant.token })
      expect(found.status, form).toBe(200)
      expect(found.body.id).toBe(created.id)
    }
    const missing = await host.request("GET", "/suppliers/tax-id/11144477735", { token: tenant.token })
    expect(missing.status).toBe(404)
    expect(missing.body.code).toBe("SUPPLIER_NOT_FOUND")
    const foreign = await host.request("GET", "/suppliers/tax-id/52998224725", { token: other.token })
    expect(foreign.status).toBe(404)
  })

  it("filters on every scalar field, address and bank details included", async () => {
    const tag = randomUUID().slice(0, 8)
    const target = await suppliers.create({
      reference_code: `SUP-${tag}`,
      address_line1: `Rua ${tag}, 1`,
      branch_number: "0042",
      account_number: `77-${tag}`,
      account_type: "savings",
      postal_code: "01000-000",
      city_id: SAO_PAULO.id
    })
    await suppliers.create({ reference_code: `OTHER-${tag}` })
    await suppliers.create({ reference_code: `US-${tag}`, country_code: "US" })
    const american = await suppliers.list(`&country_code=US&reference_code[contains]=${tag}`)
    expect(american.body.data.map((row: { reference_code: string }) => row.reference_code)).toEqual([`US-${tag}`])
    for (const query of [
      `address_line1[contains]=${tag}`,
      `account_number=77-${tag}`,
      `reference_code=SUP-${tag}`,
      `branch_number=0042&account_type=savings&reference_code[contains]=${tag}`,
      `city_id=${SAO_PAULO.id}&reference_code[contains]=${tag}`,
      `country_id=76&reference_code[contains]=${tag}`,
      `country_code=BR&reference_code[contains]=${tag}`,
      `country_code=br&reference_code[contains]=${tag}`,
      `country_code[neq]=US&reference_code[contains]=${tag}&reference_code[neq]=OTHER-${tag}`
    ]) {
      const page = await suppliers.list(`&${query}`)
      expect(page.status, query).toBe(200)
      expect(page.body.data.map((row: { id: string }) => row.id), query).toEqual([target.id])
    }
  })

  it("is searchable by name, tax id and reference code", async () => {
    const tag = randomUUID().slice(0, 8)
    const created = await suppliers.create({ legal_name: `Torrefação ${tag} Ltda` })
    const page = await suppliers.list(`&search=${encodeURIComponent(`torrefacao ${tag}`)}`)
    expect(page.body.data.map((row: { id: string }) => row.id)).toEqual([created.id])
  })
})
