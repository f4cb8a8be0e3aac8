import { ListenError } from "@erp/core"
import * as net from "node:net"

/**
 * Fails with a `ListenError` when `host:port` cannot be listened on (in use, no permission,
 * not an address of this machine), before anything slow (opening and migrating the store)
 * is started. Port 0 (any free port) always passes.
 */
export const checkPortFree = (host: string, port: number): Promise<void> =>
  port === 0
    ? Promise.resolve()
    : new Promise((resolve, reject) => {
      const probe = net.createServer()
      probe.once("error", (error: NodeJS.ErrnoException) =>
        reject(new ListenError(`cannot listen on ${host}:${port}: ${error.code ?? error.message}`, { cause: error })))
      probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve()))
    })
