import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { erp, json } from "../../../test/support/cli.js"
import { testDataDir } from "../../../test/support/stores.js"

const SAO_PAULO_CITY = 3550308

const ndjson = (text: string) => text.trim().split("\n").filter(Boolean).map((line) => JSON.parse(line))

/** What an export must reproduce in another tenant: the record without what the server assigns. */
const comparable = (record: Record<string, unknown>): Record<string, unknown> => {
  const { id: _id, created_at: _created, updated_at: _updated, record_number: _number, customer_id: _customer, customer: _embedded, items, ...rest } = record
  // A block answers its owner's id (br_data.customer_id): the new record's own id.
  const own = JSON.parse(JSON.stringify(rest).replaceAll(String(record.id), "(own id)"))
  return {
    ...own,
    ...(Array.isArray(items) ? { items: items.map((item: Record<string, unknown>) => { const { id: _i, sales_order_id: _o, created_at: _c, updated_at: _u, product_id: _p, product: _e, ...kept } = item; return kept }) } : {})
  }
}

describe("erp export and erp import", () => {
  let dir: string
  let flags: Array<string>
  let source: string
  let target: string
  const file = (name: string) => path.join(dir, name)

  beforeAll(async () => {
    dir = testDataDir()
    flags = ["--data-dir", dir]
    source = json(await erp([...flags, "tenants", "create", "--name", "Origem Ltda", "--country", "BR", "--json"])).id
    target = json(await erp([...flags, "tenants", "create", "--name", "Destino Ltda", "--country", "BR", "--json"])).id
  })
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

  it("imports NDJSON through the API's rules, reporting refused lines by number and writing nothing of them", async () => {
    fs.writeFileSync(file("customers.ndjson"), [
      JSON.stringify({ legal_name: "Padaria Pão Quente Ltda", tax_id: "11.222.333/0001-81", tax_id_type: "CNPJ", city_id: SAO_PAULO_CITY, emails: ["compras@paoquente.example"] }),
      JSON.stringify({ legal_name: "CNPJ errado", tax_id: "11.222.333/0001-82", tax_id_type: "CNPJ" }),
      "",
      JSON.stringify({ legal_name: "Ana Souza", tax_id: "529.982.247-25", tax_id_type: "CPF" })
    ].join("\n"))
    const result = await erp([...flags, "import", "customers", file("customers.ndjson"), "--tenant", source])
    expect(result.code, result.stderr).toBe(3)
    expect(result.stderr).toContain("customers.ndjson:2:")
    expect(result.stderr).toContain("tax_id")
    expect(result.stderr).toMatch(/Imported customers from .*: 2 created, 0 updated, 1 rejected/)
    const products = [
      { name: "Café em grãos 1 kg", sale_price: "52.5", br_data: { ncm_code: "09012100" } },
      { name: "Chá mate 500 g", sale_price: "18.90" }
    ]
    fs.writeFileSync(file("products.ndjson"), products.map((product) => JSON.stringify(product)).join("\n"))
    expect(json(await erp([...flags, "import", "products", file("products.ndjson"), "--tenant", source, "--json"]))).toMatchObject({ created: 2, rejected: 0, dry_run: false })
  })

  it("exports every resource into a folder with decimals as strings and children nested, and a failure leaves no file", async () => {
    const exported = json(await erp([...flags, "export", "all", "--tenant", source, "--out", file("backup"), "--json"]))
    expect(exported.records).toMatchObject({ customers: 2, products: 2, "sales-orders": 0 })
    const customers = ndjson(fs.readFileSync(file("backup/customers.ndjson"), "utf8"))
    expect(customers.map((customer) => customer.legal_name).sort()).toEqual(["Ana Souza", "Padaria Pão Quente Ltda"])
    expect(customers.find((customer) => customer.tax_id_type === "CNPJ").city).toEqual({ id: SAO_PAULO_CITY, name: "São Paulo" })
    const products = ndjson(fs.readFileSync(file("backup/products.ndjson"), "utf8"))
    expect(products.map((product) => product.sale_price).sort()).toEqual(["18.900000", "52.500000"])
    expect(fs.readdirSync(file("backup")).filter((name) => name.includes("partial"))).toEqual([])

    // An order with items, to see children nested in NDJSON and flattened into a second CSV.
    const [customer] = customers
    fs.writeFileSync(file("orders.ndjson"), JSON.stringify({
      customer_id: customer.id, order_date: "2026-01-15", operation_type: "sale", product_type: "goods",
      items: products.map((product, index) => ({ product_id: product.id, item_description: product.name, quantity: String(index + 2), unit_price: product.sale_price }))
    }))
    expect(json(await erp([...flags, "import", "sales-orders", file("orders.ndjson"), "--tenant", source, "--json"]))).toMatchObject({ created: 1 })
    const csv = json(await erp([...flags, "export", "sales-orders", "--tenant", source, "--format", "csv", "--out", file("orders.csv"), "--json"]))
    expect(csv.files).toEqual([file("orders.csv"), file("orders.items.csv")])
    const [header, row] = fs.readFileSync(file("orders.csv"), "utf8").trim().split("\n")
    expect(header.split(",")).toEqual(expect.arrayContaining(["record_number", "total", "customer"]))
    expect(header.split(",")).not.toContain("items")
    expect(row).toContain(",draft,")
    const items = fs.readFileSync(file("orders.items.csv"), "utf8").trim().split("\n")
    expect(items).toHaveLength(3)
    expect(items[0].split(",")).toEqual(expect.arrayContaining(["sales_order_id", "quantity", "unit_price"]))

    const usage = await erp([...flags, "export", "products", "--out", file("none.ndjson")])
    expect(usage.code).toBe(2)
    expect(usage.stderr).toContain("--tenant")
    const failed = await erp([...flags, "export", "products", "--tenant", "00000000-0000-4000-8000-000000000000", "--out", file("none.ndjson")])
    expect(failed.code).toBe(1)
    expect(failed.stderr).toMatch(/^Error: .*[Tt]enant/m)
    expect(fs.readdirSync(dir).filter((name) => name.includes("none.ndjson"))).toEqual([])
  })

  it("reproduces the records in another tenant from NDJSON and from CSV; a CSV with a bad row names its line", async () => {
    for (const name of ["customers", "products"]) {
      expect(json(await erp([...flags, "import", name, file(`backup/${name}.ndjson`), "--tenant", target, "--json"]))).toMatchObject({ created: 2, rejected: 0 })
    }
    const again = json(await erp([...flags, "export", "all", "--tenant", target, "--out", file("copy"), "--json"]))
    expect(again.records).toMatchObject({ customers: 2, products: 2 })
    for (const name of ["customers", "products"]) {
      const original = ndjson(fs.readFileSync(file(`backup/${name}.ndjson`), "utf8")).map(comparable)
      const copy = ndjson(fs.readFileSync(file(`copy/${name}.ndjson`), "utf8")).map(comparable)
      expect(copy.sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)))).toEqual(original.sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))))
    }

    // The order references the source tenant's customer and products: refused in the target, whole.
    const orders = await erp([...flags, "import", "sales-orders", file("orders.csv"), "--tenant", target, "--json"])
    expect(orders.code).toBe(3)
    expect(JSON.parse(orders.stdout)).toMatchObject({ created: 0, rejected: 1, errors: [{ line: 2, fields: { customer_id: expect.any(Array) } }] })

    // A CSV with a bad row in the middle: the row is named by its line and nothing of it is written.
    expect((await erp([...flags, "export", "products", "--tenant", source, "--format", "csv", "--out", file("products.csv")])).code).toBe(0)
    const [header, ...rows] = fs.readFileSync(file("products.csv"), "utf8").trim().split("\n")
    const columns = header.split(",")
    const bad = columns.map((column) => (column === "name" ? "Produto ruim" : column === "sale_price" ? "doze reais" : "")).join(",")
    fs.writeFileSync(file("mixed.csv"), [header, rows[0], bad, rows[1]].join("\n") + "\n")
    const dry = await erp([...flags, "import", "products", file("mixed.csv"), "--tenant", target, "--dry-run", "--json"])
    expect(JSON.parse(dry.stdout)).toMatchObject({ dry_run: true, created: 2, rejected: 1 })
    const mixed = await erp([...flags, "import", "products", file("mixed.csv"), "--tenant", target, "--json"])
    expect(mixed.code, mixed.stderr).toBe(3)
    expect(JSON.parse(mixed.stdout)).toMatchObject({ created: 2, rejected: 1, errors: [{ line: 3, fields: { sale_price: expect.any(Array) } }] })
    const names = ndjson((await erp([...flags, "export", "products", "--tenant", target])).stdout).map((product) => product.name)
    expect(names.sort()).toEqual(["Café em grãos 1 kg", "Café em grãos 1 kg", "Chá mate 500 g", "Chá mate 500 g"])
  })
})
