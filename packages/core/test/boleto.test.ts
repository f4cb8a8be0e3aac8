import { describe, expect, it } from "@effect/vitest"
import * as boletoUtils from "@mrmgomes/boleto-utils"
import BigNumber from "bignumber.js"
import {
  barcodeCheckDigit,
  boletoDigits,
  type BankData,
  bradescoOurNumberDigit,
  dueDateFactor,
  freeFieldFor,
  modulo10,
  modulo11Sum,
  santanderOurNumberDigit
} from "../src/payments/boleto/index.js"

/** A boleto whose digits a third party published, with where they come from. */
interface Specimen {
  readonly source: string
  readonly bankCode: string
  readonly bankData: BankData
  readonly dueDate: string
  readonly amount: string
  readonly ourNumber: string
  readonly barcode: string
  readonly line: string
}

/**
 * No bank manual is at hand offline, so these are the worked examples of open-source boleto
 * libraries' test suites, each checked by hand against the layout (free field, factor, check digits):
 * - pyboleto: github.com/eduardocereto/pyboleto, tests/test_banco_{do_brasil,itau,bradesco,santander}.py
 * - Stoq: stoqlib/lib/test/test_boleto.py (pyboleto's banks, with more cases); its Itaú case is the
 *   agência 0057 / conta 12345-7 / carteira 110 / nosso número 12345678-8 example of Itaú's manual
 * - brcobranca: github.com/kivanio/brcobranca, spec/brcobranca/boleto/itau_spec.rb
 * - boleto_bancario: github.com/tomas-stefano/boleto_bancario, spec/boleto_bancario/core/{banco_brasil,santander}_spec.rb
 */
