import { SqlClient } from "effect/sql"
import { allResources, type AnyField, present, CHUNK_TEXT, type AnyResource, type ChildCollection, CursorSecret, type Fields, listShape, operatorPrincipal, parseListQuery, publicResources, recordJson, ResourceEngine, ResourceRepository, resources, type Row } from "@erp/core"
import { Effect, Schema } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { exampleBody } from "../../../test/support/examples.js"
import { startTestHost, type TestHost, type TestTenant } from "../../../test/support/host.js"
import { adminAccessToken } from "../../../test/support/oauth.js"
import { storeKinds, testStore } from "../../../test/support/stores.js"

/**
 * The store builds each record as JSON (`recordJson`). This holds it to the declarations for
 * every resource, child collection and embed: the values the driver's columns decode to by the
 * record schema, the same keys in the same order, on records made from each declaration's
 * example; and a list's or an export's text, which the host answers as the store built it, is
 * the record the repository decodes, as clients read it.
 */

const entries = (fields: Fields) => Object.entries(fields) as Array<[string, AnyField]>

/** The columns as the driver reads them: `r.<name>` or the field's SQL. */
const rawColumns = (fields: Fields) =>
  entries(fields)
    .filter(([, field]) => field.column && (field.output || field.read))
    .map(([name, field]) => (field.column!.sql ? `(${field.column!.sql}) AS "${name}"` : `r.${name}`))
    .join(", ")

const decodeWith = (schema: Schema.Codec<unknown, unknown>, value: unknown) => Schema.decodeUnknownSync(schema)(value)

/** What the record schema made of a driver row, column by column (embeds and children are checked on their own). */
const decodedColumns = (fields: Fields, raw: Row): Row =>
  Object.fromEntries(
    entries(fields)
      .filter(([, field]) => field.column && (field.output || field.read))
      .map(([name, field]) => [name, decodeWith((field.read ?? field.output)!, raw[name])])
  )

const pick = (record: Row, names: ReadonlyArray<string>): Row => Object.fromEntries(names.map((name) => [name, record[name]]))

