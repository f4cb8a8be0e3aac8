import { Effect } from "effect"
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"
import type { PgliteThread } from "./pglite-thread.js"
import type { SessionTurns } from "./session-turns.js"

/**
 * The embedded store lets one process open its folder. The process that holds it serves
 * the PostgreSQL wire protocol on a Unix socket in the folder, so the CLI (keys, exports,
 * `erp mcp` over stdio) reaches the same store while the host runs, with the same SQL
 * as on PostgreSQL. Only the same OS user can connect: the socket lives in a 0700
 * folder (the file mode of a socket is not honoured everywhere; a folder's is).
 *
 * `<data-dir>/run/.s.PGSQL.5432` is the name libpq and node-postgres look for when
 * `host` is a folder, so `psql -h <data-dir>/run` works too.
 */
export const SOCKET_FOLDER = "run"
export const SOCKET_PORT = 5432
export const socketFolder = (dataDir: string) => path.join(path.resolve(dataDir), SOCKET_FOLDER)
export const socketPath = (dataDir: string) => path.join(socketFolder(dataDir), `.s.PGSQL.${SOCKET_PORT}`)

/** Linux `sun_path` holds 107 bytes; a longer path cannot be bound, so no socket is served. */
const MAX_SOCKET_PATH = 107

/**
 * The session is PGlite's only backend. A connection holds it (the host's own
 * statements wait) from its first message until the backend is idle again: after a
 * `Sync` or a simple `Query` with no transaction open. So a client's extended-protocol
 * sequence and its transactions are never interleaved with anyone else's statements.
 * Each connection is an owner of its own in the session's rotation (`SessionTurns`).
 */
export type EmbeddedSession = Pick<PgliteThread, "protocol" | "settle">

/** A client holding the session this long without sending anything is cut off, so a stalled CLI cannot stall the host. */
const IDLE_HOLD_MS = 30_000

const SSL_REQUEST = 80877103
const GSS_REQUEST = 80877104
const CANCEL_REQUEST = 80877102
const PROTOCOL_3 = 196608

type Frame =
  | { readonly kind: "refuse-encryption" }
  | { readonly kind: "ignore" }
  | { readonly kind: "terminate" }
  | { readonly kind: "message"; readonly bytes: Uint8Array; readonly endsTurn: boolean }

/** The next whole frame at the head of `buffer`, and its length; undefined while it is still arriving. */
const nextFrame = (buffer: Buffer, started: boolean): { readonly frame: Frame; readonly length: number } | undefined => {
  if (!started) {
    if (buffer.length < 8) return undefined
    const length = buffer.readInt32BE(0)
    if (buffer.length < length) return undefined
    const code = buffer.readInt32BE(4)
    if (code === SSL_REQUEST || code === GSS_REQUEST) return { frame: { kind: "refuse-encryption" }, length }
    if (code === CANCEL_REQUEST) return { frame: { kind: "ignore" }, length }
    if (code !== PROTOCOL_3) return { frame: { kind: "terminate" }, length }
    return { frame: { kind: "message", bytes: new Uint8Array(buffer.subarray(0, length)), endsTurn: true }, length }
  }
  if (buffer.length < 5) return undefined
  const length = 1 + buffer.readInt32BE(1)
  if (buffer.length < length) return undefined
  const type = String.fromCharCode(buffer[0])
  if (type === "X") return { frame: { kind: "terminate" }, length }
  return {
    frame: { kind: "message", bytes: new Uint8Array(buffer.subarray(0, length)), endsTurn: type === "S" || type === "Q" },
    length
  }
}

