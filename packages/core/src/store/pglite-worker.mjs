// The embedded store's PGlite in a thread of its own, so that a statement never blocks the host's
// thread (HTTP, /health, timers). pglite-thread.ts starts it and speaks to it in messages:
// `{ id, op, ... }` in, `{ id, ok, value }` or `{ id, ok: false, error }` out (and `{ id, chunk }`
// while a socket client's exchange streams). Plain JavaScript that imports only PGlite: it runs as
// it is from the sources (tests), from the compiled packages and beside the CLI's bundle.
import { PGlite } from "@electric-sql/pglite"
import { unaccent } from "@electric-sql/pglite/contrib/unaccent"
import { parentPort } from "node:worker_threads"

/** A socket client's exchange is sent back in pieces of about this size, not one message per protocol message. */
const CHUNK_BYTES = 64 * 1024
const SYNC = Uint8Array.of(0x53, 0, 0, 0, 4)

/** The store, once `open` made it. */
let db

/** A failure as plain data: PostgreSQL's fields (code, detail, constraint, …) survive, which a cloned Error would lose. */
const failure = (error) =>
  error instanceof Error ? { ...error, name: error.name, message: error.message } : { name: "Error", message: String(error) }

/** Rows with the column types the host parses (its text parsers), by column: `[name, type oid]`. */
const answer = (result) => ({ rows: result.rows, fields: result.fields.map((field) => [field.name, field.dataTypeID]) })

const operations = {
  async open({ dataDir, loadDataDir, sharedBuffers, textTypes }) {
    db = await PGlite.create({
      ...(dataDir ? { dataDir } : {}),
      ...(loadDataDir ? { loadDataDir: new Blob([loadDataDir]) } : {}),
      extensions: { unaccent },
      // The host's parsers run in its own thread: these types arrive there as PostgreSQL's text.
      parsers: Object.fromEntries(textTypes.map((oid) => [oid, (text) => text])),
      startParams: [...PGlite.defaultStartParams, "-c", `shared_buffers=${sharedBuffers}`]
    })
  },
  async query({ sql, params, rowMode }) {
    return answer(await db.query(sql, params, { rowMode }))
  },
  /** The simple protocol: several statements at once (migrations), a result for each. */
  async exec({ sql }) {
    return (await db.exec(sql)).map(answer)
  },
  /** One message of a socket client, its answer streamed back; then whether a transaction is open. */
  async protocol({ bytes }, id) {
    let pending = []
    let size = 0
    const flush = () => {
      if (size === 0) return
      const chunk = new Uint8Array(size)
      let at = 0
      for (const piece of pending) {
        chunk.set(piece, at)
        at += piece.length
      }
      pending = []
      size = 0
      parentPort.postMessage({ id, chunk }, [chunk.buffer])
    }
    await db.runExclusive(() =>
      db.execProtocolRawStream(bytes, {
        onRawData: (data) => {
          // A view of PGlite's memory, valid only during this call: copied.
          pending.push(data.slice())
          size += data.length
          if (size >= CHUNK_BYTES) flush()
        }
      })
    )
    flush()
    return db.isInTransaction()
  },
  /** A socket client left: the backend is brought back to idle, its transaction rolled back. */
  async settle() {
    try {
      await db.runExclusive(() => db.execProtocolRaw(SYNC))
      // `exec` takes PGlite's own lock itself (inside `runExclusive` it would wait on itself).
      if (db.isInTransaction()) await db.exec("ROLLBACK")
    } catch {
      // The backend reports its own state on the next statement.
    }
  },
  async dump({ compression }) {
    return new Uint8Array(await (await db.dumpDataDir(compression)).arrayBuffer())
  },
  async close() {
    await db?.close()
    db = undefined
  }
}

// One operation at a time, in order of arrival: PGlite has one session, and the host decides whose turn it is.
let queue = Promise.resolve()
parentPort.on("message", (message) => {
  queue = queue.then(async () => {
    try {
      const value = await operations[message.op](message, message.id)
      const transfer = value instanceof Uint8Array ? [value.buffer] : []
      parentPort.postMessage({ id: message.id, ok: true, value }, transfer)
    } catch (error) {
      parentPort.postMessage({ id: message.id, ok: false, error: failure(error) })
    }
  })
})
