import {
  allReports,
  webhookEndpoints,
  webhookResources,
  allResources,
  ALL_PERMISSIONS,
  layerCore,
  parsePermissionSpecs,
  type PermissionGrant,
  type Principal,
  ResourceEngine,
  publicResources,
  resources as registry,
  OAuth,
  Reports,
  Tenancy
} from "@erp/core"
import { Cause, Effect, Layer, Logger, ManagedRuntime, Result } from "effect"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { storeKinds, testStore } from "../../../test/support/stores.js"
import { connectClient, keyPrincipal, type TestClient } from "./support.js"

const grants = (...specs: Array<string>) => Result.getOrThrow(parsePermissionSpecs(specs))

interface JsonSchemaNode {
  readonly description?: string
  readonly properties?: Readonly<Record<string, unknown>>
  readonly [keyword: string]: unknown
}

/** Every property below a schema (its definitions' too, and inside items, anyOf and records) that has no description. */
const undescribedProperties = (path: string, node: unknown): Array<string> => {
  if (Array.isArray(node)) return node.flatMap((item, index) => undescribedProperties(`${path}[${index}]`, item))
  if (typeof node !== "object" || node === null) return []
  const schema = node as JsonSchemaNode
  const own = Object.entries(schema.properties ?? {}).flatMap(([name, property]) => [
    ...(typeof (property as JsonSchemaNode).description === "string" && (property as JsonSchemaNode).description!.length > 0 ? [] : [`${path}.${name}`]),
    ...undescribedProperties(`${path}.${name}`, property)
  ])
  const nested = Object.entries(schema)
    .filter(([keyword]) => keyword !== "properties")
    .flatMap(([keyword, value]) => (typeof value === "object" ? undescribedProperties(`${path}/${keyword}`, value) : []))
  return [...own, ...nested]
}

/** What MCP serves (panel-only resources have no tool). */
const resources = publicResources(registry)

const toolNames = (resource: (typeof resources)[number]) => {
  const noun = (name: string) => name.replace(/[^A-Za-z0-9]+/g, "_")
  return {
    list: `list_${noun(resource.name)}`,
    get: `get_${noun(resource.singular)}`,
    create: `create_${noun(resource.singular)}`,
    update: `update_${noun(resource.singular)}`,
    delete: `delete_${noun(resource.singular)}`
  }
}

/** The read-only resources' tools (catalogs, the change feed) and every lookup: list and get, plus their search route and lookups. */
const readToolNames = allResources.flatMap((resource) => {
  if (resource.write) return (resource.lookups ?? []).map((lookup) => `get_${resource.singular.replace(/[^A-Za-z0-9]+/g, "_")}_by_${lookup.name.replace(/[^A-Za-z0-9]+/g, "_")}`)
  const noun = (name: string) => name.replace(/[^A-Za-z0-9]+/g, "_")
  return [
    `list_${noun(resource.name)}`,
    `get_${noun(resource.singular)}`,
    ...(resource.searchRoute ? [`search_${noun(resource.name)}`] : []),
    ...(resource.lookups ?? []).map((lookup) => `get_${noun(resource.singular)}_by_${noun(lookup.name)}`)
  ]
})