const serveConnection = (db: EmbeddedSession, turns: SessionTurns, owner: string, socket: net.Socket, connections: Set<net.Socket>) => {
  let buffer = Buffer.alloc(0)
  let started = false
  /** The end of the connection's turn on the session, while it holds it. */
  let holding: (() => void) | undefined
  let running = false
  let closed = false
  let idle: NodeJS.Timeout | undefined

  const endTurn = () => {
    const release = holding
    holding = undefined
    release?.()
  }

  const releaseSession = async () => {
    if (!holding) return
    try {
      // Left mid-sequence or mid-transaction: bring the backend back to idle for the next one.
      await db.settle()
    } catch {
      // The backend reports its own state on the next statement; nothing more to do here.
    } finally {
      endTurn()
    }
  }

  const close = () => {
    if (closed) return
    closed = true
    if (idle) clearTimeout(idle)
    connections.delete(socket)
    socket.destroy()
    if (!running) void releaseSession()
  }

  const armIdle = () => {
    if (idle) clearTimeout(idle)
    idle = holding ? setTimeout(close, IDLE_HOLD_MS) : undefined
  }

  const drain = async () => {
    if (running) return
    running = true
    try {
      for (;;) {
        if (closed) break
        const next = nextFrame(buffer, started)
        if (!next) break
        buffer = buffer.subarray(next.length)
        const { frame } = next
        if (frame.kind === "refuse-encryption") {
          socket.write("N")
          continue
        }
        if (frame.kind === "ignore") continue
        if (frame.kind === "terminate") {
          close()
          break
        }
        if (idle) clearTimeout(idle)
        if (!holding) {
          holding = await turns.take(owner)
          if (closed) break
        }
        const inTransaction = await db.protocol(frame.bytes, (data) => { if (!closed) socket.write(data) })
        started = true
        if (frame.endsTurn && !inTransaction) endTurn()
        armIdle()
      }
    } catch {
      close()
    } finally {
      running = false
      if (closed) void releaseSession()
    }
  }

  socket.on("data", (data) => {
    buffer = buffer.length === 0 ? data : Buffer.concat([buffer, data])
    void drain()
  })
  socket.on("error", close)
  socket.on("close", close)
}

/**
 * Serves `db` on `<data-dir>/run/.s.PGSQL.5432` for as long as the scope is open. Only
 * the lock holder calls it, so a socket file found there is a dead holder's and is
 * replaced. Where no socket can be bound (path too long, a file system without
 * sockets), the host runs without one and the CLI says the folder is in use.
 */
export const serveEmbeddedSocket = (db: EmbeddedSession, dataDir: string, turns: SessionTurns) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const file = socketPath(dataDir)
      if (Buffer.byteLength(file) > MAX_SOCKET_PATH) return undefined
      try {
        fs.mkdirSync(socketFolder(dataDir), { recursive: true, mode: 0o700 })
        fs.chmodSync(socketFolder(dataDir), 0o700)
        fs.rmSync(file, { force: true })
      } catch {
        return undefined
      }
      const connections = new Set<net.Socket>()
      let served = 0
      const server = net.createServer((socket) => {
        connections.add(socket)
        serveConnection(db, turns, `socket ${++served}`, socket, connections)
      })
      const listening = await new Promise<boolean>((resolve) => {
        server.once("error", () => resolve(false))
        server.listen(file, () => resolve(true))
      })
      if (!listening) return undefined
      server.on("error", () => undefined)
      // Not keeping the process alive: the host's HTTP server or the command's own work does that.
      server.unref()
      fs.chmodSync(file, 0o600)
      return { server, connections, file }
    }),
    (served) =>
      Effect.promise(async () => {
        if (!served) return
        for (const socket of served.connections) socket.destroy()
        await new Promise<void>((resolve) => served.server.close(() => resolve()))
        fs.rmSync(served.file, { force: true })
      })
  )

/** True when the folder's holder answers on its socket: the CLI then goes through it instead of refusing. */
export const embeddedSocketAnswers = (dataDir: string): Promise<boolean> =>
  new Promise((resolve) => {
    const file = socketPath(dataDir)
    if (!fs.existsSync(file)) return resolve(false)
    const probe = net.connect(file)
    const done = (answer: boolean) => {
      probe.destroy()
      resolve(answer)
    }
    probe.setTimeout(2_000, () => done(false))
    probe.once("connect", () => done(true))
    probe.once("error", () => done(false))
  })
