import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

/** The embedded store allows one process per data folder; a second one must stop with a clear message. */
export class DataDirLocked extends Error {
  readonly _tag = "DataDirLocked"
}

interface LockHolder {
  readonly pid: number
  readonly host: string
  readonly command: string
  readonly started_at: string
}

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

const readHolder = (file: string): LockHolder | undefined => {
  try {
    return JSON.parse(fs.readFileSync(file, "utf8")) as LockHolder
  } catch {
    return undefined
  }
}

const tryCreate = (file: string, holder: LockHolder): boolean => {
  try {
    fs.writeFileSync(file, JSON.stringify(holder, null, 2) + "\n", { flag: "wx" })
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false
    throw error
  }
}

/**
 * Takes `<dir>/erp.lock` for this process, or fails naming the process that holds it.
 * A lock left by a process that is gone (same host, pid not running) is taken over.
 */
export const acquireDataDirLock = (dir: string) =>
  Effect.acquireRelease(
    Effect.try({
      try: () => {
        fs.mkdirSync(dir, { recursive: true })
        const file = path.join(dir, "erp.lock")
        const me: LockHolder = {
          pid: process.pid,
          host: os.hostname(),
          command: process.argv.slice(1).join(" "),
          started_at: new Date().toISOString()
        }
        for (let attempt = 0; attempt < 3; attempt++) {
          if (tryCreate(file, me)) return file
          const holder = readHolder(file)
          if (holder && (holder.host !== me.host || isAlive(holder.pid)) && holder.pid !== process.pid) {
            throw new DataDirLocked(
              `The embedded store at ${path.resolve(dir)} is in use by process ${holder.pid} on ${holder.host} ` +
                `(${holder.command}, since ${holder.started_at}). PGlite allows one process per data folder: ` +
                `stop that process, point ERP_DATA_DIR at another folder, or use PostgreSQL (DATABASE_URL) to share one store.`
            )
          }
          fs.rmSync(file, { force: true })
        }
        throw new DataDirLocked(`Could not take the lock file ${file}`)
      },
      catch: (error) => (error instanceof DataDirLocked ? error : new DataDirLocked(String(error)))
    }),
    (file) =>
      Effect.sync(() => {
        const holder = readHolder(file)
        if (holder?.pid === process.pid) fs.rmSync(file, { force: true })
      })
  )
