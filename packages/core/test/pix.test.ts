import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import { hasError, isStaticPix, parsePix } from "pix-utils"
import { encode } from "uqr"
import {
  brCodeSvg,
  type BrCodeInput,
  buildBrCode,
  crc16Ccitt,
  newTxid,
  parseBrCode,
  parsePixKey,
  type PixKeyType,
  toBrCodeAmount
} from "../src/payments/pix/index.js"

/**
 * The example of the Banco Central's "Manual de Padrões para Iniciação do Pix" (static BR Code with a
 * random key, no amount, no txid), quoted the same by many independent implementations; its CRC was
 * also checked apart from this code with Python's `binascii.crc_hqx(payload, 0xFFFF)`.
 */
const BCB_EXAMPLE =
  "00020126580014br.gov.bcb.pix0136123e4567-e12b-12d1-a456-4266554400005204000053039865802BR5913Fulano de Tal6008BRASILIA62070503***63041D3D"

const EVP = "123e4567-e12b-12d1-a456-426655440000"

const built = (input: BrCodeInput): string => {
  const result = buildBrCode(input)
  if (!result.ok) throw new Error(`refused ${result.field}: ${result.message}`)
  return result.brCode
}

/** The code as an independent reader (pix-utils) sees it; it refuses a wrong CRC with "invalid crc". */
const thirdPartyRead = (code: string) => {
  const pix = parsePix(code)
  if (hasError(pix)) throw new Error(`pix-utils refused the code: ${pix.message}`)
  if (!isStaticPix(pix)) throw new Error(`pix-utils read a ${pix.type} code`)
  return pix
}

const read = (code: string) => {
  const reading = parseBrCode(code)
  if (!reading.ok) throw new Error(reading.message)
  return reading
}

const field = (code: string, id: string) => read(code).fields.find((f) => f.id === id)?.value

const base = { key: EVP, merchantName: "Fulano de Tal", merchantCity: "BRASILIA", txid: "PEDIDO42" }

describe("crc16Ccitt", () => {
  it("gives the CRC-16/CCITT-FALSE check value for \"123456789\"", () => {
    expect(crc16Ccitt("123456789")).toBe("29B1")
  })

  it("starts from 0xFFFF with no final XOR", () => {
    expect(crc16Ccitt("")).toBe("FFFF")
  })

  it("pads to four upper-case hex digits", () => {
    expect(crc16Ccitt(BCB_EXAMPLE.slice(0, -4))).toBe("1D3D")
    expect(crc16Ccitt("A")).toBe("B915")
  })
})

