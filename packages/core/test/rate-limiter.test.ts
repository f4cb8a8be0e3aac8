import { describe, expect, it } from "@effect/vitest"
import * as SqlClient from "effect/sql/SqlClient"
import { Effect, Layer, ManagedRuntime } from "effect"
import { TestClock } from "effect/testing"
import { randomBytes, randomUUID } from "node:crypto"
import { afterAll, beforeAll } from "vitest"
import { storeKinds, testStore } from "../../../test/support/stores.js"
import { layerCore } from "../src/index.js"
import { layerRateLimiterMemory, layerRateLimiterMemoryWith } from "../src/ratelimit/memory.js"
import { type RateLimit, type RateLimitDecision, RateLimiter, TOKEN_LIMIT } from "../src/ratelimit/rate-limiter.js"
import { layerRateLimiterSql, makeRateLimiterSql } from "../src/store/rate-limiter.js"

type Limiter = RateLimiter["Service"]

const hitTimes = (limiter: Limiter, key: string, times: number, rule: RateLimit = TOKEN_LIMIT) =>
  Effect.forEach(Array.from({ length: times }), () => limiter.hit(key, rule))

const allowedCount = (decisions: ReadonlyArray<RateLimitDecision>) => decisions.filter((decision) => decision.allowed).length

const sqlLayer = (kind: (typeof storeKinds)[number]) => layerRateLimiterSql.pipe(Layer.provideMerge(layerCore(testStore(kind))))

