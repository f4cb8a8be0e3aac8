import { describe, expect, it } from "@effect/vitest"
import { Cause } from "effect"
import { storeFailureOf } from "../src/index.js"

/** A driver's error with its SQLSTATE, wrapped as the store's SQL errors wrap it. */
const failed = (code: string) => Cause.die({ message: "Failed to execute statement", cause: { code, message: "from the server" } })

describe("store failures a client can retry", () => {
  it("tells a deadlock, a serialization failure and a lock not available from a defect", () => {
    expect(["40P01", "40001", "55P03"].map((code) => storeFailureOf(failed(code)))).toEqual(["Contention", "Contention", "Contention"])
    expect(storeFailureOf(failed("57014"))).toBe("StatementTimeout")
    expect(storeFailureOf(failed("57P01"))).toBe("ConnectionLost")
    expect(storeFailureOf(failed("23505"))).toBeUndefined()
    expect(storeFailureOf(failed("42P01"))).toBeUndefined()
  })
})