describe("buildBrCode", () => {
  it("reproduces the Banco Central's published example byte for byte", () => {
    const code = built({ key: EVP, merchantName: "Fulano de Tal", merchantCity: "BRASILIA", txid: "***" })
    expect(code).toBe(BCB_EXAMPLE)
    const pix = thirdPartyRead(code)
    expect(pix.pixKey).toBe(EVP)
    expect(pix.txid).toBe("***")
    expect(pix.transactionAmount).toBe(0)
  })

  it("writes amount, description and txid exactly as the TLV rules spell them", () => {
    // Built by hand: ID, two-digit length, value. The CRC was computed apart from this code (Python's binascii.crc_hqx).
    const account = "0014br.gov.bcb.pix" + "0118fulano@example.com" + "0209Pedido 42"
    const expected = "000201" + `2653${account}` + "52040000" + "5303986" + "5406123.45" + "5802BR" + "5913Fulano de Tal" +
      "6008BRASILIA" + "62120508PEDIDO42" + "6304082E"
    const code = built({ ...base, key: "Fulano@Example.com", amount: "123.450000", description: "Pedido 42" })
    expect(code).toBe(expected)

    const pix = thirdPartyRead(code)
    expect(pix.pixKey).toBe("fulano@example.com")
    expect(pix.transactionAmount).toBe(123.45)
    expect(pix.merchantName).toBe("Fulano de Tal")
    expect(pix.merchantCity).toBe("BRASILIA")
    expect(pix.txid).toBe("PEDIDO42")
    expect(pix.infoAdicional).toBe("Pedido 42")
  })

  it("yields a code the third-party reader refuses once a single character changes", () => {
    const code = built({ ...base, amount: "10.000000" })
    expect(hasError(parsePix(code))).toBe(false)
    const tampered = code.replace("5405" + "10.00", "5405" + "90.00")
    expect(tampered).not.toBe(code)
    const pix = parsePix(tampered)
    expect(hasError(pix) && pix.message).toBe("invalid crc")
  })

  it("omits field 54 when there is no amount, so the payer types it", () => {
    const code = built(base)
    expect(field(code, "54")).toBeUndefined()
    expect(code).not.toContain("5404")
  })

  it("writes the key in its canonical form", () => {
    expect(read(built({ ...base, key: "529.982.247-25" })).key).toBe("52998224725")
    expect(read(built({ ...base, key: "+55 (61) 99999-8888" })).key).toBe("+5561999998888")
    expect(read(built({ ...base, key: { type: "evp", value: EVP.toUpperCase() } })).key).toBe(EVP)
  })

  it("refuses a key that is not one, naming the field", () => {
    expect(buildBrCode({ ...base, key: "529.982.247-26" })).toMatchObject({ ok: false, field: "key" })
    expect(buildBrCode({ ...base, key: { type: "cpf", value: "11222333000181" } })).toMatchObject({ ok: false, field: "key" })
  })

  it.each([[""], ["ABCDEFGHIJKLMNOPQRSTUVWXYZ"], ["pedido-42"], ["pedido 42"], ["**"], ["pedído42"]])("refuses the txid %j", (txid) => {
    expect(buildBrCode({ ...base, txid })).toMatchObject({ ok: false, field: "txid" })
  })

  it("accepts a txid of 25 letters and digits", () => {
    expect(read(built({ ...base, txid: "ABCDEFGHIJKLMNOPQRSTUVWXY" })).txid).toBe("ABCDEFGHIJKLMNOPQRSTUVWXY")
  })
})

describe("amounts", () => {
  it.each([
    ["10.000000", "10.00"],
    ["0.500000", "0.50"],
    ["123.450000", "123.45"],
    ["0.010000", "0.01"],
    ["9999999999.990000", "9999999999.99"]
  ])("writes %s as %s", (amount, written) => {
    expect(toBrCodeAmount(amount)).toEqual({ ok: true, value: written })
    const code = built({ ...base, amount })
    expect(field(code, "54")).toBe(written)
    expect(thirdPartyRead(code).transactionAmount?.toFixed(2)).toBe(written)
  })

  it.each([
    ["0.000000", "greater than zero"],
    ["-1", "greater than zero"],
    ["-0.500000", "greater than zero"],
    ["1.005000", "whole number of cents"],
    ["0.001000", "whole number of cents"],
    ["abc", "decimal number"],
    ["1e3", "decimal number"],
    ["1,50", "decimal number"],
    ["", "decimal number"],
    ["10000000000.000000", "at most 9999999999.99"]
  ])("refuses %j (%s)", (amount, reason) => {
    const result = toBrCodeAmount(amount)
    expect(result.ok).toBe(false)
    if (!result.ok) expect(result.message).toContain(reason)
    expect(buildBrCode({ ...base, amount })).toMatchObject({ ok: false, field: "amount" })
  })

  it("reads field 54 back in six-digit form", () => {
    expect(read(built({ ...base, amount: "0.500000" })).amount).toBe("0.500000")
    expect(read(BCB_EXAMPLE).amount).toBeNull()
  })
})

