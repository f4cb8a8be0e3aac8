import { lookup as dnsLookup, type LookupAddress } from "node:dns"
import { BlockList, isIP } from "node:net"

/** IPv4 networks a webhook must never reach: private, loopback, link-local (cloud metadata), unspecified, shared, documentation, benchmarking, 6to4 relays, multicast, reserved. */
const blockedIPv4 = new BlockList()
for (const [network, prefix] of [
  ["0.0.0.0", 8], ["10.0.0.0", 8], ["100.64.0.0", 10], ["127.0.0.0", 8], ["169.254.0.0", 16], ["172.16.0.0", 12],
  ["192.0.0.0", 24], ["192.0.2.0", 24], ["192.88.99.0", 24], ["192.168.0.0", 16], ["198.18.0.0", 15], ["198.51.100.0", 24],
  ["203.0.113.0", 24], ["224.0.0.0", 4], ["240.0.0.0", 4]
] as const) blockedIPv4.addSubnet(network, prefix, "ipv4")

/**
 * IPv6 networks refused whatever they carry: IPv4-compatible `::a.b.c.d` (deprecated, and
 * holding `::` and `::1`), unique local, link-local, site-local, multicast, discard-only,
 * documentation, and NAT64's local-use prefix (its IPv4 may sit at several offsets).
 */
const blockedIPv6 = new BlockList()
for (const [network, prefix] of [
  ["::", 96], ["fc00::", 7], ["fe80::", 10], ["fec0::", 10], ["ff00::", 8], ["100::", 64], ["2001:db8::", 32], ["64:ff9b:1::", 48]
] as const) blockedIPv6.addSubnet(network, prefix, "ipv6")

/** The eight 16-bit groups of an IPv6 address (a dotted IPv4 tail and a zone allowed), or `undefined`. */
const ipv6Groups = (address: string): ReadonlyArray<number> | undefined => {
  const text = address.replace(/%.*$/, "").toLowerCase()
  const dotted = /^(.*:)(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text)
  const hex = dotted
    ? `${dotted[1]}${((Number(dotted[2]) << 8) | Number(dotted[3])).toString(16)}:${((Number(dotted[4]) << 8) | Number(dotted[5])).toString(16)}`
    : text
  const halves = hex.split("::")
  if (halves.length > 2) return undefined
  const parse = (part: string) => (part === "" ? [] : part.split(":").map((group) => (/^[0-9a-f]{1,4}$/.test(group) ? parseInt(group, 16) : NaN)))
  const head = parse(halves[0])
  const tail = halves.length === 2 ? parse(halves[1]) : []
  const missing = 8 - head.length - tail.length
  if (halves.length === 2 ? missing < 1 : missing !== 0) return undefined
  const groups = [...head, ...Array<number>(missing).fill(0), ...tail]
  return groups.some(Number.isNaN) ? undefined : groups
}

const ipv4Of = (high: number, low: number) => `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`

/**
 * The IPv4 addresses an IPv6 address carries and whose host its packets reach: IPv4-mapped
 * `::ffff:0:0/96`, IPv4-translated `::ffff:0:0:0/96`, NAT64 `64:ff9b::/96`, 6to4 `2002::/16`,
 * and Teredo `2001::/32` (its server, and its client's address stored inverted).
 */
const embeddedIPv4 = (g: ReadonlyArray<number>): ReadonlyArray<string> => {
  const zeros = (from: number, to: number) => g.slice(from, to).every((group) => group === 0)
  if (zeros(0, 5) && g[5] === 0xffff) return [ipv4Of(g[6], g[7])]
  if (zeros(0, 4) && g[4] === 0xffff && g[5] === 0) return [ipv4Of(g[6], g[7])]
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return [ipv4Of(g[6], g[7])]
  if (g[0] === 0x2002) return [ipv4Of(g[1], g[2])]
  if (g[0] === 0x2001 && g[1] === 0) return [ipv4Of(g[2], g[3]), ipv4Of(~g[6] & 0xffff, ~g[7] & 0xffff)]
  return []
}

/**
 * Whether an IP address is one a webhook may not reach. An IPv6 address is refused by its
 * own network, and by any IPv4 address it carries (`::ffff:127.0.0.1`, `2002:7f00:1::`):
 * those forms reach the IPv4 host through a translator or a tunnel. Anything that is not
 * an address is refused.
 */
export const isPrivateAddress = (address: string): boolean => {
  const family = isIP(address.replace(/%.*$/, ""))
  if (family === 4) return blockedIPv4.check(address, "ipv4")
  const groups = family === 6 ? ipv6Groups(address) : undefined
  if (!groups) return true
  const canonical = groups.map((group) => group.toString(16)).join(":")
  return blockedIPv6.check(canonical, "ipv6") || embeddedIPv4(groups).some((ipv4) => blockedIPv4.check(ipv4, "ipv4"))
}

/** The host as it is resolved: no brackets around an IPv6 literal, lower case, no trailing dots (`LOCALHOST.` is `localhost`). */
export const normalHost = (url: URL): string => url.hostname.replace(/^\[(.*)\]$/, "$1").toLowerCase().replace(/\.+$/, "")

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
  const host = normalHost(url)
  if (host === "") return "must name a host"
  if (allowPrivate) return undefined
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
