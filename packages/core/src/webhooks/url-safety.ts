import { lookup as dnsLookup, type LookupAddress } from "node:dns"
import { BlockList, isIP } from "node:net"

/**
 * `ERP_WEBHOOKS_ALLOW_PRIVATE=true` (or `erp serve --allow-private-webhooks`) lets
 * endpoints be http and reach private, loopback and link-local addresses: for
 * development and tests only.
 */
export const allowPrivateWebhooks = (env: Readonly<Record<string, string | undefined>> = process.env): boolean =>
  env.ERP_WEBHOOKS_ALLOW_PRIVATE === "true"

/** Addresses a webhook must never reach: private, loopback, link-local (cloud metadata), unspecified, multicast, reserved. */
const blocked = new BlockList()
for (const [network, prefix] of [
  ["0.0.0.0", 8], ["10.0.0.0", 8], ["100.64.0.0", 10], ["127.0.0.0", 8], ["169.254.0.0", 16], ["172.16.0.0", 12],
  ["192.0.0.0", 24], ["192.0.2.0", 24], ["192.168.0.0", 16], ["198.18.0.0", 15], ["198.51.100.0", 24], ["203.0.113.0", 24],
  ["224.0.0.0", 4], ["240.0.0.0", 4]
] as const) blocked.addSubnet(network, prefix, "ipv4")
for (const [network, prefix] of [
  ["::", 128], ["::1", 128], ["fc00::", 7], ["fe80::", 10], ["ff00::", 8], ["64:ff9b::", 96], ["2001:db8::", 32], ["fec0::", 10]
] as const) blocked.addSubnet(network, prefix, "ipv6")

/** Whether an IP address is one a webhook may not reach (IPv4-mapped IPv6 judged by its IPv4 address). */
export const isPrivateAddress = (address: string): boolean => {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)
  if (mapped) return blocked.check(mapped[1], "ipv4")
  const family = isIP(address)
  if (family === 0) return true
  return blocked.check(address, family === 4 ? "ipv4" : "ipv6")
}

const hostOf = (url: URL) => url.hostname.replace(/^\[(.*)\]$/, "$1")

/**
 * Why a webhook URL is refused before any lookup (scheme, credentials, a private address
 * or `localhost` written in it), or `undefined`. Names that resolve to private addresses
 * are caught when delivering (`safeLookup`), so a DNS answer changed later is caught too.
 */
export const urlProblem = (text: string, allowPrivate: boolean): string | undefined => {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    return "must be an absolute URL"
  }
  if (url.protocol !== "https:" && !(allowPrivate && url.protocol === "http:")) {
    return allowPrivate ? "must be an http or https URL" : "must be an https URL"
  }
  if (url.username || url.password) return "must not carry credentials"
  if (allowPrivate) return undefined
  const host = hostOf(url).toLowerCase()
  if (host === "localhost" || host.endsWith(".localhost")) return "must not point at this machine (localhost)"
  if (isIP(host) !== 0 && isPrivateAddress(host)) return "must not point at a private, loopback, link-local or metadata address"
  return undefined
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void

/**
 * A `lookup` for `http.request` that refuses private answers: the address checked is
 * the address connected to, so a name re-pointed after the check (DNS rebinding) fails.
 */
export const safeLookup = (allowPrivate: boolean) =>
  (hostname: string, options: { all?: boolean; family?: number }, callback: LookupCallback): void => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, [])
      const list = addresses as Array<LookupAddress>
      const refused = allowPrivate ? undefined : list.find((entry) => isPrivateAddress(entry.address))
      if (refused) {
        const problem = Object.assign(new Error(`${hostname} resolves to ${refused.address}, a private address`), { code: "EPRIVATEADDRESS" })
        return callback(problem, [])
      }
      if (options.all) return callback(null, list)
      const first = list[0]
      if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: "ENOTFOUND" }), [])
      callback(null, first.address, first.family)
    })
  }
