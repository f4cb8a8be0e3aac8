import { Worker } from "node:worker_threads"
import { identity, textParsers } from "./types.js"

/**
 * The worker's entry, a plain ES module beside this one's source: found at the same path from the
 * sources (tests), the compiled package (`dist/store/`) and the CLI's bundle (whose modules keep
 * the URL of the file they came from), and run by Node as it is.
 */
const WORKER_URL = new URL("../../src/store/pglite-worker.mjs", import.meta.url)

/** PostgreSQL's array types of the types the host parses: the worker splits them, their elements are parsed here. */
const ARRAY_ELEMENT_TYPE: Readonly<Record<number, number>> = { 1016: 20, 1182: 1082, 1115: 1114, 1185: 1184, 1231: 1700 }

type Parser = (text: string) => unknown
type Row = Record<string, unknown>
/** A result as the worker answers it: its rows and its columns' `[name, type oid]`. */
interface ThreadResult {
  readonly rows: Array<unknown>
  readonly fields: ReadonlyArray<readonly [string, number]>
}

const elementsParsed = (value: unknown, parser: Parser): unknown =>
  Array.isArray(value) ? value.map((element) => elementsParsed(element, parser)) : typeof value === "string" ? parser(value) : value

/** The parser of a column of type `oid`, unless its text is kept as it is. */
const parserOf = (oid: number): Parser | undefined => {
  const parser = textParsers[oid]
  if (parser !== undefined) return parser === identity ? undefined : parser
  const element = ARRAY_ELEMENT_TYPE[oid]
  const elementParser = element === undefined ? undefined : textParsers[element]
  if (elementParser === undefined || elementParser === identity) return undefined
  return (text) => elementsParsed(text, elementParser)
}

/**
 * Rows with the host's text parsers applied (store/types.ts: timestamps as ISO strings, bigints
 * as numbers), in place: they are this thread's own copies. The worker answers these types as
 * PostgreSQL's text, so the parsers stay written once, in TypeScript.
 */
const parsed = (result: ThreadResult, rowMode: "object" | "array"): Array<unknown> => {
  for (let column = 0; column < result.fields.length; column++) {
    const [name, oid] = result.fields[column]
    const parser = parserOf(oid)
    if (parser === undefined) continue
    for (const row of result.rows) {
      if (rowMode === "array") {
        const values = row as Array<unknown>
        if (values[column] !== null) values[column] = parser(values[column] as string)
      } else {
        const values = row as Row
        if (values[name] !== null && values[name] !== undefined) values[name] = parser(values[name] as string)
      }
    }
  }
  return result.rows
}

/** A failure the worker sent as data, an Error again with PostgreSQL's fields (code, detail, constraint, …). */
const errorFrom = (data: { readonly message: string; readonly name?: string }): Error => Object.assign(new Error(data.message), data)

export interface PgliteThreadOptions {
  readonly dataDir?: string
  readonly loadDataDir?: Blob
  readonly sharedBuffers: string
}

/** PGlite in a worker thread: every call is an operation the worker runs after those sent before it. */
export interface PgliteThread {
  readonly open: (options: PgliteThreadOptions) => Promise<void>
  readonly query: (sql: string, params: ReadonlyArray<unknown>, rowMode: "object" | "array") => Promise<ReadonlyArray<unknown>>
  /** The simple protocol (several statements at once, no parameters): the rows of each. */
  readonly exec: (sql: string) => Promise<ReadonlyArray<ReadonlyArray<Row>>>
  /** One wire-protocol message of a socket client; its answer handed to `onData` as it comes. Answers whether a transaction is open. */
  readonly protocol: (bytes: Uint8Array, onData: (data: Uint8Array) => void) => Promise<boolean>
  /** The backend back to idle after a socket client left mid-exchange: its transaction rolled back. */
  readonly settle: () => Promise<void>
  readonly dumpDataDir: (compression?: "none" | "gzip" | "auto") => Promise<Blob>
  /** Closes the store and ends the thread; never fails. */
  readonly close: () => Promise<void>
  /** Why the thread stopped (it failed, or the store was closed), while it runs undefined. */
  readonly stopped: () => Error | undefined
}