const SPECIMENS: ReadonlyArray<Specimen> = [
  {
    source: "pyboleto, Banco do Brasil convênio 7",
    bankCode: "001", bankData: { agreement: "7777777", wallet: "18", ourNumber: "87654" },
    dueDate: "2011-03-08", amount: "2952.950000", ourNumber: "77777770000087654",
    barcode: "00196490000002952950000007777777000008765418",
    line: "00190.00009 07777.777009 00087.654182 6 49000000295295"
  },
  {
    source: "boleto_bancario, Banco do Brasil convênio 7",
    bankCode: "001", bankData: { agreement: "7777777", wallet: "18", ourNumber: "87654" },
    dueDate: "2012-12-28", amount: "2952.95", ourNumber: "77777770000087654",
    barcode: "00197556100002952950000007777777000008765418",
    line: "00190.00009 07777.777009 00087.654182 7 55610000295295"
  },
  {
    source: "Stoq, Itaú manual's example",
    bankCode: "341", bankData: { wallet: "110", agency: "0057", account: "12345", ourNumber: "12345678" },
    dueDate: "2002-05-01", amount: "123.450000", ourNumber: "110/12345678-8",
    barcode: "34196166700000123451101234567880057123457000",
    line: "34191.10121 34567.880058 71234.570001 6 16670000012345"
  },
  {
    source: "pyboleto, Itaú",
    bankCode: "341", bankData: { wallet: "109", agency: "0293", account: "01328", ourNumber: "157" },
    dueDate: "2009-10-19", amount: "29.800000", ourNumber: "109/00000157-1",
    barcode: "34199439500000029801090000015710293013280000",
    line: "34191.09008 00015.710296 30132.800001 9 43950000002980"
  },
  {
    source: "brcobranca, Itaú, amount zero and a general check digit of 11 → 1",
    bankCode: "341", bankData: { wallet: "175", agency: "0810", account: "53678", ourNumber: "12345678" },
    dueDate: "2009-08-14", amount: "0.000000", ourNumber: "175/12345678-4",
    barcode: "34191432900000000001751234567840810536789000",
    line: "34191.75124 34567.840813 05367.890000 1 43290000000000"
  },
  {
    source: "brcobranca, Itaú",
    bankCode: "341", bankData: { wallet: "175", agency: "0810", account: "53678", ourNumber: "258281" },
    dueDate: "2008-02-02", amount: "135.000000", ourNumber: "175/00258281-7",
    barcode: "34191377000000135001750025828170810536789000",
    line: "34191.75009 25828.170818 05367.890000 1 37700000013500"
  },
  {
    source: "brcobranca, Itaú, due after the 2025 factor restart",
    bankCode: "341", bankData: { wallet: "109", agency: "1248", account: "02124", ourNumber: "00010152" },
    dueDate: "2029-05-20", amount: "6757.870000", ourNumber: "109/00010152-7",
    barcode: "34194254800006757871090001015271248021246000",
    line: "34191.09008 01015.271248 80212.460002 4 25480000675787"
  },
  {
    source: "pyboleto, Bradesco",
    bankCode: "237", bankData: { wallet: "06", agency: "0278", account: "0039232", ourNumber: "2125525" },
    dueDate: "2011-02-05", amount: "8280.000000", ourNumber: "06/00002125525-6",
    barcode: "23794486900008280000278060000212552500392320",
    line: "23790.27804 60000.212559 25003.923205 4 48690000828000"
  },
  {
    source: "Stoq, Bradesco, a general check digit of 11 → 1",
    bankCode: "237", bankData: { wallet: "06", agency: "1172", account: "403005", ourNumber: "75896452" },
    dueDate: "2011-03-09", amount: "2952.950000", ourNumber: "06/00075896452-5",
    barcode: "23791490100002952951172060007589645204030050",
    line: "23791.17209 60007.589645 52040.300502 1 49010000295295"
  },
  {
    source: "pyboleto, Santander",
    bankCode: "033", bankData: { agreement: "0707077", wallet: "102", ourNumber: "1234567" },
    dueDate: "2012-07-22", amount: "2952.950000", ourNumber: "000001234567-9",
    barcode: "03395540200002952959070707700000123456790102",
    line: "03399.07073 07700.000123 34567.901029 5 54020000295295"
  },
  {
    source: "boleto_bancario, Santander, a general check digit of 11 → 1",
    bankCode: "033", bankData: { agreement: "0707077", wallet: "102", ourNumber: "000001234567" },
    dueDate: "2012-12-28", amount: "2952.950000", ourNumber: "000001234567-9",
    barcode: "03391556100002952959070707700000123456790102",
    line: "03399.07073 07700.000123 34567.901029 1 55610000295295"
  }
]

const digitsFor = (bankCode: string, bankData: BankData, dueDate: string, amount: string) => {
  const free = freeFieldFor(bankCode, bankData)
  if (!free.ok) throw new Error(free.message)
  const digits = boletoDigits({ bankCode, currency: "9", dueDate, amount, freeField: free.freeField })
  if (!digits.ok) throw new Error(digits.message)
  return { ...digits, ourNumber: free.ourNumber }
}

/** 11 − (Σ mod 11) before FEBRABAN's rule turns 0, 10 and 11 into 1. */
const rawGeneralDigit = (barcode: string) => 11 - (modulo11Sum(barcode.slice(0, 4) + barcode.slice(5), 9) % 11)

/**
 * Checks a barcode and its linha digitável with @mrmgomes/boleto-utils and reads back the
 * amount and due date. That library computes the barcode's módulo 11 digit by the
 * arrecadação rule (remainder 0 or 1 gives 0), not the bank-boleto rule (0, 10, 11 give 1),
 * so it refuses exactly the barcodes whose raw digit is 10 or 11; their linha digitável,
 * whose three field digits it checks, it accepts.
 */
