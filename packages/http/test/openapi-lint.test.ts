import { OpenApi } from "effect/http-api"
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { promisify } from "node:util"
import { describe, expect, it } from "vitest"
import { Api } from "../src/api.js"

const run = promisify(execFile)

/**
 * Redocly's linter over the document the code generates (not the committed snapshot), with
 * the repository's redocly.yaml: the recommended rules plus stricter ones. A failure prints
 * each problem with its JSON pointer.
 */
describe("OpenAPI lint", () => {
  it("passes @redocly/cli lint with the recommended rules and redocly.yaml", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "erp-openapi-"))
    const file = path.join(dir, "openapi.json")
    fs.writeFileSync(file, JSON.stringify(OpenApi.fromApi(Api)))
    const outcome = await run(
      process.execPath,
      ["node_modules/@redocly/cli/bin/cli.js", "lint", file, "--config", "redocly.yaml", "--format", "codeframe", "--max-problems", "50"],
      { env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true", NO_COLOR: "1" }, maxBuffer: 16 * 1024 * 1024 }
    ).then(
      ({ stdout, stderr }) => ({ code: 0, output: `${stdout}${stderr}` }),
      (error: { code?: number; stdout?: string; stderr?: string }) => ({ code: error.code ?? 1, output: `${error.stdout ?? ""}${error.stderr ?? ""}` })
    )
    fs.rmSync(dir, { recursive: true, force: true })
    expect(outcome.code, outcome.output).toBe(0)
    expect(outcome.output).toMatch(/Your API description is valid/)
    // Warnings do not fail the linter; they fail this test.
    expect(outcome.output).not.toMatch(/\d+ warnings?\b/)
  }, 60_000)
})