describe.each(storeKinds)("SQL rate limiter on %s", (kind) => {
  let runtime: ManagedRuntime.ManagedRuntime<RateLimiter | SqlClient.SqlClient, unknown>
  const run = <A, E>(effect: Effect.Effect<A, E, RateLimiter | SqlClient.SqlClient>) => runtime.runPromise(effect)
  const withLimiter = <A, E>(use: (limiter: Limiter) => Effect.Effect<A, E, SqlClient.SqlClient>) => run(Effect.flatMap(RateLimiter, use))

  beforeAll(async () => {
    runtime = ManagedRuntime.make(sqlLayer(kind))
    await runtime.runPromise(Effect.void)
  })
  afterAll(() => runtime?.dispose())

  it("allows the 10th hit and refuses the 11th with remaining 0 and a reset within the window", async () => {
    const decisions = await withLimiter((limiter) => hitTimes(limiter, `test:${randomUUID()}`, 11))
    expect(decisions.map((decision) => decision.remaining)).toEqual([9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 0])
    expect(decisions[9]).toMatchObject({ allowed: true, limit: 10, remaining: 0 })
    expect(decisions[10]).toMatchObject({ allowed: false, limit: 10, remaining: 0 })
    for (const decision of decisions) {
      expect(decision.resetSeconds).toBeGreaterThanOrEqual(1)
      expect(decision.resetSeconds).toBeLessThanOrEqual(60)
    }
  })

  it("counts separate keys separately", async () => {
    const [first, second] = await withLimiter((limiter) =>
      Effect.all([hitTimes(limiter, `test:${randomUUID()}`, 11), hitTimes(limiter, `test:${randomUUID()}`, 1)]))
    expect(first[10].allowed).toBe(false)
    expect(second[0]).toMatchObject({ allowed: true, remaining: 9 })
  })

  it("shares counters between limiter instances on one database", async () => {
    const key = `test:${randomUUID()}`
    const decisions = await withLimiter((first) =>
      Effect.gen(function* () {
        // A second instance built on its own, as another host's would be.
        const second = yield* RateLimiter.pipe(Effect.provide(Layer.fresh(layerRateLimiterSql)))
        const a = yield* hitTimes(first, key, 5)
        const b = yield* hitTimes(second, key, 5)
        return [...a, ...b, yield* first.hit(key, TOKEN_LIMIT), yield* second.hit(key, TOKEN_LIMIT)]
      }))
    expect(decisions.map((decision) => decision.allowed)).toEqual([...Array(10).fill(true), false, false])
    expect(decisions[9].remaining).toBe(0)
  })

  it.runIf(kind === "postgres")("shares counters with a second host on the same PostgreSQL database", async () => {
    const other = ManagedRuntime.make(sqlLayer(kind))
    try {
      await other.context()
      const key = `test:${randomUUID()}`
      await withLimiter((limiter) => hitTimes(limiter, key, 7))
      const fromOther = await other.runPromise(Effect.flatMap(RateLimiter, (limiter) => hitTimes(limiter, key, 4)))
      expect(fromOther.map((decision) => decision.allowed)).toEqual([true, true, true, false])
      expect(fromOther[2].remaining).toBe(0)
      const back = await run(Effect.flatMap(RateLimiter, (limiter) => limiter.hit(key, TOKEN_LIMIT)))
      expect(back.allowed).toBe(false)
    } finally {
      await other.dispose()
    }
  })

  it("allows exactly the limit among concurrent hits", async () => {
    const key = `test:${randomUUID()}`
    const decisions = await withLimiter((limiter) =>
      Effect.all(Array.from({ length: 30 }, () => limiter.hit(key, TOKEN_LIMIT)), { concurrency: 20 }))
    expect(allowedCount(decisions)).toBe(10)
    expect(decisions.filter((decision) => !decision.allowed).every((decision) => decision.remaining === 0)).toBe(true)
    // Refused hits are not counted: the row stops at the limit.
    const rows = await run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ count: number }>`SELECT cardinality(hits) AS count FROM rate_limit_windows WHERE key = ${key}`))
    expect(rows).toEqual([{ count: 10 }])
  })

  it("forgets a key's hits on reset, and only that key's", async () => {
    const [key, other] = [`test:${randomUUID()}`, `test:${randomUUID()}`]
    const [after, untouched] = await withLimiter((limiter) =>
      Effect.gen(function* () {
        yield* hitTimes(limiter, key, 10)
        yield* hitTimes(limiter, other, 10)
        yield* limiter.reset(key)
        return [yield* limiter.hit(key, TOKEN_LIMIT), yield* limiter.hit(other, TOKEN_LIMIT)]
      }))
    expect(after).toMatchObject({ allowed: true, remaining: 9 })
    expect(untouched).toMatchObject({ allowed: false })
  })

  it("counts keys too long for an index row (caller input) by their hash", async () => {
    const prefix = randomBytes(16_000).toString("hex")
    const decisions = await withLimiter((limiter) =>
      Effect.all([limiter.hit(`${prefix}a`, TOKEN_LIMIT), limiter.hit(`${prefix}a`, TOKEN_LIMIT), limiter.hit(`${prefix}b`, TOKEN_LIMIT)]))
    expect(decisions.map((decision) => decision.remaining)).toEqual([9, 8, 9])
  })

  it("deletes expired counters and keeps live ones", async () => {
    const expired = `test:${randomUUID()}`
    const live = `test:${randomUUID()}`
    const remaining = await run(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        yield* sql`INSERT INTO rate_limit_windows (key, hits, expires_at)
          VALUES (${expired}, ARRAY[now() - interval '2 minutes'], now() - interval '1 minute')`
        const limiter = yield* makeRateLimiterSql({ cleanupProbability: 1 })
        yield* limiter.hit(live, TOKEN_LIMIT)
        return yield* sql<{ key: string }>`SELECT key FROM rate_limit_windows WHERE key IN (${expired}, ${live})`
      })
    )
    expect(remaining).toEqual([{ key: live }])
  })

  /** A key whose log holds `limit` hits made `secondsAgo` (by the database clock): a burst at the end of the last minute. */
  const seed = (key: string, secondsAgo: number, count = TOKEN_LIMIT.limit) =>
    run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql`INSERT INTO rate_limit_windows (key, hits, expires_at)
        SELECT ${key}, array_agg(now() - make_interval(secs => ${secondsAgo}::float8) ORDER BY g), now() + interval '1 minute'
        FROM generate_series(1, ${count}::int) g`))

  it("refuses a burst right after a full window's worth (no second burst across a minute boundary)", async () => {
    const key = `test:${randomUUID()}`
    await seed(key, 2)
    const decisions = await run(Effect.flatMap(RateLimiter, (limiter) => hitTimes(limiter, key, 3)))
    expect(decisions.map((decision) => decision.allowed)).toEqual([false, false, false])
    // The burst leaves the window 60 s after it was made: in about 58 s.
    for (const decision of decisions) {
      expect(decision.resetSeconds).toBeGreaterThanOrEqual(57)
      expect(decision.resetSeconds).toBeLessThanOrEqual(59)
    }
  })

  it("allows again once the hits are a window old, and counts only those still in the window", async () => {
    const gone = `test:${randomUUID()}`
    await seed(gone, 61)
    const fresh = await run(Effect.flatMap(RateLimiter, (limiter) => limiter.hit(gone, TOKEN_LIMIT)))
    expect(fresh).toMatchObject({ allowed: true, remaining: 9 })
    const half = `test:${randomUUID()}`
    await seed(half, 30, 4)
    const decisions = await run(Effect.flatMap(RateLimiter, (limiter) => hitTimes(limiter, half, 7)))
    expect(decisions.map((decision) => decision.remaining)).toEqual([5, 4, 3, 2, 1, 0, 0])
    expect(decisions[6].allowed).toBe(false)
    // The oldest hit counted is 30 s old: one hit frees in about 30 s.
    expect(decisions[6].resetSeconds).toBeGreaterThanOrEqual(29)
    expect(decisions[6].resetSeconds).toBeLessThanOrEqual(31)
  })
})