const expectThirdPartyAccepts = (barcode: string, digitableLine: string, dueDate: string, amount: string) => {
  const fromLine = boletoUtils.validarBoleto(digitableLine)
  expect(fromLine.sucesso, fromLine.mensagem).toBe(true)
  expect(fromLine.tipoBoleto).toBe("BANCO")
  expect(fromLine.codigoBarras).toBe(barcode)

  const fromBarcode = boletoUtils.validarBoleto(barcode)
  const raw = rawGeneralDigit(barcode)
  if (raw === 10 || raw === 11) {
    expect(fromBarcode.sucesso).toBe(false)
    expect(boletoUtils.calculaMod11(barcode.slice(0, 4) + barcode.slice(5))).toBe(0)
  } else {
    expect(fromBarcode.sucesso, fromBarcode.mensagem).toBe(true)
    expect(fromBarcode.linhaDigitavel).toBe(digitableLine)
  }

  for (const [code, kind] of [[barcode, "CODIGO_DE_BARRAS"], [digitableLine, "LINHA_DIGITAVEL"]] as const) {
    expect(new BigNumber(boletoUtils.identificarValor(code, kind)).toFixed(6)).toBe(new BigNumber(amount).toFixed(6))
    const read = dueDate < "2025-02-22" ? boletoUtils.identificarData(code, kind) : boletoUtils.identificarDataComNovoFator2025(code, kind)
    expect(read.toISOString().slice(0, 10)).toBe(dueDate)
  }
}

