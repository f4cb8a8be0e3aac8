import { Effect } from "effect"
import * as http from "node:http"
import * as https from "node:https"
import { isIP } from "node:net"
import { isPrivateAddress, normalHost, safeLookup } from "./url-safety.js"

/** What a receiver answered, or why no answer came. */
export interface SendResult {
  readonly statusCode: number | null
  readonly latencyMs: number
  readonly error: string | null
  /** The first `RESPONSE_KEPT` bytes of the answer. */
  readonly body: string | null
}

export const RESPONSE_KEPT = 4096

/**
 * POSTs `body` once, with a deadline of `timeoutMs` for the whole exchange. Names are
 * resolved by `safeLookup`, so the address connected to is the address checked.
 * Interrupting the effect aborts the request.
 */
export const send = (url: URL, headers: Readonly<Record<string, string>>, body: string, options: { readonly timeoutMs: number; readonly allowPrivate: boolean }) => {
  // An address written in the URL is connected to without a lookup: `safeLookup` never sees it.
  const literal = normalHost(url)
  if (!options.allowPrivate && isIP(literal) !== 0 && isPrivateAddress(literal)) {
    return Effect.succeed<SendResult>({ statusCode: null, latencyMs: 0, error: `EPRIVATEADDRESS: ${literal} is a private address`, body: null })
  }
  return Effect.callback<SendResult>((resume) => {
    const started = performance.now()
    const elapsed = () => Math.round(performance.now() - started)
    let settled = false
    const finish = (result: Omit<SendResult, "latencyMs">) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      request.destroy()
      resume(Effect.succeed({ ...result, latencyMs: elapsed() }))
    }
    const client = url.protocol === "https:" ? https : http
    const request = client.request(url, {
      method: "POST",
      headers: { ...headers, "content-length": String(Buffer.byteLength(body)) },
      agent: false,
      lookup: safeLookup(options.allowPrivate) as never
    }, (response) => {
      const chunks: Array<Buffer> = []
      let size = 0
      const done = () => finish({ statusCode: response.statusCode ?? null, error: null, body: Buffer.concat(chunks).subarray(0, RESPONSE_KEPT).toString("utf8") })
      response.on("data", (chunk: Buffer) => {
        if (size < RESPONSE_KEPT) chunks.push(chunk)
        size += chunk.length
        // Enough to log: the rest of a long answer is not read.
        if (size >= RESPONSE_KEPT) done()
      })
      response.on("end", done)
      response.on("error", (error) => finish({ statusCode: response.statusCode ?? null, error: error.message, body: null }))
    })
    const timer = setTimeout(() => finish({ statusCode: null, error: `no answer within ${options.timeoutMs / 1000} s`, body: null }), options.timeoutMs)
    request.on("error", (error: NodeJS.ErrnoException) => finish({ statusCode: null, error: error.code ? `${error.code}: ${error.message}` : error.message, body: null }))
    request.end(body)
    return Effect.sync(() => {
      settled = true
      clearTimeout(timer)
      request.destroy()
    })
  })
}