describe.each(storeKinds)("MCP tools on %s", (kind) => {
  const runtime = ManagedRuntime.make(layerCore(testStore(kind)))
  const clients: Array<TestClient> = []
  let tenant: { id: string; name: string }
  let admin: TestClient
  let readOnly: TestClient
  let stranger: TestClient

  const run = <A, E>(effect: Effect.Effect<A, E, Tenancy>) => runtime.runPromise(effect)
  const createTenant = (name = `Tenant ${randomUUID().slice(0, 8)}`) =>
    run(Effect.flatMap(Tenancy, (tenancy) => tenancy.createTenant({ name, countryCode: "BR" })))
  const createKey = (tenantId: string, permissions: ReadonlyArray<PermissionGrant>) =>
    run(Effect.flatMap(Tenancy, (tenancy) => tenancy.createApiKey({ tenantId, name: "mcp test", permissions })))
  const connect = async (token: string) => {
    const client = await connectClient(runtime, keyPrincipal(token))
    clients.push(client)
    return client
  }

  beforeAll(async () => {
    tenant = await createTenant()
    admin = await connect((await createKey(tenant.id, ALL_PERMISSIONS)).token)
    readOnly = await connect((await createKey(tenant.id, grants("products:read"))).token)
    const other = await createTenant()
    stranger = await connect((await createKey(other.id, ALL_PERMISSIONS)).token)
  })
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close()))
    await runtime.dispose()
  })

  const uniqueName = (prefix: string) => `${prefix} ${randomUUID().slice(0, 8)}`

  it("reconciles a statement line and charges a receivable by PIX and boleto through their tools", async () => {
    const today = new Date().toISOString().slice(0, 10)
    const account = await admin.ok("create_financial_account", { name: uniqueName("Banco"), type: "checking" })
    await admin.ok("update_financial_account", {
      id: account.id,
      br_data: { pix_key: "maria@example.com", pix_merchant_name: "Loja Teste", pix_merchant_city: "Curitiba", boleto_bank_code: "341", boleto_agency: "0057", boleto_wallet: "109", boleto_account: "12345", boleto_next_our_number: 7 }
    })
    const customer = await admin.ok("create_customer", { legal_name: uniqueName("Mercado") })
    const owed = await admin.ok("create_receivable", { customer_id: customer.id, amount: "75.30", due_date: today, financial_account_id: account.id })
    const pix = await admin.ok("pix_receivable", { id: owed.id })
    expect(pix.br_code).toMatch(/^000201.*6304[0-9A-F]{4}$/)
    const boleto = await admin.ok("boleto_receivable", { id: owed.id })
    expect([boleto.bank_code, boleto.digitable_line]).toEqual(["341", expect.stringMatching(/^\d{47}$/)])

    const line = await admin.ok("create_financial_transaction", { account_id: account.id, posted_at: today, amount: "75.30", name: "PIX", memo: pix.txid })
    const suggestions = await admin.ok("match_suggestions_financial_transaction", { id: line.id })
    expect(suggestions.data[0]).toMatchObject({ score: 1, allocations: [{ receivable_id: owed.id, amount: "75.300000" }] })
    const dry = await admin.ok("auto_reconcile_financial_account", { id: account.id, dry_run: true })
    expect(dry.matched.map((match: { transaction_id: string }) => match.transaction_id)).toEqual([line.id])
    expect(await admin.ok("reconcile_financial_transaction", { id: line.id, allocations: suggestions.data[0].allocations })).toMatchObject({ is_reconciled: true })
    expect((await admin.ok("get_receivable", { id: owed.id })).status).toBe("paid")
    expect(await admin.ok("unreconcile_financial_transaction", { id: line.id })).toMatchObject({ is_reconciled: false })
    await readOnly.refused("reconcile_financial_transaction", { id: line.id, allocations: suggestions.data[0].allocations }, 403)
  })

  describe("tools/list", () => {
    it("offers list_tenants, the five tools of every business resource, their actions, the catalogs' read tools and the reports, and nothing else", async () => {
      const { tools } = await admin.client.listTools()
      // Webhook configuration is served too: its five tools and the actions of both its resources.
      const actionTools = [...resources, ...webhookResources].flatMap((resource) => (resource.actions ?? []).map((action) => `${action.name}_${resource.singular.replace(/[^A-Za-z0-9]+/g, "_")}`))
      expect(actionTools).toEqual(expect.arrayContaining(["allocate_payable", "unallocate_payable", "cancel_receivable", "import_ofx_financial_account"]))
      const reportTools = allReports.map((report) => `report_${report.name.replace(/-/g, "_")}`)
      const expected = ["list_tenants", ...[...resources, webhookEndpoints].flatMap((resource) => Object.values(toolNames(resource))), ...actionTools, ...readToolNames, ...reportTools]
      expect(tools.map((tool) => tool.name).sort()).toEqual([...expected].sort())
      for (const tool of tools) {
        expect(tool.inputSchema.type, tool.name).toBe("object")
        expect(tool.inputSchema.additionalProperties, tool.name).toBe(false)
        expect(tool.description, tool.name).toBeTruthy()
      }
    })

    it("describes every property of every tool, nested ones too, from its declaration", async () => {
      const { tools } = await admin.client.listTools()
      const undescribed = tools.flatMap((tool) => undescribedProperties(tool.name, tool.inputSchema))
      expect(undescribed).toEqual([])
      const create = tools.find((tool) => tool.name === "create_product")!.inputSchema as JsonSchemaNode
      const described = (name: string) => (create.properties![name] as JsonSchemaNode).description
      // The type and format in words, whether null is taken, and an example (the declared body's, else one the format names).
      expect(described("sale_price")).toMatch(/decimal number as a string.*null.*Example: "89\.900000"/i)
      expect(described("is_blocked")).toBe("True or false.")
      expect(described("metadata")).toMatch(/object of your own keys.*merges it key by key/i)
      expect(described("br_data")).toMatch(/^Object with ncm_code, cest_code, .*or null.*Example: \{"ncm_code":"09012100","origin":"0"\}/)
      expect(described("unit_of_measurement_id")).toMatch(/UUID of a unit of measurement \(list_units_of_measurement finds them\)/)
      expect(described("reference_code")).toBe("Text of up to 100 characters, not blank, or null.")
      // Effect's own refinement labels ("maxLength(100)", "a string at most …") are left out: the description says it.
      expect(JSON.stringify(create)).not.toMatch(/maxLength\(|a string at most/)
      const quote = tools.find((tool) => tool.name === "create_quote")!.inputSchema as JsonSchemaNode
      expect((quote.properties!.customer_id as JsonSchemaNode).description).toMatch(/UUID of a customer \(list_customers finds them\)/)
      expect((quote.properties!.quote_date as JsonSchemaNode).description).toMatch(/Date, YYYY-MM-DD/)
    })

    it("describes each resource's arguments: id where a record is named, its own fields on create and update", async () => {
      const { tools } = await admin.client.listTools()
      const byName = new Map(tools.map((tool) => [tool.name, tool]))
      for (const resource of resources) {
        const names = toolNames(resource)
        const list = byName.get(names.list)!
        expect(Object.keys(list.inputSchema.properties!)).toEqual(
          expect.arrayContaining(["limit", "cursor", "sort", "with_deleted", "filter", "filters"])
        )
        expect(list.description).toContain(resource.description)
        expect(list.description).toContain(`${resource.defaultSort.field} ${resource.defaultSort.order}`)
        // Agents pick filters from the description: every declared field is named there.
        const filtersDescription = (list.inputSchema.properties!.filters as { description: string }).description
        for (const field of Object.keys(resource.filters)) expect(filtersDescription).toContain(`- ${field} (`)
        for (const name of [names.get, names.update, names.delete]) expect(byName.get(name)!.inputSchema.required).toContain("id")
        expect(Object.keys(byName.get(names.create)!.inputSchema.properties!).length).toBeGreaterThan(0)
        expect(Object.keys(byName.get(names.update)!.inputSchema.properties!).length).toBeGreaterThan(1)
      }
      expect(byName.get("create_product")!.inputSchema.required).toEqual(["name"])
      expect(byName.get("create_customer")!.inputSchema.required).toEqual(["legal_name"])
      expect(byName.get("update_product")!.inputSchema.required).toEqual(["id"])
      expect(byName.get("update_product")!.inputSchema.properties).toHaveProperty("sale_price")
      expect((byName.get("list_products")!.inputSchema.properties!.sort as { enum: Array<string> }).enum).toContain("sale_price:desc")
    })
  })

  it("list_tenants answers the key's own tenant", async () => {
    const body = await admin.ok("list_tenants")
    // An API key has permissions but no role.
    expect(body).toEqual({ data: [{ id: tenant.id, name: tenant.name, country_code: "BR", role: null }] })
    expect((await admin.refused("list_tenants", { tenant_id: tenant.id }, 400)).details.fields).toHaveProperty("tenant_id")
  })

  it("creates, reads, finds, changes and deletes a product", async () => {
    const name = uniqueName("Chair")
    const created = await admin.ok("create_product", { name, sale_price: "10.5", tags: ["mcp"], metadata: { source: "agent" } })
    expect(created).toMatchObject({ id: expect.any(String), name, sale_price: "10.500000", tags: ["mcp"], deleted_at: null })

    expect(await admin.ok("get_product", { id: created.id })).toEqual(created)

    const found = await admin.ok("list_products", { filters: { name, "sale_price[gte]": "10" } })
    expect(found.data.map((product: { id: string }) => product.id)).toEqual([created.id])
    expect(found.meta.filters).toEqual({ name: { eq: name }, sale_price: { gte: "10" } })
    const tooCheap = await admin.ok("list_products", { filters: { name, sale_price: { gt: 11 } } })
    expect(tooCheap.data).toEqual([])
    const byJson = await admin.ok("list_products", {
      filter: { logic: "and", conditions: [{ f: "name", op: "eq", v: name }, { f: "sale_price", op: "lt", v: "11" }] }
    })
    expect(byJson.data.map((product: { id: string }) => product.id)).toEqual([created.id])
    const byJsonText = await admin.ok("list_products", { filter: JSON.stringify({ conditions: [{ f: "name", v: name }] }) })
    expect(byJsonText.data).toHaveLength(1)

    const updated = await admin.ok("update_product", { id: created.id, name: `${name} (oak)`, sale_price: null })
    expect(updated).toMatchObject({ id: created.id, name: `${name} (oak)`, sale_price: null, tags: ["mcp"] })
    expect(await admin.ok("get_product", { id: created.id })).toEqual(updated)

    expect(await admin.ok("delete_product", { id: created.id })).toEqual({ id: created.id, deleted: true })
    expect(await admin.refused("get_product", { id: created.id }, 404)).toMatchObject({ code: "PRODUCT_NOT_FOUND", error: "Not Found" })
    expect((await admin.ok("get_product", { id: created.id, with_deleted: true })).deleted_at).toEqual(expect.any(String))
    expect((await admin.ok("list_products", { filters: { name: `${name} (oak)` } })).data).toEqual([])
    expect((await admin.ok("list_products", { filters: { name: `${name} (oak)` }, with_deleted: true })).data).toHaveLength(1)
  })

  it("finds a supplier by tax id and reads the change feed its writes left", async () => {
    const created = await admin.ok("create_supplier", { legal_name: uniqueName("Torrefação"), tax_id: "529.982.247-25", country_code: "Brasil" })
    expect(created).toMatchObject({ tax_id: "52998224725", tax_id_type: "CPF", type: "individual", country_code: "BR" })
    expect((await admin.ok("get_supplier_by_tax_id", { taxId: "529.982.247-25" })).id).toBe(created.id)
    await admin.ok("update_supplier", { id: created.id, trade_name: "Serra" })
    const feed = await admin.ok("list_events", { filters: { resource_id: created.id } })
    expect(feed.data.map((event: { type: string }) => event.type)).toEqual(["suppliers.create", "suppliers.update"])
    expect((await readOnly.refused("list_events", {}, 403)).code).toBe("PERMISSION_DENIED")
  })

  it("walks a list page by page with next_cursor, visiting each record once", async () => {
    const tag = uniqueName("walk").replace(" ", "-")
    const ids = new Set<string>()
    for (let index = 0; index < 5; index++) ids.add((await admin.ok("create_product", { name: `Item ${index}`, tags: [tag] })).id)
    const seen: Array<string> = []
    let cursor: string | undefined
    let pages = 0
    do {
      const page = await admin.ok("list_products", { filters: { tags: tag }, limit: 2, sort: "name:desc", ...(cursor ? { cursor } : {}) })
      seen.push(...page.data.map((product: { id: string }) => product.id))
      cursor = page.pagination.has_next_page ? page.pagination.next_cursor : undefined
      pages++
    } while (cursor)
    expect(pages).toBe(3)
    expect(seen).toHaveLength(5)
    expect(new Set(seen)).toEqual(ids)
  })

  describe("refusals come back as tool errors with the spec's body", () => {
    it("400 for an id that is not a UUID, on get, update and delete", async () => {
      for (const tool of ["get_product", "update_product", "delete_product"]) {
        const body = await admin.refused(tool, { id: "not-a-uuid" }, 400)
        expect(body, tool).toMatchObject({ error: "Bad Request", code: "INVALID_ID" })
        expect(body.message).toContain("not-a-uuid")
      }
      expect((await admin.refused("get_product", {}, 400)).details.fields).toHaveProperty("id")
    })

    it("400 naming the field for a bad body, and nothing is stored", async () => {
      const name = uniqueName("Bad")
      const missing = await admin.refused("create_product", { sale_price: "1" }, 400)
      expect(missing.details.fields.name).toEqual(["is required"])
      const wrongType = await admin.refused("create_product", { name, sale_price: "ten" }, 400)
      expect(wrongType.details.fields).toHaveProperty("sale_price")
      expect((await admin.refused("create_product", { name, colour: "red" }, 400)).details.fields).toHaveProperty("colour")
      expect((await admin.ok("list_products", { filters: { name } })).data).toEqual([])
    })

    it("400 for list arguments the engine refuses, naming what is wrong", async () => {
      expect((await admin.refused("list_products", { limit: 0 }, 400)).details.fields).toHaveProperty("limit")
      const unknownField = await admin.refused("list_products", { filters: { colour: "red" } }, 400)
      expect(unknownField).toMatchObject({ code: "INVALID_FILTER" })
      expect(unknownField.message).toContain("colour")
      const badValue = await admin.refused("list_products", { filters: { "sale_price[gte]": "cheap" } }, 400)
      expect(badValue.message).toContain("sale_price")
      expect((await admin.refused("list_products", { filters: { limit: 5 } }, 400)).message).toContain("limit")
      expect((await admin.refused("list_products", { filter: "{not json" }, 400)).code).toBe("INVALID_FILTER")
      expect((await admin.refused("list_products", { cursor: "forged" }, 400)).message).toBeTruthy()
    })

    it("422 for a unit of measurement that does not exist, with details.fields", async () => {
      const name = uniqueName("Unitless")
      const body = await admin.refused("create_product", { name, unit_of_measurement_id: randomUUID() }, 422)
      expect(body).toMatchObject({ error: "Unprocessable Entity", details: { fields: { unit_of_measurement_id: [expect.any(String)] } } })
      expect((await admin.ok("list_products", { filters: { name } })).data).toEqual([])
    })

    it("403 for a read-only key that tries to write, and the store is unchanged", async () => {
      const product = await admin.ok("create_product", { name: uniqueName("Guarded") })
      expect((await readOnly.ok("list_products", { filters: { id: product.id } })).data).toHaveLength(1)
      expect(await readOnly.ok("get_product", { id: product.id })).toEqual(product)

      const name = uniqueName("Forbidden")
      const denied = await readOnly.refused("create_product", { name }, 403)
      expect(denied).toMatchObject({ error: "Forbidden", code: "PERMISSION_DENIED" })
      // Named as it is granted (`erp keys create --permission products:create`).
      expect(denied.message).toBe("This credential lacks the products:create permission")
      await readOnly.refused("update_product", { id: product.id, name: "Renamed" }, 403)
      await readOnly.refused("delete_product", { id: product.id }, 403)
      await readOnly.refused("list_customers", {}, 403)

      expect((await admin.ok("list_products", { filters: { name } })).data).toEqual([])
      expect(await admin.ok("get_product", { id: product.id })).toEqual(product)
    })

    it("404 for another tenant's product, which stays as it was", async () => {
      const product = await admin.ok("create_product", { name: uniqueName("Private") })
      for (const [tool, args] of [
        ["get_product", { id: product.id }],
        ["update_product", { id: product.id, name: "Stolen" }],
        ["delete_product", { id: product.id }]
      ] as const) {
        expect(await stranger.refused(tool, args, 404), tool).toMatchObject({ code: "PRODUCT_NOT_FOUND" })
      }
      expect((await stranger.ok("list_products", { filters: { id: product.id } })).data).toEqual([])
      expect(await admin.ok("get_product", { id: product.id })).toEqual(product)
    })

    it("401 once the key is revoked, without reconnecting", async () => {
      const { key, token } = await createKey(tenant.id, ALL_PERMISSIONS)
      const client = await connect(token)
      await client.ok("list_products", { limit: 1 })
      await run(Effect.flatMap(Tenancy, (tenancy) => tenancy.revokeApiKey(key.id)))
      expect(await client.refused("list_products", { limit: 1 }, 401)).toMatchObject({ error: "Unauthorized" })
    })

    it("answers an unknown tool with a protocol error", async () => {
      await expect(admin.client.callTool({ name: "drop_database", arguments: {} })).rejects.toThrow(/Unknown tool/)
    })
  })

  describe.each(resources)("every resource: $name", (resource) => {
    const names = toolNames(resource)

    it("lists a page, and names its not-found code for a missing id", async () => {
      const page = await admin.ok(names.list, { limit: 1 })
      expect(page).toMatchObject({ data: expect.any(Array), pagination: { limit: 1 }, meta: { sort: resource.defaultSort } })
      expect(await admin.refused(names.get, { id: randomUUID() }, 404)).toMatchObject({ code: resource.notFoundCode })
      expect(await admin.refused(names.delete, { id: randomUUID() }, 404)).toMatchObject({ code: resource.notFoundCode })
    })

    it("refuses unknown fields on create and update with 400", async () => {
      expect((await admin.refused(names.create, { no_such_field: 1 }, 400)).details.fields).toHaveProperty("no_such_field")
      expect((await admin.refused(names.update, { id: randomUUID(), no_such_field: 1 }, 400)).details.fields).toHaveProperty("no_such_field")
    })

    it("refuses a key without the resource's permission with 403", async () => {
      const other = resources.find((candidate) => candidate.name !== resource.name)
      const client = await connect((await createKey(tenant.id, grants(`${other?.name ?? "banks"}:*`))).token)
      expect(await client.refused(names.list, {}, 403)).toMatchObject({ code: "PERMISSION_DENIED", message: expect.stringContaining(`${resource.name}:read`) })
      expect(await client.refused(names.create, {}, 403)).toMatchObject({ code: "PERMISSION_DENIED", message: expect.stringContaining(`${resource.name}:create`) })
    })
  })
})

