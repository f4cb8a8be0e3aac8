import { acquireDataDirLock } from "@erp/core"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "vitest"

const folders: Array<string> = []
const folder = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "erp-lock-"))
  folders.push(dir)
  return dir
}
afterEach(() => {
  for (const dir of folders.splice(0)) fs.rmSync(dir, { recursive: true, force: true })
})

describe("the data folder's lock file", () => {
  it("holds the process id and the command's name only, readable by its owner only, and is gone once released", async () => {
    const dir = folder()
    const file = path.join(dir, "erp.lock")
    await Effect.runPromise(Effect.scoped(Effect.gen(function* () {
      yield* acquireDataDirLock(dir)
      expect(JSON.parse(fs.readFileSync(file, "utf8"))).toEqual({ pid: process.pid, command: path.basename(process.argv[1]) })
      expect((fs.statSync(file).mode & 0o777).toString(8)).toBe("600")
    })))
    expect(fs.existsSync(file)).toBe(false)
  })

  it("names a live holder by its pid and command name, never the arguments a lock file of a whole command line holds", async () => {
    const dir = folder()
    const holder = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60000)"], { stdio: "ignore" })
    try {
      const secret = "sk_live_0123456789abcdefSECRET"
      fs.writeFileSync(path.join(dir, "erp.lock"), JSON.stringify({ pid: holder.pid, command: `/opt/erp/bin/erp.js mcp --api-key ${secret}` }))
      const { message } = await Effect.runPromise(Effect.flip(Effect.scoped(acquireDataDirLock(dir))))
      expect(message).toContain(`in use by process ${holder.pid} (erp.js)`)
      expect(message).not.toContain(secret)
      expect(message).not.toContain("--api-key")
    } finally {
      holder.kill()
    }
  })

  it("takes over a lock whose process is gone", async () => {
    const dir = folder()
    const gone = spawn(process.execPath, ["-e", ""], { stdio: "ignore" })
    await new Promise((resolve) => gone.once("exit", resolve))
    fs.writeFileSync(path.join(dir, "erp.lock"), JSON.stringify({ pid: gone.pid, command: "erp.js" }))
    await Effect.runPromise(Effect.scoped(Effect.gen(function* () {
      yield* acquireDataDirLock(dir)
      expect(JSON.parse(fs.readFileSync(path.join(dir, "erp.lock"), "utf8")).pid).toBe(process.pid)
    })))
  })
})
