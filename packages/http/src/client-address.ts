import { isIP } from "node:net"

/**
 * An address as written in a socket or a proxy's `X-Forwarded-For`: IPv6 in brackets or
 * with a zone (`[2001:db8::1]:443`, `fe80::1%eth0`), IPv4 with a port (`192.0.2.7:5060`).
 * Answers the bare address, or undefined when it is not an IP address.
 */
const bareAddress = (written: string): string | undefined => {
  let text = written.trim()
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(text)
  if (bracketed) text = bracketed[1]
  else if (/^\d+\.\d+\.\d+\.\d+:\d+$/.test(text)) text = text.slice(0, text.lastIndexOf(":"))
  text = text.replace(/%.*$/, "")
  return isIP(text) === 0 ? undefined : text
}

/** An IPv6 address as RFC 5952 writes it (lower case, the longest run of zero groups as `::`), by the URL parser. */
const canonicalIpv6 = (address: string): string => new URL(`http://[${address}]/`).hostname.slice(1, -1)

/** The eight 16-bit groups of an IPv6 address (written canonically first: an embedded IPv4 address in hex). */
const ipv6Groups = (address: string): ReadonlyArray<number> => {
  const canonical = canonicalIpv6(address)
  const [head, tail] = canonical.includes("::") ? canonical.split("::") : [canonical, undefined]
  const left = head === "" ? [] : head.split(":")
  const right = tail === undefined || tail === "" ? [] : tail.split(":")
  const missing = tail === undefined ? [] : Array.from({ length: 8 - left.length - right.length }, () => "0")
  return [...left, ...missing, ...right].map((group) => Number.parseInt(group, 16))
}

/**
 * The caller's address as one client: IPv4 as written, an IPv4-mapped IPv6 address
 * (`::ffff:192.0.2.7`, how Node reports IPv4 callers on a dual-stack socket) as its IPv4,
 * other IPv6 addresses in their canonical form. Text that is no IP address stays as it is.
 */
export const normalizeAddress = (written: string): string => {
  const address = bareAddress(written)
  if (address === undefined) return written.trim()
  if (isIP(address) === 4) return address
  const groups = ipv6Groups(address)
  if (groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff) {
    return [groups[6] >> 8, groups[6] & 0xff, groups[7] >> 8, groups[7] & 0xff].join(".")
  }
  return canonicalIpv6(address)
}

/**
 * The key of a caller in limits per address: an IPv4 address, or the /64 network of an IPv6
 * one (`2001:db8:1:2::/64`). A site or a single host gets a /64 (RFC 6177) and picks any of its
 * 2^64 addresses at will, so keyed per address an IPv6 client would have a fresh limit per request.
 */
export const addressLimitKey = (written: string): string => {
  const address = normalizeAddress(written)
  if (isIP(address) !== 6) return address
  const prefix = ipv6Groups(address).slice(0, 4).map((group) => group.toString(16)).join(":")
  return `${canonicalIpv6(`${prefix}::`)}/64`
}

/**
 * The caller as the trusted proxy saw it: the rightmost `X-Forwarded-For` entry, the one the
 * proxy in front of us appended. The entries left of it are whatever the client sent (a
 * client picking a fresh value per request would get a fresh limit per request), and the
 * proxy appends to, rather than replaces, the header the client sent. Undefined without one.
 */
export const forwardedClient = (header: string | undefined): string | undefined => {
  if (header === undefined) return undefined
  const last = header.slice(header.lastIndexOf(",") + 1).trim()
  return last === "" ? undefined : last
}
