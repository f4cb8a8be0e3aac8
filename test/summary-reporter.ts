import * as fs from "node:fs"
import * as path from "node:path"
import type { Reporter, TestModule } from "vitest/node"

type RunEnd = NonNullable<Reporter["onTestRunEnd"]>

/** What `test/summary.mjs` prints the closing line from. */
export interface RunSummary {
  readonly passed: number
  readonly skipped: number
  readonly failedTests: number
  /** Errors outside any test: a file that failed to load, a failed `beforeAll`/`afterAll`, a file failed for no test. */
  readonly suiteErrors: ReadonlyArray<string>
  readonly unhandledErrors: ReadonlyArray<string>
  /** Why tests were skipped (`context.skip(note)`), with how many. */
  readonly skipNotes: Readonly<Record<string, number>>
  readonly interrupted: boolean
  /** The files that took longest (tests and hooks, plus importing them), slowest first: where the suite's time goes. */
  readonly slowest: ReadonlyArray<{ readonly file: string; readonly seconds: number }>
  /** Every file's seconds, slowest first (`npm run test:durations` keeps them for the sequencer). */
  readonly durations: ReadonlyArray<{ readonly file: string; readonly seconds: number }>
}

const firstLine = (error: { readonly message?: string; readonly name?: string }) =>
  `${error.name ?? "Error"}: ${(error.message ?? "").split("\n")[0]}`

/**
 * Counts every way a run can fail, not only failed tests: vitest's own exit code
 * is non-zero for a file that cannot load or an unhandled error, and the closing
 * line must never say "0 failed" then.
 */
export const summarize = (modules: ReadonlyArray<TestModule>, unhandled: Parameters<RunEnd>[1], reason: Parameters<RunEnd>[2]): RunSummary => {
  let passed = 0
  let skipped = 0
  let failedTests = 0
  const suiteErrors: Array<string> = []
  const skipNotes: Record<string, number> = {}
  const durations: Array<{ readonly file: string; readonly seconds: number }> = []
  for (const module of modules) {
    const file = path.relative(process.cwd(), module.moduleId)
    const diagnostic = module.diagnostic()
    durations.push({ file, seconds: Math.round((diagnostic.duration + diagnostic.collectDuration) / 100) / 10 })
    let moduleFailedTests = 0
    for (const test of module.children.allTests()) {
      const result = test.result()
      if (result.state === "passed") passed++
      else if (result.state === "failed") {
        failedTests++
        moduleFailedTests++
      } else {
        skipped++
        if (result.state === "skipped" && result.note) skipNotes[result.note] = (skipNotes[result.note] ?? 0) + 1
      }
    }
    const errors = [...module.errors(), ...[...module.children.allSuites()].flatMap((suite) => suite.errors())]
    for (const error of errors) suiteErrors.push(`${file}: ${firstLine(error)}`)
    if (module.state() === "failed" && errors.length === 0 && moduleFailedTests === 0) suiteErrors.push(`${file}: failed outside its tests`)
  }
  return {
    passed,
    skipped,
    failedTests,
    suiteErrors,
    unhandledErrors: unhandled.map(firstLine),
    skipNotes,
    interrupted: reason === "interrupted",
    slowest: durations.sort((a, b) => b.seconds - a.seconds).slice(0, 12),
    durations
  }
}

/** Writes the run's summary for `test/summary.mjs` (CI reads its closing line). */
export default class SummaryReporter implements Reporter {
  constructor(private readonly outputFile: string) {}

  onTestRunEnd(modules: Parameters<RunEnd>[0], unhandled: Parameters<RunEnd>[1], reason: Parameters<RunEnd>[2]) {
    fs.writeFileSync(this.outputFile, JSON.stringify(summarize(modules, unhandled, reason), null, 2) + "\n")
  }
}