describe("merchant name, city and description", () => {
  // Name and city are cut, not refused: the payer's bank shows the DICT's name, and settlement matches key and txid.
  it("drops accents and cuts the name to 25 and the city to 15 characters", () => {
    const code = built({ ...base, merchantName: "Supermercado Bom Preço Ltda", merchantCity: "São José dos Campos" })
    expect(field(code, "59")).toBe("Supermercado Bom Preco Lt")
    expect(field(code, "60")).toBe("Sao Jose dos Ca")
    const pix = thirdPartyRead(code)
    expect(pix.merchantName).toBe("Supermercado Bom Preco Lt")
    expect(pix.merchantCity).toBe("Sao Jose dos Ca")
  })

  it("leaves no space dangling where the cut falls after a word", () => {
    const code = built({ ...base, merchantName: "Padaria Pão de Açúcar do Zé Filho", merchantCity: "Padaria Pão de Queijo" })
    expect(field(code, "59")).toBe("Padaria Pao de Acucar do")
    expect(field(code, "60")).toBe("Padaria Pao de")
  })

  it("spells letters that decomposition leaves whole and collapses whitespace", () => {
    const code = built({ ...base, merchantName: "Straße  Œuvre\tÆon", merchantCity: "Łódź" })
    expect(field(code, "59")).toBe("Strasse OEuvre AEon")
    expect(field(code, "60")).toBe("Lodz")
  })

  it.each([
    ["merchantName", { merchantName: "北京烤鸭" }],
    ["merchantCity", { merchantCity: "Brasília 🌴" }],
    ["merchantName", { merchantName: "   " }],
    ["merchantCity", { merchantCity: "" }],
    ["description", { description: "Pedido ✓" }]
  ])("refuses %s that has no ASCII spelling or is empty", (name, patch) => {
    expect(buildBrCode({ ...base, ...patch })).toMatchObject({ ok: false, field: name })
  })

  it("fills field 26 to exactly 99 characters and refuses one more", () => {
    // An EVP key takes 4 + 36 characters and the GUI 18, leaving 99 - 58 - 4 = 37 for the description.
    const fits = built({ ...base, description: "D".repeat(37) })
    expect(field(fits, "26")).toHaveLength(99)
    expect(thirdPartyRead(fits).infoAdicional).toBe("D".repeat(37))
    const over = buildBrCode({ ...base, description: "D".repeat(38) })
    expect(over).toEqual({ ok: false, field: "description", message: "the description must have at most 37 characters with this key" })
  })

  it("refuses any description with a 77-character e-mail key, which fills field 26 alone", () => {
    const key = `${"a".repeat(62)}@example.com.br`
    expect(key).toHaveLength(77)
    expect(field(built({ ...base, key }), "26")).toHaveLength(99)
    expect(buildBrCode({ ...base, key, description: "x" })).toMatchObject({ ok: false, field: "description", message: "this key leaves no room for a description" })
  })

  it("keeps every field and sub-field within 99 characters, and the code readable, whatever the text", () => {
    const keys = [EVP, "52998224725", "11222333000181", "+5561999998888", `${"b".repeat(62)}@example.com.br`]
    const text = fc.string({ unit: "grapheme", maxLength: 120 })
    fc.assert(
      fc.property(fc.constantFrom(...keys), text, text, fc.option(text, { nil: undefined }), (key, merchantName, merchantCity, description) => {
        const result = buildBrCode({ key, merchantName, merchantCity, description, txid: "PEDIDO42", amount: "1.000000" })
        if (!result.ok) {
          expect(["merchantName", "merchantCity", "description"]).toContain(result.field)
          return
        }
        expect(result.brCode).toMatch(/^[\x20-\x7e]+$/)
        const reading = read(result.brCode)
        expect(reading.crcValid).toBe(true)
        for (const top of reading.fields) {
          expect(top.value.length).toBeLessThanOrEqual(99)
          for (const sub of top.fields ?? []) expect(sub.value.length).toBeLessThanOrEqual(99)
        }
        expect(reading.merchantName?.length).toBeLessThanOrEqual(25)
        expect(reading.merchantCity?.length).toBeLessThanOrEqual(15)
        const pix = thirdPartyRead(result.brCode)
        expect(pix.pixKey).toBe(key)
        expect(pix.txid).toBe("PEDIDO42")
      }),
      { numRuns: 300 }
    )
  })
})

