import { afterAll, beforeAll, describe, it } from "vitest"
import { startTestHost, type TestHost, type TestTenant } from "../../../test/support/host.js"
import { storeKinds, testStore } from "../../../test/support/stores.js"

describe.each(storeKinds)("explore %s", (kind) => {
  let host: TestHost
  let br: TestTenant
  let us: TestTenant
  beforeAll(async () => {
    host = await startTestHost(testStore(kind))
    br = await host.createTenant("BR")
    us = await host.createTenant("US")
  })
  afterAll(() => host?.close())
  it("explores", async () => {
    const paths: Array<[string, string, TestTenant]> = [
      ["GET", "/banks?limit=3", br],
      ["GET", "/banks?limit=3", us],
      ["GET", "/banks/code/341", br],
      ["GET", "/banks/code/341", us],
      ["GET", "/banks/code/341?country_code=BR", us],
      ["GET", "/banks/swift/brasbrrjxxx", us],
      ["GET", "/banks/swift/USBKUS44IMT", br],
      ["GET", "/banks/search?q=itau", br],
      ["GET", "/banks?search=itau", br],
      ["POST", "/banks", br],
      ["PATCH", "/banks/3fe12489-cf24-5c1f-8431-20e79d761713", br],
      ["DELETE", "/banks/3fe12489-cf24-5c1f-8431-20e79d761713", br],
      ["GET", "/payment-methods/code/pix", us],
      ["GET", "/countries/abc", us],
      ["GET", "/countries/iso3/bra", us],
      ["GET", "/states/code/pa", us],
      ["GET", "/states/code/pa?country_iso2=BR", us],
      ["GET", "/states/search?q=PARA", us],
      ["GET", "/states/search?q=%20", us],
      ["GET", "/states/search", us],
      ["GET", "/cities", us],
      ["GET", "/cities/search?q=sao", us],
      ["GET", "/cities/search?state_id=7635", us],
      ["GET", "/cities/search", us],
      ["GET", "/cities/search?state_id=7635&q=sao%20paulo", us],
      ["GET", "/cities/abc", us],
      ["GET", "/cities/1", us],
      ["GET", "/units-of-measurement?fiscal_codes.br_nfe=KG", us],
    ]
    for (const [method, path, tenant] of paths) {
      const r = await host.request(method, path, { token: tenant.token, ...(method === "POST" || method === "PATCH" ? { body: { name: "x" } } : {}) })
      console.log(method, path, r.status, JSON.stringify(r.body).slice(0, 600))
    }
  })
})
