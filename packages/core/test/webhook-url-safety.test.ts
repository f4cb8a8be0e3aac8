import { isPrivateAddress, urlProblem } from "@erp/core"
import { describe, expect, it } from "vitest"
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
})
