import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestHost, type TestHost, type TestTenant } from "../../../test/support/host.js"
import { storeKinds, testStore } from "../../../test/support/stores.js"

interface Page {
  readonly ids: Array<string>
  readonly body: {
    data: Array<{ id: string; name: string; sale_price: string | null }>
    pagination: {
      limit: number
      has_next_page: boolean
      has_previous_page: boolean
      next_cursor: string | null
      previous_cursor: string | null
      current_page_cursor: string | null
      current_query_cursor: string | null
    }
    meta: { sort: { field: string; order: string } }
  }
}

describe.each(storeKinds)("cursor pagination on %s", (kind) => {
  let host: TestHost
  let tenant: TestTenant
  const created: Array<string> = []

  const page = async (query: string, token = tenant.token): Promise<Page> => {
    const response = await host.request("GET", `/products?${query}`, { token })
    expect(response.status, JSON.stringify(response.body)).toBe(200)
    return { ids: response.body.data.map((record: { id: string }) => record.id), body: response.body }
  }

  const walkForward = async (base: string, between?: () => Promise<void>) => {
    const pages: Array<Page> = []
    let current = await page(base)
    pages.push(current)
    while (current.body.pagination.has_next_page) {
      await between?.()
      current = await page(`${base}&cursor=${encodeURIComponent(current.body.pagination.next_cursor!)}`)
      pages.push(current)
    }
    return pages
  }

  const walkBack = async (base: string, from: Page) => {
    const pages: Array<Page> = [from]
    let current = from
    while (current.body.pagination.has_previous_page) {
      current = await page(`${base}&cursor=${encodeURIComponent(current.body.pagination.previous_cursor!)}`)
      pages.push(current)
    }
    return pages
  }

  beforeAll(async () => {
    host = await startTestHost(testStore(kind))
    tenant = await host.createTenant("BR", { rateLimitPerMinute: 1_000_000 })
    // 250 products; every fifth without a price, so a nullable sort is walked too.
    for (let index = 0; index < 250; index++) {
      const response = await host.request("POST", "/products", {
        token: tenant.token,
        body: { name: `Item ${String(index % 50).padStart(2, "0")}`, sale_price: index % 5 === 0 ? null : String((index * 7) % 40) }
      })
      expect(response.status).toBe(201)
      created.push(response.body.id)
    }
  }, 180_000)
  afterAll(() => host?.close())

  it("walks 250 records at limit=7 visiting each exactly once in the default order", async () => {
    const pages = await walkForward("limit=7")
    expect(pages).toHaveLength(36)
    const ids = pages.flatMap((current) => current.ids)
    expect(ids).toHaveLength(250)
    expect(new Set(ids).size).toBe(250)
    expect(ids).toEqual(created)
    expect(pages[0].body.pagination.has_previous_page).toBe(false)
    expect(pages[0].body.pagination.previous_cursor).toBeNull()
    expect(pages.at(-1)!.body.pagination.has_next_page).toBe(false)
    expect(pages.at(-1)!.body.pagination.next_cursor).toBeNull()
    expect(pages.at(-1)!.ids).toHaveLength(5)
    expect(pages[0].body.meta.sort).toEqual({ field: "created_at", order: "asc" })
  })

  it("walks back with previous_cursor through the same pages in reverse", async () => {
    const forward = await walkForward("limit=7")
    const backward = await walkBack("limit=7", forward.at(-1)!)
    expect(backward.map((current) => current.ids)).toEqual(forward.map((current) => current.ids).reverse())
    expect(backward.at(-1)!.body.pagination.has_previous_page).toBe(false)
    expect(backward.every((current, index) => index === 0 || current.body.pagination.has_next_page)).toBe(true)
  })

  it("visits every record exactly once while records are being inserted", async () => {
    const other = await host.createTenant("BR", { rateLimitPerMinute: 1_000_000 })
    const before: Array<string> = []
    for (let index = 0; index < 40; index++) {
      const response = await host.request("POST", "/products", { token: other.token, body: { name: `Seed ${index}` } })
      before.push(response.body.id)
    }
    let inserted = 0
    const pages: Array<Page> = []
    let current = await page("limit=7", other.token)
    pages.push(current)
    while (current.body.pagination.has_next_page) {
      await host.request("POST", "/products", { token: other.token, body: { name: `Inserted ${inserted++}` } })
      current = await page(`limit=7&cursor=${encodeURIComponent(current.body.pagination.next_cursor!)}`, other.token)
      pages.push(current)
    }
    const ids = pages.flatMap((visited) => visited.ids)
    expect(new Set(ids).size).toBe(ids.length)
    for (const id of before) expect(ids.filter((seen) => seen === id)).toHaveLength(1)
  })

  it.each(["name:asc", "name:desc", "sale_price:asc", "sale_price:desc", "created_at:desc", "updated_at:asc"])(
    "keeps a total order under sort=%s in both directions, nulls included",
    async (sort) => {
      const base = `limit=9&sort=${sort}`
      const forward = await walkForward(base)
      const ids = forward.flatMap((current) => current.ids)
      expect(new Set(ids).size).toBe(250)
      expect(forward[0].body.meta.sort).toEqual({ field: sort.split(":")[0], order: sort.split(":")[1] })
      const backward = await walkBack(base, forward.at(-1)!)
      expect(backward.map((current) => current.ids)).toEqual(forward.map((current) => current.ids).reverse())
      if (sort.startsWith("name")) {
        const names = forward.flatMap((current) => current.body.data.map((record) => record.name))
        const sorted = [...names].sort()
        expect(names).toEqual(sort.endsWith("asc") ? sorted : sorted.reverse())
      }
    }
  )

  it("keeps the cursor bound to its query", async () => {
    const first = await page("limit=5&sale_price[gte]=10")
    const cursor = encodeURIComponent(first.body.pagination.next_cursor!)
    const mismatch = await host.request("GET", `/products?limit=5&cursor=${cursor}`, { token: tenant.token })
    expect(mismatch.status).toBe(400)
    expect(mismatch.body).toMatchObject({ status_code: 400, code: "CURSOR_QUERY_MISMATCH" })
    const otherLimit = await host.request("GET", `/products?limit=9&sale_price[gte]=10&cursor=${cursor}`, { token: tenant.token })
    expect(otherLimit.status).toBe(200)
  })

  it("refuses a tampered cursor with 400", async () => {
    const first = await page("limit=5")
    const cursor = first.body.pagination.next_cursor!
    const [body, mac] = cursor.split(".")
    const payload = JSON.parse(Buffer.from(body, "base64url").toString())
    payload.k[1] = "00000000-0000-4000-8000-000000000000"
    const forged = `${Buffer.from(JSON.stringify(payload)).toString("base64url")}.${mac}`
    for (const bad of [forged, "garbage", `${body}.`, `${body}.${mac}.extra`]) {
      const response = await host.request("GET", `/products?limit=5&cursor=${encodeURIComponent(bad)}`, { token: tenant.token })
      expect(response.status).toBe(400)
      expect(response.body.code).toBe("INVALID_CURSOR")
    }
  })

  it("returns the same page again for current_page_cursor and the first page for current_query_cursor", async () => {
    const first = await page("limit=6")
    const second = await page(`limit=6&cursor=${encodeURIComponent(first.body.pagination.next_cursor!)}`)
    const again = await page(`limit=6&cursor=${encodeURIComponent(second.body.pagination.current_page_cursor!)}`)
    expect(again.ids).toEqual(second.ids)
    const restart = await page(`limit=6&cursor=${encodeURIComponent(second.body.pagination.current_query_cursor!)}`)
    expect(restart.ids).toEqual(first.ids)
  })

  it("validates limit: default 20, 1 to 100, else 400", async () => {
    expect((await page("")).ids).toHaveLength(20)
    expect((await page("limit=100")).ids).toHaveLength(100)
    for (const bad of ["0", "101", "abc", "-1", "2.5"]) {
      const response = await host.request("GET", `/products?limit=${bad}`, { token: tenant.token })
      expect(response.status, bad).toBe(400)
      expect(response.body.message).toContain("limit")
    }
  })
})