describe("a tool that fails unexpectedly", () => {
  const principal: Principal = {
    tenantId: randomUUID(),
    tenantCountry: "BR",
    actor: { kind: "api_key", id: randomUUID(), name: "stub" },
    role: undefined,
    grants: new Map()
  }
  const broken = Effect.die(new Error("the disk caught fire"))
  const logged: Array<string> = []
  const runtime = ManagedRuntime.make(Layer.mergeAll(
    Layer.succeed(ResourceEngine, { list: () => broken, listAnswers: () => broken, walk: () => broken, walkAnswers: () => broken, search: () => broken, get: () => broken, lookup: () => broken, create: () => broken, update: () => broken, remove: () => broken, restore: () => broken, action: () => broken }),
    Layer.succeed(Tenancy, Tenancy.of({ getTenant: () => Effect.succeed({ id: principal.tenantId, name: "Stub", country_code: "BR" }) } as never)),
    Layer.succeed(OAuth, OAuth.of({} as never)),
    Layer.succeed(Reports, Reports.of({ run: () => broken })),
    Logger.layer([Logger.make(({ message, cause }) => logged.push(`${String(message)} ${Cause.pretty(cause)}`))])
  ))
  afterAll(() => runtime.dispose())

  it("answers a 500 tool error, hides the cause, and keeps serving", async () => {
    const client = await connectClient(runtime, Effect.succeed(principal))
    const body = await client.refused("list_products", {}, 500)
    expect(body).toEqual({ status_code: 500, error: "Internal Server Error", message: expect.any(String), code: "INTERNAL_ERROR" })
    expect(JSON.stringify(body)).not.toContain("disk")
    // The operator, not the agent, gets the cause.
    expect(logged.join("\n")).toMatch(/list_products failed[\s\S]*the disk caught fire/)
    expect((await client.ok("list_tenants")).data[0].id).toBe(principal.tenantId)
    await client.close()
  })
})
