import { describe, expect, it } from "vitest"
import { asciiOnly } from "../scripts/ascii-only.mjs"

/**
 * `npm run build` writes the CLI bundle in ASCII alone, so the launcher can read it as Latin-1
 * (a tenth of the time of UTF-8); only characters in comments may be rewritten for that.
 */
describe("the bundle in ASCII", () => {
  it("escapes characters past ASCII that are in comments", async () => {
    const text = "// a dash — and Pará\nconst s = \"plain\" /* ±0 */\nmodule.exports = s\n"
    const ascii = await asciiOnly(text)
    expect(ascii).toMatch(/^[\x00-\x7f]*$/)
    expect(ascii).toContain("// a dash \\u2014 and Par\\u00e1")
    expect(ascii).toContain("const s = \"plain\"")
  })

  it("leaves the text as it was when a character is in a raw template, where an escape would change the value", async () => {
    const text = "// ok — here\nmodule.exports = String.raw`Pará`\n"
    expect(await asciiOnly(text)).toBe(text)
  })

  it("leaves ASCII text as it is", async () => {
    const text = "module.exports = 1\n"
    expect(await asciiOnly(text)).toBe(text)
  })
})