describe("parsePixKey", () => {
  it.each<[string, PixKeyType, string]>([
    ["529.982.247-25", "cpf", "52998224725"],
    ["111.444.777-35", "cpf", "11144477735"],
    [" 52998224725 ", "cpf", "52998224725"],
    ["11.222.333/0001-81", "cnpj", "11222333000181"],
    ["11222333000181", "cnpj", "11222333000181"],
    ["  Fulano.Tal@Example.COM.br ", "email", "fulano.tal@example.com.br"],
    ["+55 (61) 99999-8888", "phone", "+5561999998888"],
    ["+55 61 3333-4444", "phone", "+556133334444"],
    ["123E4567-E12B-12D1-A456-426655440000", "evp", EVP]
  ])("reads %j as a %s key %j", (input, type, value) => {
    expect(parsePixKey(input)).toEqual({ ok: true, key: { type, value } })
    expect(parsePixKey(input, type)).toEqual({ ok: true, key: { type, value } })
  })

  it.each([
    ["529.982.247-26", "check digits"],
    ["529.982.247-15", "check digits"],
    ["111.111.111-11", "check digits"],
    ["11.222.333/0001-82", "check digits"],
    ["00.000.000/0000-00", "check digits"],
    ["fulano@", "not a valid address"],
    ["a@b@example.com", "not a valid address"],
    ["fulano tal@example.com", "not a valid address"],
    [`${"a".repeat(66)}@example.com`, "at most 77"],
    ["+1 202 555 0100", "starting with +55"],
    ["+5561899998888", "9-digit mobile"],
    ["+55619999988889", "9-digit mobile"],
    ["+55 01 99999-8888", "area code"],
    ["+55619999", "area code"],
    ["123e4567e12b12d1a456426655440000", "CPF, a CNPJ"],
    ["123e4567-e12b-12d1-a456-42665544000g", "UUID"],
    ["529982247", "CPF, a CNPJ"],
    ["hello", "CPF, a CNPJ"],
    ["   ", "empty"]
  ])("refuses %j (%s)", (input, reason) => {
    const result = parsePixKey(input)
    expect(result.ok).toBe(false)
    if (!result.ok) expect(result.message).toContain(reason)
  })

  it("checks the type it is told instead of guessing", () => {
    expect(parsePixKey("52998224725", "cpf")).toMatchObject({ ok: true })
    expect(parsePixKey("52998224725", "phone")).toMatchObject({ ok: false, message: expect.stringContaining("+55") })
    expect(parsePixKey("5299822472", "cpf")).toMatchObject({ ok: false, message: expect.stringContaining("11 digits") })
    expect(parsePixKey("52998224725", "cnpj")).toMatchObject({ ok: false, message: expect.stringContaining("14 digits") })
    expect(parsePixKey("fulano@example.com", "evp")).toMatchObject({ ok: false })
    expect(parsePixKey(EVP, "email")).toMatchObject({ ok: false })
  })

  it("refuses a type it does not know, as a request body may carry one", () => {
    const type: string = "iban"
    expect(parsePixKey("52998224725", type as PixKeyType)).toMatchObject({ ok: false, message: expect.stringContaining("cpf, cnpj") })
  })

  it("never quotes what it was given", () => {
    for (const input of ["secret-token-abc123", "529.982.247-26", "+5561899998888", "leak@", "123e4567-e12b-12d1-a456-42665544000g"]) {
      const result = parsePixKey(input)
      expect(result.ok).toBe(false)
      if (!result.ok) expect(result.message).not.toContain(input.trim())
    }
  })
})

