import * as fs from "node:fs"
import * as path from "node:path"
import { once } from "node:events"

/**
 * A destination for lines: a file written under a temporary name and renamed once
 * complete (so a failed run never leaves a partial file under the final name), or stdout.
 * Writes wait for the stream to drain, so memory stays flat however many rows pass.
 */
export interface LineSink {
  readonly write: (line: string) => Promise<void>
  /** Several lines, waiting for the stream once (an export's range comes as a few chunks of lines). */
  readonly writeAll: (lines: ReadonlyArray<string>) => Promise<void>
  /** Flushes and, for a file, renames it into place. */
  readonly commit: () => Promise<void>
  /** Removes the temporary file after a failure. */
  readonly abort: () => void
  readonly target: string
}

/**
 * Each line and its break as two writes: a line may be a chunk of an export's page (64 KB), which
 * adding the break to it would copy once more before the stream encodes it. The stream is awaited
 * once, after all of them.
 */
const drainable = (stream: NodeJS.WritableStream) => async (lines: ReadonlyArray<string>) => {
  let full = false
  for (const line of lines) {
    if (!stream.write(line)) full = true
    if (!stream.write("\n")) full = true
  }
  if (full) await once(stream, "drain")
}

export const stdoutSink = (): LineSink => {
  // The reader went away (`erp export … | head`): it has what it wanted, so stop quietly, as
  // other writers into a closed pipe do, instead of reporting a failed export.
  process.stdout.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") process.exit(0)
  })
  const writeAll = drainable(process.stdout)
  return {
    write: (line) => writeAll([line]),
    writeAll,
    commit: async () => undefined,
    abort: () => undefined,
    target: "stdout"
  }
}

export const fileSink = (file: string): LineSink => {
  const final = path.resolve(file)
  const temporary = path.join(path.dirname(final), `.${path.basename(final)}.partial-${process.pid}`)
  const stream = fs.createWriteStream(temporary, { flags: "w" })
  let failure: Error | undefined
  stream.on("error", (error) => (failure = error))
  const write = drainable(stream)
  const writeAll = async (lines: ReadonlyArray<string>) => {
    if (failure) throw failure
    await write(lines)
  }
  return {
    write: (line) => writeAll([line]),
    writeAll,
    commit: async () => {
      stream.end()
      await once(stream, "close")
      if (failure) throw failure
      fs.renameSync(temporary, final)
    },
    abort: () => {
      stream.destroy()
      fs.rmSync(temporary, { force: true })
    },
    target: final
  }
}

/** One CSV cell (RFC 4180): quoted when it holds a comma, quote or line break. */
const cell = (value: unknown): string => {
  if (value === null || value === undefined) return ""
  const text = typeof value === "object" ? JSON.stringify(value) : String(value)
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, "\"\"")}"` : text
}

export const csvLine = (values: ReadonlyArray<unknown>) => values.map(cell).join(",")

/** Splits CSV text into records of cells (quoted cells may hold commas, quotes and line breaks). */
export async function* csvRecords(lines: AsyncIterable<string>): AsyncGenerator<{ readonly cells: Array<string>; readonly line: number }> {
  let cells: Array<string> = []
  let current = ""
  let quoted = false
  let lineNumber = 0
  let startLine = 1
  for await (const raw of lines) {
    lineNumber++
    if (!quoted) {
      startLine = lineNumber
      if (raw === "" && cells.length === 0) continue
    } else current += "\n"
    for (let index = 0; index < raw.length; index++) {
      const char = raw[index]
      if (quoted) {
        if (char === "\"") {
          if (raw[index + 1] === "\"") {
            current += "\""
            index++
          } else quoted = false
        } else current += char
      } else if (char === "\"") quoted = true
      else if (char === ",") {
        cells.push(current)
        current = ""
      } else current += char
    }
    if (!quoted) {
      cells.push(current.replace(/\r$/, ""))
      yield { cells, line: startLine }
      cells = []
      current = ""
    }
  }
  if (quoted) throw new Error(`line ${startLine}: a quoted cell is never closed`)
}
