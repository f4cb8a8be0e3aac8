import { isPrivateAddress, urlProblem } from "@erp/core"
import { describe, expect, it } from "vitest"
import { Effect } from "effect"
import { send } from "../src/webhooks/send.js"
import { safeLookup } from "../src/webhooks/url-safety.js"

describe("webhook URL safety", () => {
  it("tells private, loopback, link-local, metadata and reserved addresses from public ones", () => {
    for (const address of ["10.0.0.1", "127.0.0.1", "169.254.169.254", "172.16.5.4", "192.168.1.1", "100.64.0.1", "0.0.0.0", "::1", "::", "fd00::1", "fe80::1", "::ffff:10.0.0.1", "::ffff:127.0.0.1", "224.0.0.1"]) {
      expect(isPrivateAddress(address), address).toBe(true)
    }
    for (const address of ["8.8.8.8", "1.1.1.1", "172.32.0.1", "2606:4700:4700::1111", "::ffff:8.8.8.8"]) {
      expect(isPrivateAddress(address), address).toBe(false)
    }
  })

  it("refuses every IPv6 form that carries a private or loopback IPv4 address, and judges public ones by it", () => {
    const refused = [
      "::ffff:127.0.0.1", "::ffff:7f00:1", "0:0:0:0:0:ffff:a00:1", "::ffff:169.254.169.254", // IPv4-mapped
      "::ffff:0:7f00:1", "::ffff:0:192.168.0.1", // IPv4-translated
      "2002:7f00:1::", "2002:a00:1::1", "2002:a9fe:a9fe::", "2002:c0a8:101:0:1:2:3:4", // 6to4
      "64:ff9b::7f00:1", "64:ff9b::10.0.0.1", "64:ff9b::a9fe:a9fe", "64:ff9b:1::808:808", // NAT64, and its local-use prefix
      "2001:0:4136:e378:8000:63bf:80ff:fffe", // Teredo, client 127.0.0.1 (stored inverted)
      "2001:0:a00:1:8000:63bf:f7f7:f7f7", // Teredo, server 10.0.0.1
      "::127.0.0.1", "::7f00:1", "::8.8.8.8", // IPv4-compatible (deprecated, never routed)
      "fe80::1%eth0", "100::1", "fec0::1", "not an address", ""
    ]
    for (const address of refused) expect(isPrivateAddress(address), address).toBe(true)
    const allowed = ["::ffff:8.8.8.8", "::ffff:0:808:808", "2002:808:808::1", "64:ff9b::8.8.8.8", "2001:0:4136:e378:8000:63bf:f7f7:f7f7", "2a00:1450:4001:80b::200e"]
    for (const address of allowed) expect(isPrivateAddress(address), address).toBe(false)
  })

  it("normalises host names (case, trailing dots) and refuses the addresses they hide", () => {
    for (const url of ["https://LOCALHOST./x", "https://localhost../x", "https://api.LocalHost./x", "https://127.0.0.1./x", "https://0x7f.1/x", "https://2130706433/x"]) {
      expect(urlProblem(url, false), url).toMatch(/localhost|private/)
    }
    for (const url of ["https://[2002:7f00:1::]/x", "https://[64:ff9b::10.0.0.1]/x", "https://[::ffff:0:7f00:1]/x", "https://[::127.0.0.1]/x", "https://[2001:0:4136:e378:8000:63bf:80ff:fffe]/x"]) {
      expect(urlProblem(url, false), url).toMatch(/private/)
    }
    expect(urlProblem("https://HOOKS.example.com./x", false)).toBeUndefined()
    expect(urlProblem("https://[2002:808:808::1]/x", false)).toBeUndefined()
  })

  it("refuses http, credentials, private literals and localhost unless private webhooks are allowed", () => {
    expect(urlProblem("https://10.0.0.1/hooks", false)).toMatch(/private/)
    expect(urlProblem("https://[::ffff:7f00:1]/hooks", false)).toMatch(/private/)
    expect(urlProblem("https://localhost:8443/hooks", false)).toMatch(/localhost/)
    expect(urlProblem("http://hooks.example.com/x", false)).toMatch(/https/)
    expect(urlProblem("https://user:pw@hooks.example.com/x", false)).toMatch(/credentials/)
    expect(urlProblem("ftp://hooks.example.com/x", true)).toMatch(/http or https/)
    expect(urlProblem("https://hooks.example.com/x", false)).toBeUndefined()
    expect(urlProblem("http://127.0.0.1:9000/x", true)).toBeUndefined()
  })

  it("refuses, when connecting, a name that resolves to a private address (DNS rebinding)", async () => {
    const lookup = (allow: boolean) =>
      new Promise<{ error: NodeJS.ErrnoException | null; address: unknown }>((resolve) =>
        safeLookup(allow)("localhost", {}, (error, address) => resolve({ error, address })))
    const refused = await lookup(false)
    expect(refused.error?.code).toBe("EPRIVATEADDRESS")
    const allowed = await lookup(true)
    expect(allowed.error).toBeNull()
    expect(isPrivateAddress(String(allowed.address))).toBe(true)
  })

  it("refuses, when sending, an address written in the URL (connected to without a lookup)", async () => {
    for (const host of ["127.0.0.1", "[::ffff:7f00:1]", "[2002:7f00:1::]"]) {
      const result = await Effect.runPromise(send(new URL(`https://${host}:1/x`), {}, "{}", { timeoutMs: 1000, allowPrivate: false }))
      expect(result, host).toMatchObject({ statusCode: null, error: expect.stringMatching(/^EPRIVATEADDRESS/) })
    }
  })
})