describe("boleto digits", () => {
  it.each(SPECIMENS)("matches the published digits: $source", (specimen) => {
    const digits = digitsFor(specimen.bankCode, specimen.bankData, specimen.dueDate, specimen.amount)
    expect(digits.barcode).toBe(specimen.barcode)
    expect(digits.formattedLine).toBe(specimen.line)
    expect(digits.digitableLine).toBe(specimen.line.replace(/[ .]/g, ""))
    expect(digits.digitableLine).toHaveLength(47)
    expect(digits.ourNumber).toBe(specimen.ourNumber)
    expectThirdPartyAccepts(digits.barcode, digits.digitableLine, specimen.dueDate, specimen.amount)
  })

  it("restarts the due-date factor at 1000 on 2025-02-22 and again after 9000 days", () => {
    expect(dueDateFactor("1997-10-08")).toEqual({ ok: true, factor: "0001" })
    expect(dueDateFactor("2000-07-03")).toEqual({ ok: true, factor: "1000" })
    expect(dueDateFactor("2011-03-08")).toEqual({ ok: true, factor: "4900" })
    expect(dueDateFactor("2025-02-21")).toEqual({ ok: true, factor: "9999" })
    expect(dueDateFactor("2025-02-22")).toEqual({ ok: true, factor: "1000" })
    expect(dueDateFactor("2025-02-23")).toEqual({ ok: true, factor: "1001" })
    expect(dueDateFactor("2029-05-20")).toEqual({ ok: true, factor: "2548" })
    // 2025-02-22 + 8999 days is 2049-10-13: the second cycle ends there and a third begins.
    expect(dueDateFactor("2049-10-13")).toEqual({ ok: true, factor: "9999" })
    expect(dueDateFactor("2049-10-14")).toEqual({ ok: true, factor: "1000" })

    for (const [dueDate, factor] of [["2025-02-21", "9999"], ["2025-02-22", "1000"]] as const) {
      const digits = digitsFor("001", { agreement: "7777777", wallet: "18", ourNumber: "87654" }, dueDate, "100.00")
      expect(digits.barcode.slice(5, 9)).toBe(factor)
      expect(digits.digitableLine.slice(33, 37)).toBe(factor)
      expectThirdPartyAccepts(digits.barcode, digits.digitableLine, dueDate, "100.00")
    }
  })

  it("refuses due dates that have no factor", () => {
    for (const dueDate of ["1997-10-07", "1997-10-06", "1990-01-01"]) {
      const factor = dueDateFactor(dueDate)
      expect(factor.ok).toBe(false)
      if (!factor.ok) expect(factor.message).toMatch(/1997-10-07/)
    }
    for (const dueDate of ["2025-02-30", "2025-2-3", "03/02/2025", ""]) {
      expect(dueDateFactor(dueDate)).toMatchObject({ ok: false, message: expect.stringMatching(/YYYY-MM-DD/) })
    }
  })

  it("turns a módulo 11 result of 10 or 11 into 1 (a result of 0 cannot arise: the remainder is at most 10)", () => {
    // Banco do Brasil, convênio 7777777, carteira 18, due 2011-03-08, R$ 2,952.95, as the pyboleto
    // specimen but with other nosso números: Σ = 848 = 11 × 77 + 1 gives 11 − 1 = 10, and
    // Σ = 847 = 11 × 77 gives 11 − 0 = 11 (sums worked out apart from this code).
    const ten = digitsFor("001", { agreement: "7777777", wallet: "18", ourNumber: "87676" }, "2011-03-08", "2952.95")
    expect(modulo11Sum(ten.barcode.slice(0, 4) + ten.barcode.slice(5), 9)).toBe(848)
    expect(ten.barcode).toBe("00191490000002952950000007777777000008767618")
    expect(ten.formattedLine).toBe("00190.00009 07777.777009 00087.676185 1 49000000295295")
    expectThirdPartyAccepts(ten.barcode, ten.digitableLine, "2011-03-08", "2952.95")

    const eleven = digitsFor("001", { agreement: "7777777", wallet: "18", ourNumber: "87667" }, "2011-03-08", "2952.95")
    expect(modulo11Sum(eleven.barcode.slice(0, 4) + eleven.barcode.slice(5), 9)).toBe(847)
    expect(eleven.barcode).toBe("00191490000002952950000007777777000008766718")
    expect(eleven.formattedLine).toBe("00190.00009 07777.777009 00087.667184 1 49000000295295")
    expectThirdPartyAccepts(eleven.barcode, eleven.digitableLine, "2011-03-08", "2952.95")

    // Weights 2..9 from the right: "1" × 2 = 2, 11 − 2 = 9; "5" × 2 = 10 → remainder 10 → 1; "0" → 11 → 1.
    expect(barcodeCheckDigit("1")).toBe(9)
    expect(barcodeCheckDigit("5")).toBe(1)
    expect(barcodeCheckDigit("0")).toBe(1)
  })

  it("computes the banks' check digits as their manuals' examples give them", () => {
    // Itaú agência/conta DAC (módulo 10): pyboleto's 0293/01328-0 and brcobranca's examples.
    expect(modulo10("029301328")).toBe(0)
    expect(modulo10("060715255")).toBe(0)
    expect(modulo10("154785547")).toBe(6)
    expect(modulo10("154710207")).toBe(7)
    expect(modulo10("081153678")).toBe(8)
    // Itaú nosso número DAC over agência 0810, conta 53678, carteira 175 (brcobranca).
    expect(modulo10("081053678175" + "00015448")).toBe(6)
    expect(modulo10("081053678175" + "00034230")).toBe(5)
    // Bradesco's manual: carteira 19, nosso número 00000000002 → 8; …001 → P (remainder 1); …006 → 0.
    expect(bradescoOurNumberDigit("19", "00000000002")).toBe("8")
    expect(bradescoOurNumberDigit("19", "00000000001")).toBe("P")
    expect(bradescoOurNumberDigit("19", "00000000006")).toBe("0")
    // Santander (boleto_bancario, pyboleto).
    expect(santanderOurNumberDigit("566612457800")).toBe("2")
    expect(santanderOurNumberDigit("000001234567")).toBe("9")
  })

  it("leaves agência and conta out of Itaú's nosso número DAC for the carteiras of the manual's annex 4", () => {
    const at = (wallet: string, agency: string) => freeFieldFor("341", { wallet, agency, account: "53678", ourNumber: "258281" })
    expect(at("168", "0810")).toMatchObject({ ok: true, ourNumber: `168/00258281-${modulo10("16800258281")}` })
    expect(at("168", "0811")).toMatchObject({ ok: true, ourNumber: `168/00258281-${modulo10("16800258281")}` })
    expect(at("175", "0810")).toMatchObject({ ok: true, ourNumber: "175/00258281-7" })
    expect(at("175", "0811")).toMatchObject({ ok: true, ourNumber: `175/00258281-${modulo10("081153678175" + "00258281")}` })
    expect(at("198", "0810")).toMatchObject({ ok: false, message: expect.stringMatching(/carteira 198/) })
  })

  it("takes amounts in whole cents up to 99,999,999.99, never through floats", () => {
    const line = (amount: string) => boletoDigits({ bankCode: "001", currency: "9", dueDate: "2024-05-10", amount, freeField: "0".repeat(25) })
    expect(line("99999999.99")).toMatchObject({ ok: true, barcode: expect.stringMatching(/^\d{9}9999999999/) })
    // 4.35 × 100 is 434.99999999999994 in floating point; in cents it is 435.
    expect(line("4.35")).toMatchObject({ ok: true, digitableLine: expect.stringMatching(/0000000435$/) })
    expect(line("1234.560000")).toMatchObject({ ok: true, digitableLine: expect.stringMatching(/0000123456$/) })
    for (const [amount, why] of [
      ["10.005", /whole number of cents/], ["1.234560", /whole number of cents/], ["100000000.00", /99999999\.99/],
      ["-1.00", /non-negative decimal/], ["1,00", /non-negative decimal/], ["1e3", /non-negative decimal/], ["", /non-negative decimal/]
    ] as const) {
      expect(line(amount)).toMatchObject({ ok: false, message: expect.stringMatching(why) })
    }
    const max = digitsFor("341", { wallet: "109", agency: "0293", account: "01328", ourNumber: "157" }, "2031-01-15", "99999999.99")
    expectThirdPartyAccepts(max.barcode, max.digitableLine, "2031-01-15", "99999999.99")
  })

  it("refuses input that cannot make a boleto, saying why", () => {
    const base = { bankCode: "001", currency: "9", dueDate: "2024-05-10", amount: "10.00", freeField: "0".repeat(25) }
    expect(boletoDigits({ ...base, bankCode: "1" })).toMatchObject({ ok: false, message: expect.stringMatching(/three digits/) })
    expect(boletoDigits({ ...base, currency: "0" })).toMatchObject({ ok: false, message: expect.stringMatching(/currency code "0"/) })
    expect(boletoDigits({ ...base, freeField: "0".repeat(24) })).toMatchObject({ ok: false, message: expect.stringMatching(/25 digits/) })
    expect(boletoDigits({ ...base, freeField: "0".repeat(24) + "x" })).toMatchObject({ ok: false, message: expect.stringMatching(/25 digits/) })

    expect(freeFieldFor("104", { wallet: "1", ourNumber: "1" })).toMatchObject({ ok: false, message: expect.stringMatching(/bank "104"/) })
    expect(freeFieldFor("001", { agreement: "123456", wallet: "18", ourNumber: "1" })).toMatchObject({ ok: false, message: expect.stringMatching(/7 digits/) })
    expect(freeFieldFor("001", { agreement: "7777777", wallet: "18", ourNumber: "12345678901" })).toMatchObject({ ok: false, message: expect.stringMatching(/more than 10 digits/) })
    expect(freeFieldFor("341", { wallet: "109", agency: "0293", account: "01328-0", ourNumber: "157" })).toMatchObject({ ok: false, message: expect.stringMatching(/conta "01328-0" must hold digits only/) })
    expect(freeFieldFor("237", { wallet: "06", account: "0039232", ourNumber: "1" })).toMatchObject({ ok: false, message: "Bradesco needs the agência" })
    expect(freeFieldFor("033", { wallet: "102", ourNumber: "1" })).toMatchObject({ ok: false, message: "Santander needs the código do beneficiário" })
  })
})
