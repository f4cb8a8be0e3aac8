import * as SqlClient from "effect/sql/SqlClient"
import { type CatalogTable, CATALOG_FILES, layerCore, layerStore, readSnapshot, type StoreLocation } from "@erp/core"
import { Effect, ManagedRuntime } from "effect"
import { randomUUID } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { erp, json, serve, stop } from "../../../test/support/cli.js"
import { storeKinds, testDataDir } from "../../../test/support/stores.js"

const ITAU = "3fe12489-cf24-5c1f-8431-20e79d761713"
const KGM = "760d4b29-73a0-55f0-a2bc-6060d0f4edf5"
const SAO_PAULO_CITY = 3550308
const BRAZIL = 76
const TABLES = Object.keys(CATALOG_FILES) as Array<CatalogTable>
const SNAPSHOT_COUNTS = Object.fromEntries(TABLES.map((table) => [table, readSnapshot(table).records.length]))

interface CatalogState {
  readonly counts: Record<string, number>
  readonly distinctIds: Record<string, number>
  readonly saoPaulo: { id: number; name: string; state_id: number } | undefined
  readonly brazil: { id: number; iso2: string } | undefined
  readonly itau: { id: string; name: string } | undefined
  readonly kgm: { id: string; code: string } | undefined
}

/** A throwaway PostgreSQL database next to TEST_DATABASE_URL, so reseeding never touches the shared test database. */
const createDatabase = async (base: string) => {
  const name = `erp_seed_${randomUUID().slice(0, 8)}`
  const admin = ManagedRuntime.make(layerStore({ kind: "postgres", url: base }))
  await admin.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`CREATE DATABASE ${name}`)))
  const url = new URL(base)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    drop: async () => {
      await admin.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)))
      await admin.dispose()
    }
  }
}