interface Call {
  readonly resolve: (value: unknown) => void
  readonly reject: (error: Error) => void
  readonly onChunk?: (chunk: Uint8Array) => void
}

type Reply =
  | { readonly id: number; readonly chunk: Uint8Array }
  | { readonly id: number; readonly ok: true; readonly value: unknown }
  | { readonly id: number; readonly ok: false; readonly error: { readonly message: string } }

/**
 * Starts the worker at once (it loads PGlite meanwhile); `open` then opens the store in it. The
 * thread keeps the process alive only while an operation is under way, never for an open store
 * alone: the store's owner closes it.
 */
export const startPgliteThread = (): PgliteThread => {
  const worker = new Worker(WORKER_URL)
  worker.unref()
  const calls = new Map<number, Call>()
  let sequence = 0
  let stopped: Error | undefined

  const stop = (error: Error) => {
    stopped ??= error
    for (const call of calls.values()) call.reject(stopped)
    calls.clear()
  }
  worker.on("message", (reply: Reply) => {
    const call = calls.get(reply.id)
    if (call === undefined) return
    if ("chunk" in reply) return call.onChunk?.(reply.chunk)
    calls.delete(reply.id)
    if (calls.size === 0) worker.unref()
    if (reply.ok) call.resolve(reply.value)
    else call.reject(errorFrom(reply.error))
  })
  worker.on("error", (error) => stop(new Error(`The embedded store's thread failed: ${error.message}`, { cause: error })))
  worker.on("messageerror", (error) => stop(new Error(`The embedded store's thread sent what could not be read: ${error.message}`)))
  worker.on("exit", (code) => stop(new Error(`The embedded store's thread stopped (exit code ${code})`)))

  const send = <A>(message: Record<string, unknown>, transfer: ReadonlyArray<ArrayBuffer> = [], onChunk?: (chunk: Uint8Array) => void): Promise<A> =>
    new Promise<A>((resolve, reject) => {
      if (stopped) return reject(stopped)
      const id = ++sequence
      try {
        worker.postMessage({ ...message, id }, transfer as Array<ArrayBuffer>)
      } catch (error) {
        return reject(error instanceof Error ? error : new Error(String(error)))
      }
      if (calls.size === 0) worker.ref()
      calls.set(id, { resolve: resolve as (value: unknown) => void, reject, ...(onChunk ? { onChunk } : {}) })
    })

  return {
    open: async (options) => {
      const dump = options.loadDataDir ? await options.loadDataDir.arrayBuffer() : undefined
      await send({
        op: "open",
        dataDir: options.dataDir,
        loadDataDir: dump,
        sharedBuffers: options.sharedBuffers,
        // Arrays of them are split by the worker into their elements' text.
        textTypes: Object.keys(textParsers).map(Number)
      }, dump ? [dump] : [])
    },
    query: async (sql, params, rowMode) => parsed(await send<ThreadResult>({ op: "query", sql, params, rowMode }), rowMode),
    exec: async (sql) => (await send<ReadonlyArray<ThreadResult>>({ op: "exec", sql })).map((result) => parsed(result, "object") as Array<Row>),
    protocol: (bytes, onData) => send<boolean>({ op: "protocol", bytes }, [], onData),
    settle: () => send<void>({ op: "settle" }),
    dumpDataDir: async (compression = "none") => new Blob([await send<Uint8Array>({ op: "dump", compression })]),
    close: async () => {
      await send({ op: "close" }).catch(() => undefined)
      stop(new Error("The embedded store is closed"))
      await worker.terminate()
    },
    stopped: () => stopped
  }
}
