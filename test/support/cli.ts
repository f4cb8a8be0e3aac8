import { type ChildProcess, spawn } from "node:child_process"
import * as path from "node:path"
import { expect } from "vitest"

export const BIN = path.resolve("packages/cli/bin/erp.js")

export interface CliResult {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Runs `erp …` as a user would (built CLI, own process); DATABASE_URL unset unless given. */
export const erp = (args: ReadonlyArray<string>, options: { env?: Record<string, string>; input?: string } = {}): Promise<CliResult> =>
  new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, DATABASE_URL: "", ...options.env } })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk) => (stdout += chunk))
    child.stderr.on("data", (chunk) => (stderr += chunk))
    child.on("close", (code) => resolve({ code, stdout, stderr }))
    child.stdin.end(options.input ?? "")
  })

/** The one JSON object a `--json` command prints; the command must have succeeded. */
export const json = (result: CliResult) => {
  expect(result.code, result.stderr).toBe(0)
  return JSON.parse(result.stdout)
}

/** Starts `erp serve` on a free port and resolves once it prints its address; `env` adds to the environment. */
export const serve = (args: ReadonlyArray<string>, serveArgs: ReadonlyArray<string> = [], env: Record<string, string> = {}) =>
  new Promise<{ child: ChildProcess; url: string; output: () => string }>((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args, "serve", "--port", "0", ...serveArgs], { env: { ...process.env, DATABASE_URL: "", ...env } })
    let output = ""
    const timer = setTimeout(() => reject(new Error(`serve did not start: ${output}`)), 60_000)
    const onData = (chunk: Buffer) => {
      output += chunk
      const match = /listening on (http:\/\/\S+)/.exec(output)
      if (match) {
        clearTimeout(timer)
        setTimeout(() => resolve({ child, url: match[1], output: () => output }), 300)
      }
    }
    child.stdout.on("data", onData)
    child.stderr.on("data", onData)
    child.on("exit", (code) => reject(new Error(`serve exited with ${code}: ${output}`)))
  })

/** Stops a served host with SIGTERM and waits until it has let go of its store. */
export const stop = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null) return resolve()
    child.once("exit", () => resolve())
    child.kill("SIGTERM")
  })