describe("parseBrCode", () => {
  it("reads the Banco Central's example field by field", () => {
    const reading = read(BCB_EXAMPLE)
    expect(reading.fields.map((f) => f.id)).toEqual(["00", "26", "52", "53", "58", "59", "60", "62", "63"])
    expect(reading.fields[1].fields).toEqual([{ id: "00", value: "br.gov.bcb.pix" }, { id: "01", value: EVP }])
    expect(reading).toMatchObject({ crcValid: true, key: EVP, txid: "***", merchantName: "Fulano de Tal", merchantCity: "BRASILIA", description: null })
  })

  it("reads a code pasted with whitespace around it, as statement lines carry", () => {
    expect(read(`  ${BCB_EXAMPLE}\n`)).toMatchObject({ crcValid: true, key: EVP })
  })

  it("finds the key under an upper-case GUI, as some issuers write it", () => {
    // CRC computed apart from this code (Python's binascii.crc_hqx).
    const code = "00020126580014BR.GOV.BCB.PIX0136" + EVP + "520400005303986540510.005802BR5913Teste Empresa6009Sao Paulo62070503***63047C80"
    expect(read(code)).toMatchObject({ crcValid: true, key: EVP, amount: "10.000000" })
  })

  it("says the CRC is wrong when a character changed or the CRC is not last", () => {
    expect(read(BCB_EXAMPLE.replace("Fulano", "Fulana")).crcValid).toBe(false)
    expect(read(BCB_EXAMPLE.slice(0, -4) + "1D3E").crcValid).toBe(false)
    expect(read(BCB_EXAMPLE.slice(0, -8)).crcValid).toBe(false)
  })

  it("refuses text that is not a run of data objects", () => {
    expect(parseBrCode(BCB_EXAMPLE.slice(0, -1)).ok).toBe(false)
    expect(parseBrCode("hello").ok).toBe(false)
    expect(parseBrCode("0000").ok).toBe(false)
  })
})

describe("newTxid", () => {
  it("makes 25 letters and digits, a new one each time, drawn from all 62", () => {
    const txids = Array.from({ length: 200 }, newTxid)
    for (const txid of txids) expect(txid).toMatch(/^[A-Za-z0-9]{25}$/)
    expect(new Set(txids).size).toBe(txids.length)
    // 5,000 uniform draws miss one of 62 characters with a chance near e^-80.
    expect(new Set(txids.join("")).size).toBe(62)
  })

  it("is a txid a BR Code carries and another reader reads back", () => {
    const txid = newTxid()
    expect(thirdPartyRead(built({ ...base, txid })).txid).toBe(txid)
  })
})

describe("brCodeSvg", () => {
  const modules = (svg: string): Array<Array<boolean>> => {
    const size = Number(/viewBox="0 0 (\d+) \1"/.exec(svg)?.[1])
    const grid = Array.from({ length: size }, () => Array.from({ length: size }, () => false))
    for (const [, x, y] of svg.matchAll(/M(\d+),(\d+)h1v1h-1z/g)) grid[Number(y)][Number(x)] = true
    return grid
  }

  it("is one rect and one path in an svg with a viewBox, and nothing that runs or loads", () => {
    const svg = brCodeSvg(BCB_EXAMPLE)
    expect(svg).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" viewBox="0 0 (\d+) \1"><rect [^<>]*\/><path fill="black" d="(?:M\d+,\d+h1v1h-1z)+"\/><\/svg>$/)
    expect(svg).not.toMatch(/<script|href|url\(|<title|on\w+=/i)
    expect(svg).not.toContain("Fulano")
  })

  it("is the same for the same code and differs for another", () => {
    expect(brCodeSvg(BCB_EXAMPLE)).toBe(brCodeSvg(BCB_EXAMPLE))
    expect(brCodeSvg(BCB_EXAMPLE)).not.toBe(brCodeSvg(built(base)))
  })

  it("draws the level-M symbol module for module, inside a quiet zone of four", () => {
    const grid = modules(brCodeSvg(BCB_EXAMPLE))
    expect(grid).toEqual(encode(BCB_EXAMPLE, { ecc: "M", border: 4 }).data)
    expect(grid).not.toEqual(encode(BCB_EXAMPLE, { ecc: "L", border: 4 }).data)
    const size = grid.length
    for (let i = 0; i < size; i++) {
      for (const j of [0, 1, 2, 3, size - 4, size - 3, size - 2, size - 1]) {
        expect(grid[i][j]).toBe(false)
        expect(grid[j][i]).toBe(false)
      }
    }
    // The finder pattern's dark corner sits right inside the quiet zone.
    expect(grid[4][4]).toBe(true)
  })
})
