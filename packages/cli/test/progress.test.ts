import { afterEach, beforeEach, describe, expect, it, vi } from "vitest"
import { startProgress } from "../src/progress.js"

/** Where stderr is not a terminal (logs, CI), progress is a plain line every few seconds. */
describe("progress lines", () => {
  let lines: Array<string>
  beforeEach(() => {
    lines = []
    vi.useFakeTimers()
    vi.spyOn(process.stderr, "write").mockImplementation((chunk) => {
      lines.push(String(chunk))
      return true
    })
  })
  afterEach(() => {
    vi.restoreAllMocks()
    vi.useRealTimers()
  })

  it("says how far a job of known size is, and the time left at the rate so far", () => {
    const progress = startProgress("Exporting sales-orders", { expected: 1_000_000 })
    vi.advanceTimersByTime(5_000)
    progress.add(250_000)
    vi.advanceTimersByTime(5_000)
    progress.finish()
    expect(lines.at(-1)).toMatch(/^Exporting sales-orders: 25%, 30 s left 250,000 rows, 25,000 rows\/s, 10\.0 s\n$/)
  })

  it("never says 100% before the job says it is done, even when the estimate was short", () => {
    const progress = startProgress("Importing products", { unit: "records", expected: 10 })
    progress.add(12)
    vi.advanceTimersByTime(5_000)
    progress.finish()
    expect(lines.at(-1)).toMatch(/^Importing products: 99%, 0 s left 12 records/)
  })

  it("counts without a percentage while the size is unknown, and takes it once known", () => {
    const progress = startProgress("Exporting all")
    progress.add(10)
    vi.advanceTimersByTime(5_000)
    expect(lines.at(-1)).toMatch(/^Exporting all: 10 rows, /)
    progress.expect(40)
    vi.advanceTimersByTime(5_000)
    progress.finish()
    expect(lines.at(-1)).toMatch(/^Exporting all: 25%, /)
  })
})
