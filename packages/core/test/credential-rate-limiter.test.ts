import * as SqlClient from "effect/sql/SqlClient"
import { Effect, ManagedRuntime } from "effect"
import { TestClock } from "effect/testing"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { storeKinds, testStore } from "../../../test/support/stores.js"
import { credentialLimit, layerCore } from "../src/index.js"
import { makeCredentialRateLimiterSql } from "../src/store/credential-rate-limiter.js"

describe.each(storeKinds)("per-credential rate limiter on %s", (kind) => {
  let runtime: ManagedRuntime.ManagedRuntime<SqlClient.SqlClient, unknown>
  const run = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>) => runtime.runPromise(effect)

  beforeAll(async () => {
    runtime = ManagedRuntime.make(layerCore(testStore(kind)))
    await runtime.runPromise(Effect.void)
  })
  afterAll(() => runtime?.dispose())

  /** Waits, if need be, until the store's minute has room for a short test, so no window turns over during it. */
  const awaitFreshMinute = async () => {
    const [row] = await run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ second: number }>`SELECT extract(second FROM now())::float8 AS second`))
    if (row.second > 50) await new Promise((resolve) => setTimeout(resolve, (61 - row.second) * 1000))
  }

  const usedInStore = (credential: string) =>
    run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql<{ used: number }>`SELECT coalesce(sum(used), 0)::int AS used FROM credential_rate_windows WHERE key = ${`cred:${credential}`}`)).then((rows) => rows[0].used)

  it("allows a burst of 100 in the same instant, refuses the 101st for a second's fraction, then allows again", async () => {
    await awaitFreshMinute()
    const credential = `key:${randomUUID()}`
    const limit = credentialLimit()
    const [burst, refused, later] = await run(
      Effect.gen(function* () {
        const limiter = yield* makeCredentialRateLimiterSql
        const burst = yield* Effect.forEach(Array.from({ length: 100 }), () => limiter.hit(credential, limit))
        const refused = yield* limiter.hit(credential, limit)
        // At 100 a second a request's worth comes back in 10 ms.
        yield* TestClock.adjust("10 millis")
        const later = yield* limiter.hit(credential, limit)
        return [burst, refused, later] as const
      }).pipe(Effect.provide(TestClock.layer()))
    )
    expect(burst.every((decision) => decision.allowed)).toBe(true)
    expect(burst[0]).toMatchObject({ limit: 6000, remaining: 5999 })
    expect(refused).toMatchObject({ allowed: false, limit: 6000, remaining: 0, resetSeconds: 1 })
    expect(later.allowed).toBe(true)
  })

  it("goes to the store once per leased slice: 150 requests at the default limit cost two leases of 100", async () => {
    await awaitFreshMinute()
    const credential = `key:${randomUUID()}`
    const limit = credentialLimit()
    await run(
      Effect.gen(function* () {
        const limiter = yield* makeCredentialRateLimiterSql
        for (let i = 0; i < 150; i++) {
          // 50 a second: under the burst, so only the minute counts.
          yield* TestClock.adjust("20 millis")
          expect((yield* limiter.hit(credential, limit)).allowed).toBe(true)
        }
      }).pipe(Effect.provide(TestClock.layer()))
    )
    expect(await usedInStore(credential)).toBe(200)
  })

  it("never lets hosts together exceed the minute", async () => {
    await awaitFreshMinute()
    const credential = `key:${randomUUID()}`
    const limit = credentialLimit(300)
    const allowed = await run(
      Effect.gen(function* () {
        const hosts = [yield* makeCredentialRateLimiterSql, yield* makeCredentialRateLimiterSql, yield* makeCredentialRateLimiterSql]
        let allowed = 0
        for (let i = 0; i < 400; i++) {
          yield* TestClock.adjust("20 millis")
          if ((yield* hosts[i % 3].hit(credential, limit)).allowed) allowed++
        }
        return allowed
      }).pipe(Effect.provide(TestClock.layer()))
    )
    // Each host may strand at most one slice (5 at 300 a minute) unspent.
    expect(allowed).toBeLessThanOrEqual(300)
    expect(allowed).toBeGreaterThanOrEqual(300 - 3 * 5)
    expect(await usedInStore(credential)).toBe(300)
  })

  it("counts exactly at small limits (one request per lease) across hosts", async () => {
    await awaitFreshMinute()
    const credential = `key:${randomUUID()}`
    const limit = credentialLimit(5)
    const decisions = await run(
      Effect.gen(function* () {
        const a = yield* makeCredentialRateLimiterSql
        const b = yield* makeCredentialRateLimiterSql
        return yield* Effect.forEach(Array.from({ length: 7 }, (_, i) => i), (i) => (i % 2 === 0 ? a : b).hit(credential, limit))
      })
    )
    expect(decisions.map((decision) => decision.allowed)).toEqual([true, true, true, true, true, false, false])
    expect(decisions.slice(0, 5).map((decision) => decision.remaining)).toEqual([4, 3, 2, 1, 0])
  })
})
