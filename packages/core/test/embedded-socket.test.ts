import * as SqlClient from "effect/sql/SqlClient"
import { layerPglite, socketFolder } from "@erp/core"
import { Effect, ManagedRuntime } from "effect"
import * as fs from "node:fs"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { testDataDir } from "../../../test/support/stores.js"

/**
 * The process holding an embedded folder serves it on a socket. PGlite has one session,
 * so a client's transaction must hold it: the holder's own statements wait, and never
 * run inside (or see) the client's uncommitted work.
 */
describe("the embedded store's socket", () => {
  let dir: string
  let holder: ManagedRuntime.ManagedRuntime<SqlClient.SqlClient, unknown>
  const holderQuery = <A extends object>(text: string) =>
    holder.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<A>(text)))
  const connect = async () => {
    const client = new pg.Client({ host: socketFolder(dir), port: 5432, user: "postgres", database: "postgres" })
    await client.connect()
    return client
  }

  beforeAll(async () => {
    dir = testDataDir()
    holder = ManagedRuntime.make(layerPglite({ dataDir: dir }))
    await holder.context()
  })
  afterAll(async () => {
    await holder.dispose()
    expect(fs.existsSync(`${socketFolder(dir)}/.s.PGSQL.5432`)).toBe(false)
    fs.rmSync(dir, { recursive: true, force: true })
  })

  it("answers SQL with the holder's data", async () => {
    const client = await connect()
    try {
      const [row] = (await client.query("SELECT count(*)::int AS n FROM erp_migrations")).rows
      const [own] = await holderQuery<{ n: number }>("SELECT count(*)::int AS n FROM erp_migrations")
      expect(row.n).toBe(own.n)
      expect(row.n).toBeGreaterThan(0)
    } finally {
      await client.end()
    }
  })

  it("keeps the holder's statements out of a client's open transaction", async () => {
    const client = await connect()
    try {
      await client.query("BEGIN")
      await client.query("INSERT INTO erp_settings (key, value) VALUES ('socket-probe', 'uncommitted')")
      const seen = holderQuery<{ n: number }>("SELECT count(*)::int AS n FROM erp_settings WHERE key = 'socket-probe'")
      await new Promise((resolve) => setTimeout(resolve, 200))
      await client.query("ROLLBACK")
      expect((await seen)[0].n).toBe(0)
    } finally {
      await client.end()
    }
  })

  it("rolls back and frees the session when a client leaves mid-transaction", async () => {
    const client = await connect()
    client.on("error", () => undefined)
    await client.query("BEGIN")
    await client.query("INSERT INTO erp_settings (key, value) VALUES ('socket-gone', 'never committed')")
    const seen = holderQuery<{ n: number }>("SELECT count(*)::int AS n FROM erp_settings WHERE key = 'socket-gone'")
    // Gone without a word (no Terminate), as a killed CLI would be.
    ;(client as unknown as { connection: { stream: { destroy: () => void } } }).connection.stream.destroy()
    expect((await seen)[0].n).toBe(0)
    const [state] = await holderQuery<{ open: boolean }>("SELECT now() <> statement_timestamp() AS open")
    expect(state.open).toBe(false)
  })

  it("serves several clients one turn at a time", async () => {
    const clients = await Promise.all([connect(), connect(), connect()])
    try {
      await Promise.all(clients.map(async (client, index) => {
        await client.query("BEGIN")
        await client.query(`INSERT INTO erp_settings (key, value) VALUES ('socket-turn-${index}', 'x')`)
        await client.query("COMMIT")
      }))
      const [row] = await holderQuery<{ n: number }>("SELECT count(*)::int AS n FROM erp_settings WHERE key LIKE 'socket-turn-%'")
      expect(row.n).toBe(3)
    } finally {
      await Promise.all(clients.map((client) => client.end()))
    }
  })
})
