import { Effect, Layer } from "effect"
import type { Server } from "node:http"

/** How long a stopping host waits for the requests in flight before it ends the connections left. */
export const SHUTDOWN_GRACE_MS = 5_000

/**
 * Node's `close` waits for every connection to end, so a client that never finishes sending its
 * request would keep a stopping host alive for as long as it liked. Built after the server (and
 * its routes), this layer is released before them: the stop starts the grace, then the server's
 * own close waits for what is in flight, and whatever is left when the grace ends is cut.
 */
export const layerShutdownGrace = (server: Server, graceMs: number) =>
  Layer.effectDiscard(
    Effect.addFinalizer(() =>
      Effect.sync(() => {
        const cut = setTimeout(() => server.closeAllConnections(), graceMs).unref()
        server.once("close", () => clearTimeout(cut))
      }))
  )