describe.each(storeKinds)("erp seed catalogs on %s", (kind) => {
  let flags: Array<string>
  let location: StoreLocation
  let cleanup: () => Promise<void>
  const seeds: Array<Record<string, number>> = []
  const states: Array<CatalogState> = []

  /** Opens the store in this process (the CLI must not run meanwhile: one process per folder), runs `effect`, closes it. */
  const withStore = async <A>(effect: Effect.Effect<A, unknown, SqlClient.SqlClient>): Promise<A> => {
    const runtime = ManagedRuntime.make(layerCore(location))
    try {
      return await runtime.runPromise(effect)
    } finally {
      await runtime.dispose()
    }
  }

  const readState = () =>
    withStore(Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const counts: Record<string, number> = {}
      const distinctIds: Record<string, number> = {}
      for (const table of TABLES) {
        const [row] = yield* sql<{ total: number; ids: number }>`SELECT count(*)::int AS total, count(DISTINCT id)::int AS ids FROM ${sql.literal(table)}`
        counts[table] = row.total
        distinctIds[table] = row.ids
      }
      const [saoPaulo] = yield* sql<{ id: number; name: string; state_id: number }>`SELECT id, name, state_id FROM cities WHERE id = ${SAO_PAULO_CITY}`
      const [brazil] = yield* sql<{ id: number; iso2: string }>`SELECT id, iso2 FROM countries WHERE iso2 = 'BR'`
      const [itau] = yield* sql<{ id: string; name: string }>`SELECT id::text AS id, name FROM banks WHERE country_code = 'BR' AND code = '341'`
      const [kgm] = yield* sql<{ id: string; code: string }>`SELECT id::text AS id, code FROM units_of_measurement WHERE code = 'KGM'`
      return { counts, distinctIds, saoPaulo, brazil, itau, kgm } satisfies CatalogState
    }).pipe(Effect.orDie))

  const seed = async () => {
    const counts = json(await erp([...flags, "seed", "catalogs", "--json"]))
    seeds.push(counts)
    return counts as Record<string, number>
  }

  beforeAll(async () => {
    if (kind === "pglite") {
      const dir = testDataDir()
      flags = ["--data-dir", dir]
      location = { kind: "pglite", dataDir: dir }
      cleanup = async () => fs.rmSync(dir, { recursive: true, force: true })
    } else {
      const database = await createDatabase(process.env.TEST_DATABASE_URL!)
      flags = ["--database-url", database.url]
      location = { kind: "postgres", url: database.url }
      cleanup = database.drop
    }
  })
  afterAll(() => cleanup?.())

  it("prints the count of every catalog as JSON, equal to the bundled snapshots", async () => {
    const counts = await seed()
    expect(counts).toEqual(SNAPSHOT_COUNTS)
    expect(counts.countries).toBeGreaterThanOrEqual(249)
    expect(counts.states).toBeGreaterThanOrEqual(27 + 51)
    expect(counts.cities).toBeGreaterThanOrEqual(5570)
    expect(counts.banks).toBeGreaterThan(500)
    expect(counts.units_of_measurement).toBeGreaterThan(0)
    expect(counts.payment_methods).toBeGreaterThan(0)
  }, 60_000)

  it("stores exactly the snapshot's rows after a seed, one per id", async () => {
    const state = await readState()
    states.push(state)
    expect(state.counts).toEqual(SNAPSHOT_COUNTS)
    expect(state.distinctIds).toEqual(SNAPSHOT_COUNTS)
  }, 60_000)

  it("keeps the well-known ids: São Paulo 3550308, Brazil 76, Itaú's and KGM's UUIDs", () => {
    const [state] = states
    expect(state.saoPaulo).toEqual({ id: SAO_PAULO_CITY, name: "São Paulo", state_id: 7635 })
    expect(state.brazil).toEqual({ id: BRAZIL, iso2: "BR" })
    expect(state.itau).toEqual({ id: ITAU, name: "Itaú" })
    expect(state.kgm).toEqual({ id: KGM, code: "KGM" })
  })

  it("prints the same counts when seeding the same store again", async () => {
    expect(await seed()).toEqual(seeds[0])
  }, 60_000)

  it("never duplicates rows on a reseed: counts and ids unchanged", async () => {
    const state = await readState()
    states.push(state)
    expect(state.counts).toEqual(states[0].counts)
    expect(state.distinctIds).toEqual(states[0].counts)
  }, 60_000)

  it("keeps every well-known id across reseeds", () => {
    const [first, second] = states
    expect(second.saoPaulo).toEqual(first.saoPaulo)
    expect(second.brazil).toEqual(first.brazil)
    expect(second.itau).toEqual(first.itau)
    expect(second.kgm).toEqual(first.kgm)
  })

  it("prints one line per catalog without --json", async () => {
    const result = await erp([...flags, "seed", "catalogs"])
    expect(result.code, result.stderr).toBe(0)
    for (const table of TABLES) expect(result.stdout).toContain(`${table}: ${SNAPSHOT_COUNTS[table]}\n`)
  }, 60_000)

  it("puts back a changed or removed catalog row under its own id", async () => {
    await withStore(Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE banks SET name = 'Tampered' WHERE id = ${ITAU}::uuid`
      yield* sql`DELETE FROM cities WHERE id = ${SAO_PAULO_CITY}`
    }).pipe(Effect.orDie))
    expect((await readState()).saoPaulo).toBeUndefined()
    await seed()
    const state = await readState()
    expect(state.itau).toEqual({ id: ITAU, name: "Itaú" })
    expect(state.saoPaulo).toEqual({ id: SAO_PAULO_CITY, name: "São Paulo", state_id: 7635 })
    expect(state.counts).toEqual(SNAPSHOT_COUNTS)
  }, 90_000)

  it("serves the reseeded catalogs over HTTP under the same ids", async () => {
    const server = await serve(flags)
    try {
      // The store has no tenant yet, so the first start prints a demo admin key.
      const token = /(sk_[a-z0-9]+_[A-Za-z0-9]+)/.exec(server.output())?.[1]
      expect(token, server.output()).toBeDefined()
      const get = async (pathAndQuery: string) => {
        const response = await fetch(server.url + pathAndQuery, { headers: { authorization: `Bearer ${token}` } })
        expect(response.status, pathAndQuery).toBe(200)
        return (await response.json()) as any
      }
      expect((await get(`/cities/${SAO_PAULO_CITY}`)).name).toBe("São Paulo")
      expect((await get("/countries/iso2/BR")).id).toBe(BRAZIL)
      expect((await get("/banks/code/341")).id).toBe(ITAU)
      expect((await get("/units-of-measurement/code/KGM")).id).toBe(KGM)
      let countries = 0
      let page = await get("/countries?limit=100")
      countries += page.data.length
      while (page.pagination.has_next_page) {
        page = await get(`/countries?limit=100&cursor=${encodeURIComponent(page.pagination.next_cursor)}`)
        countries += page.data.length
      }
      expect(countries).toBe(SNAPSHOT_COUNTS.countries)
      const sp = await get("/cities?state_id=7635&limit=100")
      expect(sp.data.every((city: { state_id: number }) => city.state_id === 7635)).toBe(true)
    } finally {
      await stop(server.child)
    }
  }, 90_000)

  it.runIf(kind === "pglite")("refuses to seed a folder another process holds without serving it, and changes nothing", async () => {
    const server = await serve(flags)
    try {
      // A holder that serves no socket (here it was removed): nothing else may open the folder.
      fs.rmSync(path.join(flags[1], "run", ".s.PGSQL.5432"))
      const result = await erp([...flags, "seed", "catalogs", "--json"])
      expect(result.code).toBe(1)
      expect(result.stderr).toContain(`in use by process ${server.child.pid}`)
      expect(result.stdout).toBe("")
    } finally {
      await stop(server.child)
    }
    expect((await readState()).counts).toEqual(SNAPSHOT_COUNTS)
  }, 90_000)
})