describe("memory rate limiter", () => {
  const RULE: RateLimit = { limit: 10, windowSeconds: 60 }
  const withMemory = <A, E>(use: (limiter: Limiter) => Effect.Effect<A, E>, layer = layerRateLimiterMemory) =>
    Effect.flatMap(RateLimiter, use).pipe(Effect.provide(layer))

  it.effect("refuses the 11th hit and allows again once the window rolls over", () =>
    withMemory((limiter) =>
      Effect.gen(function* () {
        const first = yield* hitTimes(limiter, "client", 11, RULE)
        expect(first[9]).toMatchObject({ allowed: true, remaining: 0, resetSeconds: 60 })
        expect(first[10]).toMatchObject({ allowed: false, remaining: 0, resetSeconds: 60 })
        yield* TestClock.adjust("59 seconds")
        expect(yield* limiter.hit("client", RULE)).toMatchObject({ allowed: false, resetSeconds: 1 })
        yield* TestClock.adjust("1 second")
        expect(yield* limiter.hit("client", RULE)).toMatchObject({ allowed: true, remaining: 9, resetSeconds: 60 })
      })))

  it.effect("forgets a key's hits on reset, and only that key's", () =>
    withMemory((limiter) =>
      Effect.gen(function* () {
        yield* hitTimes(limiter, "reset", 10, RULE)
        yield* hitTimes(limiter, "kept", 10, RULE)
        yield* limiter.reset("reset")
        expect(yield* limiter.hit("reset", RULE)).toMatchObject({ allowed: true, remaining: 9 })
        expect((yield* limiter.hit("kept", RULE)).allowed).toBe(false)
      })))

  it.effect("refuses a second burst across a minute boundary: the window slides", () =>
    withMemory((limiter) =>
      Effect.gen(function* () {
        yield* TestClock.adjust("59 seconds")
        expect(allowedCount(yield* hitTimes(limiter, "edge", 10, RULE))).toBe(10)
        yield* TestClock.adjust("2 seconds")
        // A fixed window would start over at 60 s and allow 10 more here.
        expect(yield* limiter.hit("edge", RULE)).toMatchObject({ allowed: false, remaining: 0, resetSeconds: 58 })
        yield* TestClock.adjust("57 seconds")
        expect((yield* limiter.hit("edge", RULE)).allowed).toBe(false)
        yield* TestClock.adjust("1 second")
        expect(yield* limiter.hit("edge", RULE)).toMatchObject({ allowed: true, remaining: 9 })
      })))

  it.effect("never allows more than the limit in any window, hit every second for five minutes", () =>
    withMemory((limiter) =>
      Effect.gen(function* () {
        const allowedAt: Array<number> = []
        for (let second = 0; second < 300; second++) {
          if ((yield* limiter.hit("steady", RULE)).allowed) allowedAt.push(second)
          yield* TestClock.adjust("1 second")
        }
        for (const start of allowedAt) expect(allowedAt.filter((at) => at >= start && at < start + 60).length).toBeLessThanOrEqual(10)
        // And it does not starve the caller: 10 per minute get through.
        expect(allowedAt.length).toBe(50)
      })))

  it.effect("counts separate keys separately and allows exactly the limit among concurrent hits", () =>
    withMemory((limiter) =>
      Effect.gen(function* () {
        const decisions = yield* Effect.all(Array.from({ length: 30 }, () => limiter.hit("busy", RULE)), { concurrency: 20 })
        expect(allowedCount(decisions)).toBe(10)
        expect(yield* limiter.hit("quiet", RULE)).toMatchObject({ allowed: true, remaining: 9 })
      })))

  it.effect("forgets the oldest key once more keys than the cap are tracked", () =>
    withMemory((limiter) =>
      Effect.gen(function* () {
        const once: RateLimit = { limit: 1, windowSeconds: 60 }
        expect((yield* limiter.hit("a", once)).allowed).toBe(true)
        expect((yield* limiter.hit("b", once)).allowed).toBe(true)
        expect((yield* limiter.hit("b", once)).allowed).toBe(false)
        expect((yield* limiter.hit("c", once)).allowed).toBe(true)
        // "a" was the oldest and made room for "c", so it starts over; "c" is still counted.
        expect((yield* limiter.hit("a", once)).allowed).toBe(true)
        expect((yield* limiter.hit("c", once)).allowed).toBe(false)
      }), layerRateLimiterMemoryWith({ maxKeys: 2 })))
})