describe.each(storeKinds)("records built by the store on %s", (kind) => {
  let host: TestHost
  let tenant: TestTenant
  const query = <A extends object>(text: string, params: ReadonlyArray<unknown> = []) =>
    host.run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<A>(text, params as Array<unknown>)).pipe(Effect.orDie)) as Promise<ReadonlyArray<A>>

  beforeAll(async () => {
    host = await startTestHost(testStore(kind))
    const made = await host.createTenant()
    tenant = { ...made, token: await adminAccessToken(host, made.id) }
    const create = async (resource: AnyResource, body: Record<string, unknown>) => {
      const answer = await host.request("POST", `/${resource.name}`, { token: tenant.token, body })
      if (answer.status !== 201) throw new Error(`${resource.name}: ${answer.status} ${JSON.stringify(answer.body)}`)
      return ((answer.body.data ?? [answer.body]) as Array<{ id: string }>)[0]
    }
    for (const resource of publicResources(allResources).filter((candidate) => candidate.write)) {
      await create(resource, await exampleBody(resource, create))
    }
  }, 180_000)
  afterAll(() => host?.close())

  const scope = (resource: AnyResource) => (resource.storage === "catalog" ? "TRUE" : "r.tenant_id = $1::uuid")
  const params = (resource: AnyResource) => (resource.storage === "catalog" ? [] : [tenant.id])

  const storeRecords = async (resource: AnyResource, where = "TRUE", extra: ReadonlyArray<unknown> = []) =>
    (await query<{ record: string }>(
      `SELECT ${recordJson(resource)} AS record FROM ${resource.table} r WHERE ${scope(resource)} AND ${where} ORDER BY r.id LIMIT 25`,
      [...params(resource), ...extra]
    )).map((row) => JSON.parse(row.record) as Row)

  const checkColumns = async (label: string, table: string, fields: Fields, records: ReadonlyArray<Row>, tenantScoped: boolean) => {
    for (const record of records) {
      const [raw] = await query<Row>(`SELECT ${rawColumns(fields)} FROM ${table} r WHERE r.id = $1${tenantScoped ? " AND r.tenant_id = $2::uuid" : ""}`, tenantScoped ? [record.id, tenant.id] : [record.id])
      const expected = decodedColumns(fields, raw)
      expect(pick(record, Object.keys(expected)), `${label} ${String(record.id)}`).toStrictEqual(expected)
    }
  }

  it("answers every stored and derived field as the driver and the record schema did, in declaration order", async () => {
    let checked = 0
    for (const resource of allResources) {
      const records = await storeRecords(resource)
      await checkColumns(resource.name, resource.table, resource.fields, records, resource.storage !== "catalog")
      const answered = entries(resource.fields).filter(([, field]) => field.output || field.read).map(([name]) => name)
      for (const record of records) expect(Object.keys(record), resource.name).toStrictEqual(answered)
      for (const collection of resource.children as ReadonlyArray<ChildCollection>) {
        const children = records.flatMap((record) => record[collection.name] as ReadonlyArray<Row>)
        await checkColumns(`${resource.name}.${collection.name}`, collection.table, collection.fields, children, true)
        checked += children.length
      }
      checked += records.length
    }
    // Every writable resource made a record, catalogs have theirs: the check saw them.
    expect(checked).toBeGreaterThan(100)
  })

  it("answers each embed as the embedded record, picked and decoded by the embed's schema", async () => {
    let checked = 0
    const check = async (label: string, fields: Fields, records: ReadonlyArray<Row>) => {
      for (const [name, field] of entries(fields)) {
        const embed = field.embed
        if (!embed || !(field.output || field.read)) continue
        const target = embed.resource() as AnyResource
        const schema = (field.read ?? field.output)!
        for (const record of records) {
          const related = embed.kind === "one"
            ? record[embed.key] == null ? [] : await storeRecords(target, "r.id = $" + (params(target).length + 1), [record[embed.key]])
            : (await storeRecords(target, `r.${embed.foreignKey} = $${params(target).length + 1}${target.softDelete === false ? "" : " AND r.deleted_at IS NULL"}`, [record.id]))
          const shown = related.map((other) => {
            const presented = Object.fromEntries(Object.entries(other).filter(([key]) => !target.hidden.includes(key)))
            const choice = embed.pick
            if (choice === undefined) return presented
            if (typeof choice === "string") return presented[choice] ?? null
            if (Array.isArray(choice)) return Object.fromEntries(choice.map((key: string) => [key, presented[key] ?? null]))
            return Object.fromEntries(Object.entries(choice as Record<string, string>).map(([key, source]) => [key, presented[source] ?? null]))
          })
          const expected = decodeWith(schema, embed.kind === "one" ? shown[0] ?? null : shown)
          // Same JSON text: the same values and the same key order.
          expect(JSON.stringify(record[name]), `${label}.${name} of ${String(record.id)}`).toBe(JSON.stringify(embed.kind === "one" ? expected : sortLike(record[name], expected)))
          checked++
        }
      }
    }
    for (const resource of allResources) {
      const records = await storeRecords(resource)
      await check(resource.name, resource.fields, records)
      for (const collection of resource.children as ReadonlyArray<ChildCollection>) {
        await check(`${resource.name}.${collection.name}`, collection.fields, records.flatMap((record) => record[collection.name] as ReadonlyArray<Row>))
      }
    }
    expect(checked).toBeGreaterThan(10)
  })

  it("answers a list page and an export's lines as the records the repository decodes, presented", async () => {
    let checked = 0
    for (const resource of publicResources(allResources)) {
      const { records, answers, lines } = await host.run(Effect.gen(function* () {
        const repo = yield* ResourceRepository
        const listed = yield* Effect.fromResult(parseListQuery(listShape(resource), [], (yield* CursorSecret).key))
        const request = { direction: "next" as const, key: null, take: 25 }
        return {
          records: (yield* repo.page(resource, tenant.id, listed, request)).map((keyed) => keyed.record),
          answers: (yield* repo.pageAnswers(resource, tenant.id, listed, request)).map((keyed) => keyed.answer),
          lines: (yield* repo.pageLines(resource, tenant.id, listed, request)).chunks.join("\n")
        }
      }).pipe(Effect.catch(() => Effect.succeed({ records: [], answers: [], lines: "" }))))
      expect(answers, resource.name).toHaveLength(records.length)
      records.forEach((record, index) => {
        const answered = JSON.parse(answers[index])
        expect(answered, `${resource.name} ${String(record.id)}`).toStrictEqual(present(resource, record))
        expect(Schema.decodeUnknownSync(resource.record)(answered), resource.name).toStrictEqual(answered)
      })
      if (records.length > 0) expect(lines.split("\n").map((line) => JSON.parse(line)), resource.name).toStrictEqual(answers.map((answer) => JSON.parse(answer)))
      checked += records.length
    }
    expect(checked).toBeGreaterThan(100)
  })

  const products = resources.find((resource) => resource.name === "products")!
  let inserted: Promise<unknown> | undefined
  /** Products for the walks, once: three a microsecond apart share each millisecond (cursor keys keep milliseconds), half with a block. */
  const insertWalked = () =>
    (inserted ??= query(`INSERT INTO products (tenant_id, name, sale_price, tags, br_data, created_at)
      SELECT $1::uuid, 'Walked ' || n, (n % 7 + 0.5)::numeric, '["walk"]'::jsonb, CASE WHEN n % 2 = 0 THEN '{"ncm_code":"09012100"}'::jsonb ELSE '{}'::jsonb END,
        timestamptz '2026-03-01 12:00:00+00' + (n / 3) * interval '1 millisecond' + (n % 3) * interval '1 microsecond'
      FROM generate_series(1, 640) AS n`, [tenant.id]))

  it("walks an export in ranges to the records the store answers one by one, each once and in the list's order", async () => {
    await insertWalked()
    const expected = (await query<{ answer: string }>(
      `SELECT ${recordJson(products, "answer")} AS answer FROM products r WHERE r.tenant_id = $1::uuid AND r.deleted_at IS NULL ORDER BY r.created_at, r.id`,
      [tenant.id]
    )).map((row) => row.answer)
    const pages: Array<{ chunks: ReadonlyArray<string>; count: number }> = []
    const walked = await host.run(Effect.gen(function* () {
      const engine = yield* ResourceEngine
      const principal = yield* operatorPrincipal(tenant.id, "test")
      return yield* engine.walkAnswers(products, principal, [], 1000, (chunks, count) => Effect.sync(() => pages.push({ chunks, count })))
    }))
    expect(pages.length).toBeGreaterThanOrEqual(3)
    for (const page of pages) expect(page.chunks.join("\n").split("\n")).toHaveLength(page.count)
    expect(walked).toBe(expected.length)
    expect(pages.map((page) => page.chunks.join("\n")).join("\n")).toBe(expected.join("\n"))
    // A range past 64 KB comes in chunks of whole lines, each under V8's 128 KB of a young string (a large one is slow in the host).
    expect(pages.some((page) => page.chunks.length > 1)).toBe(true)
    for (const chunk of pages.flatMap((page) => page.chunks)) expect(chunk.length).toBeLessThan(2 * CHUNK_TEXT)
  })

  it("reads a range whole when records were written into it after its end was found", async () => {
    await insertWalked()
    const expected = (await query<{ answer: string }>(
      `SELECT ${recordJson(products, "answer")} AS answer FROM products r WHERE r.tenant_id = $1::uuid AND r.deleted_at IS NULL ORDER BY r.created_at, r.id LIMIT 300`,
      [tenant.id]
    )).map((row) => row.answer)
    expect(expected).toHaveLength(300)
    const range = await host.run(Effect.gen(function* () {
      const repo = yield* ResourceRepository
      const listed = yield* Effect.fromResult(parseListQuery(listShape(products), [], (yield* CursorSecret).key))
      const end = yield* repo.rangeEnd(products, tenant.id, listed, null, 300)
      // As if the range held 100 records when its end was found, and 200 were written into it since.
      return yield* repo.pageLines(products, tenant.id, listed, { direction: "next", key: null, take: 100, until: end! })
    }))
    expect(range.count).toBe(300)
    expect(range.chunks.join("\n")).toBe(expected.join("\n"))
  })
})

/** The expected embedded list in the order the store answered (the order is the target's default sort, checked by the list tests). */
const sortLike = (answered: unknown, expected: unknown) => {
  if (!Array.isArray(answered) || !Array.isArray(expected)) return expected
  const position = new Map(answered.map((item, index) => [JSON.stringify(item), index]))
  return [...expected].sort((a, b) => (position.get(JSON.stringify(a)) ?? 0) - (position.get(JSON.stringify(b)) ?? 0))
}
