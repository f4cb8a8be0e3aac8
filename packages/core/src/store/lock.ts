import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"

/** The embedded store allows one process per data folder; a second one must stop with a clear message. */
export class DataDirLocked extends Error {
  readonly _tag = "DataDirLocked"
}

/**
 * What the lock file says of its holder: the process id and the command's name, nothing of
 * its arguments (`erp mcp --api-key sk_…` would leave the key for any local user to read).
 */
interface LockHolder {
  readonly pid: number
  readonly command: string
}

/** The name of this process's command (`erp.js`), never its arguments. */
const commandName = (): string => path.basename(process.argv[1] ?? process.argv0)

/** A holder's name as the message shows it: a lock file written with a whole command line shows its first word only. */
const shownName = (command: unknown): string => (typeof command === "string" ? path.basename(command.trim().split(/\s+/)[0] ?? "") : "") || "unknown command"

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
    const read = JSON.parse(fs.readFileSync(file, "utf8")) as { readonly pid?: unknown; readonly command?: unknown }
    return typeof read.pid === "number" ? { pid: read.pid, command: shownName(read.command) } : undefined
  } catch {
    return undefined
  }
}

/** Only its owner reads or writes the file (0600), whatever the umask allows. */
const tryCreate = (file: string, holder: LockHolder): boolean => {
  try {
    fs.writeFileSync(file, JSON.stringify(holder, null, 2) + "\n", { flag: "wx", mode: 0o600 })
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false
    throw error
  }
}

/**
 * Takes `<dir>/erp.lock` for this process, or fails naming the process that holds it.
 * A lock left by a process that is gone (its pid not running) is taken over.
 */
export const acquireDataDirLock = (dir: string) =>
  Effect.acquireRelease(
    Effect.try({
      try: () => {
        fs.mkdirSync(dir, { recursive: true })
        const file = path.join(dir, "erp.lock")
        const me: LockHolder = { pid: process.pid, command: commandName() }
        for (let attempt = 0; attempt < 3; attempt++) {
          if (tryCreate(file, me)) return file
          const holder = readHolder(file)
          if (holder && isAlive(holder.pid) && holder.pid !== process.pid) {
            throw new DataDirLocked(
              `The embedded store at ${path.resolve(dir)} is in use by process ${holder.pid} ` +
                `(${holder.command}). PGlite allows one process per data folder: ` +
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
