import * as fs from "node:fs"
import * as path from "node:path"
import { BaseSequencer, type TestSpecification } from "vitest/node"

/**
 * Two workers finish together only when the longest files start first: a file of minutes left to
 * the end runs alone while the other worker idles. vitest orders by the durations it cached on
 * this machine; a fresh clone (CI) has none, so the seconds each file took in a full run
 * (`test/file-seconds.json`, written by `npm run test:durations`) order it instead. A file not
 * listed there is new and runs first, as vitest runs unknown files first.
 */
const seconds: Readonly<Record<string, number>> = JSON.parse(fs.readFileSync(new URL("./file-seconds.json", import.meta.url), "utf8"))

export default class LongestFirst extends BaseSequencer {
  override async sort(files: Array<TestSpecification>): Promise<Array<TestSpecification>> {
    const ordered = await super.sort(files)
    const weight = (spec: TestSpecification) => seconds[path.relative(process.cwd(), spec.moduleId)] ?? Number.POSITIVE_INFINITY
    return [...ordered].sort((a, b) => weight(b) - weight(a))
  }
}
