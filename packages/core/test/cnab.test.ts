import { describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import { CNAB_MAX_LINES, readCnabReturn, type CnabReadResult, type CnabReturn } from "../src/payments/cnab/index.js"

const fixture = (name: string) => new Uint8Array(fs.readFileSync(new URL(`../../../test/fixtures/cnab/${name}`, import.meta.url)))

/** A fixed-width record: blanks, with each text written from its 1-based position as the manuals count. */
const record = (length: number, fields: ReadonlyArray<readonly [number, string]>): string => {
  const chars = Array.from({ length }, () => " ")
  for (const [from, text] of fields) {
    if (from - 1 + text.length > length) throw new Error(`field at ${from} runs past ${length}`)
    for (let index = 0; index < text.length; index++) chars[from - 1 + index] = text[index]
  }
  return chars.join("")
}
const cents = (value: number, width: number) => String(value).padStart(width, "0")

const read = (content: Uint8Array | string): CnabReturn => {
  const result: CnabReadResult = readCnabReturn(content)
  if (!result.ok) throw new Error(result.message)
  return result
}

// CNAB 240 records of a small Itaú return, FEBRABAN positions.
const header240 = (fileCode = "2") => record(240, [[1, "341"], [4, "0000"], [8, "0"], [18, "2"], [19, "12345678000195"], [143, fileCode], [144, "02042024"]])
const batchHeader240 = record(240, [[1, "341"], [4, "0001"], [8, "1"], [9, "T"], [10, "01"]])
const segmentT = (sequence: number, occurrence: string, ourNumber: string, amount: number, fee = 0, batch = "0001") =>
  record(240, [[1, "341"], [4, batch], [8, "3"], [9, cents(sequence, 5)], [14, "T"], [16, occurrence], [38, ourNumber],
    [74, "01042024"], [82, cents(amount, 15)], [199, cents(fee, 15)]])
const segmentU = (sequence: number, occurrence: string, paid: number, when: string, credit: string, batch = "0001") =>
  record(240, [[1, "341"], [4, batch], [8, "3"], [9, cents(sequence, 5)], [14, "U"], [16, occurrence], [18, cents(0, 15)],
    [33, cents(0, 15)], [78, cents(paid, 15)], [93, cents(paid, 15)], [138, when], [146, credit]])
const batchTrailer240 = record(240, [[1, "341"], [4, "0001"], [8, "5"]])
const fileTrailer240 = (records: number) => record(240, [[1, "341"], [4, "9999"], [8, "9"], [18, "000001"], [24, cents(records, 6)]])
const file240 = (details: ReadonlyArray<string>) => {
  const lines = [header240(), batchHeader240, ...details, batchTrailer240]
  return [...lines, fileTrailer240(lines.length + 1)].join("\n")
}

// CNAB 400 records: Itaú and Banco do Brasil positions.
const header400 = (bank: string) => record(400, [[1, "0"], [2, "2"], [3, "RETORNO"], [10, "01"], [12, "COBRANCA"], [77, bank], [95, "020424"], [395, "000001"]])
const itauDetail = (line: number, occurrence: string, when: string, amount: number, paid: number, credit: string) =>
  record(400, [[1, "1"], [2, "02"], [4, "12345678000195"], [18, "0057"], [24, "12345"], [29, "7"], [63, "12345678"], [83, "109"],
    [86, "123456788"], [108, "I"], [109, occurrence], [111, when], [153, cents(amount, 13)], [176, cents(150, 13)],
    [241, cents(0, 13)], [254, cents(paid, 13)], [267, cents(0, 13)], [296, credit], [395, cents(line, 6)]])
const trailer400 = (line: number) => record(400, [[1, "9"], [2, "2"], [3, "01"], [5, "341"], [395, cents(line, 6)]])

describe("CNAB return files", () => {
  it("reads a Banco do Brasil CNAB 240 return (Windows-1252, CRLF) figure by figure", () => {
    const bytes = fixture("bb-cnab240-retorno.ret")
    // The file is Windows-1252 and ends each line with CRLF, the last one too.
    expect(bytes.includes(0xc3)).toBe(true)
    expect(Array.from(bytes.slice(-2))).toEqual([0x0d, 0x0a])
    const file = read(bytes)
    expect(file.layout).toBe("240")
    expect(file.bankCode).toBe("001")
    expect(file.entries).toEqual([
      {
        line: 3, ourNumber: "12345670000000101", occurrence: "06", settled: true,
        titleAmount: "150.000000", paidAmount: "153.150000", fees: "2.500000", discount: "0.000000", interest: "3.150000",
        netCredited: "150.650000", occurrenceDate: "2024-03-14", paymentDate: "2024-03-14", creditDate: "2024-03-15"
      },
      {
        // A partial payment the bank accepted: liquidation code, paid below the title amount.
        line: 5, ourNumber: "12345670000000102", occurrence: "06", settled: true,
        titleAmount: "1234.560000", paidAmount: "1000.000000", fees: "2.500000", discount: "0.000000", interest: "0.000000",
        netCredited: "997.500000", occurrenceDate: "2024-03-13", paymentDate: "2024-03-13", creditDate: "2024-03-14"
      },
      {
        line: 7, ourNumber: "12345670000000103", occurrence: "02", settled: false,
        titleAmount: "89.900000", paidAmount: "0.000000", fees: "0.000000", discount: "0.000000", interest: "0.000000",
        netCredited: "0.000000", occurrenceDate: "2024-03-11", paymentDate: null, creditDate: null
      },
      {
        line: 11, ourNumber: "12345670000000105", occurrence: "17", settled: true,
        titleAmount: "320.000000", paidAmount: "300.000000", fees: "2.500000", discount: "20.000000", interest: "0.000000",
        netCredited: "297.500000", occurrenceDate: "2024-03-13", paymentDate: "2024-03-13", creditDate: "2024-03-14"
      }
    ])
    expect(file.unreadable).toEqual([
      { line: 10, reason: "segment U (of the segment T on line 9) paid amount (positions 78–92) \"00000000000500O\" is not an amount in cents" }
    ])
  })

  it("reads a Bradesco CNAB 400 return (UTF-8, LF) figure by figure", () => {
    const file = read(fixture("bradesco-cnab400-retorno.ret"))
    expect(file.layout).toBe("400")
    expect(file.bankCode).toBe("237")
    const common = { netCredited: null, discount: "0.000000", interest: "0.000000", fees: "1.950000" }
    expect(file.entries).toEqual([
      {
        ...common, line: 2, ourNumber: "000000123458", occurrence: "06", settled: true, titleAmount: "250.000000", paidAmount: "250.000000",
        occurrenceDate: "2024-03-14", paymentDate: "2024-03-14", creditDate: "2024-03-15"
      },
      {
        ...common, line: 3, ourNumber: "000000123466", occurrence: "06", settled: true, titleAmount: "320.000000", paidAmount: "200.000000",
        occurrenceDate: "2024-03-14", paymentDate: "2024-03-14", creditDate: "2024-03-15"
      },
      {
        ...common, line: 4, ourNumber: "000000123474", occurrence: "02", settled: false, titleAmount: "75.500000", paidAmount: "0.000000",
        fees: "0.000000", occurrenceDate: "2024-03-11", paymentDate: null, creditDate: null
      },
      {
        ...common, line: 5, ourNumber: "000000123482", occurrence: "17", settled: true, titleAmount: "99.900000", paidAmount: "102.400000",
        interest: "2.500000", occurrenceDate: "2024-03-13", paymentDate: "2024-03-13", creditDate: "2024-03-14"
      },
      {
        ...common, line: 7, ourNumber: "000000123504", occurrence: "06", settled: true, titleAmount: "500.000000", paidAmount: "475.000000",
        discount: "25.000000", occurrenceDate: "2024-03-08", paymentDate: "2024-03-08", creditDate: "2024-03-11"
      }
    ])
    expect(file.unreadable).toEqual([{ line: 6, reason: "has 398 characters, not 400" }])
  })

  it("counts characters, not bytes: the same return reads alike in UTF-8, Latin-1 and as a string", () => {
    const bytes = fixture("bradesco-cnab400-retorno.ret")
    const text = new TextDecoder("utf-8").decode(bytes)
    expect(text).toContain("PADARIA SÃO JOÃO LTDA")
    expect(bytes.length).toBeGreaterThan(text.length)
    const latin1 = new Uint8Array(Buffer.from(text, "latin1"))
    const crlf = text.replace(/\n/g, "\r\n")
    const expected = read(bytes)
    expect(read(latin1)).toEqual(expected)
    expect(read(text)).toEqual(expected)
    expect(read(crlf)).toEqual(expected)
    expect(read("\uFEFF" + crlf.trimEnd())).toEqual(expected)
  })

  it("settles by each bank's own liquidation codes in CNAB 400", () => {
    const lines = [
      header400("341"),
      itauDetail(2, "06", "150324", 10000, 10000, "180324"),
      itauDetail(3, "08", "311299", 10000, 10500, "010100"),
      // Itaú's 17 is "alteração de dados rejeitada", not a liquidation as in Bradesco's layout.
      itauDetail(4, "17", "010169", 10000, 0, "000000"),
      // 07 liquidação parcial: money received, the title stays open.
      itauDetail(5, "07", "010170", 10000, 4000, "020170"),
      trailer400(6)
    ]
    const file = read(lines.join("\n"))
    expect(file.unreadable).toEqual([])
    expect(file.entries.map((entry) => [entry.ourNumber, entry.occurrence, entry.settled, entry.fees, entry.occurrenceDate, entry.paymentDate, entry.creditDate])).toEqual([
      ["123456788", "06", true, "1.500000", "2024-03-15", "2024-03-15", "2024-03-18"],
      // DDMMYY: years 00–69 are 20xx, 70–99 are 19xx.
      ["123456788", "08", true, "1.500000", "1999-12-31", "1999-12-31", "2000-01-01"],
      ["123456788", "17", false, "1.500000", "2069-01-01", null, null],
      ["123456788", "07", false, "1.500000", "1970-01-01", "1970-01-01", "1970-01-02"]
    ])

    // Banco do Brasil, convênio of 7 digits: details of type 7, nosso número at 64–80, credit date 176–181, fee 182–188.
    const bbDetail = (line: number, type: string, occurrence: string) =>
      record(400, [[1, type], [64, "77777770000087654"], [109, occurrence], [111, "140324"], [153, cents(295295, 13)],
        [176, "150324"], [182, cents(345, 7)], [241, cents(0, 13)], [254, cents(295295, 13)], [267, cents(0, 13)], [395, cents(line, 6)]])
    const bb = read([header400("001"), bbDetail(2, "7", "05"), bbDetail(3, "7", "07"), bbDetail(4, "1", "06"), trailer400(5)].join("\r\n"))
    expect(bb.entries.map((entry) => [entry.line, entry.ourNumber, entry.occurrence, entry.settled, entry.titleAmount, entry.fees, entry.creditDate])).toEqual([
      [2, "77777770000087654", "05", true, "2952.950000", "3.450000", "2024-03-15"],
      [3, "77777770000087654", "07", false, "2952.950000", "3.450000", "2024-03-15"]
    ])
    expect(bb.unreadable).toEqual([{ line: 4, reason: "record type \"1\" (position 1) is not read: Banco do Brasil titles come in records of type 7" }])
  })

  it("puts every CNAB 400 line it cannot read in unreadable, with the reason", () => {
    const good = itauDetail(2, "06", "150324", 10000, 10000, "180324")
    const at = (line: string, from: number, text: string) => line.slice(0, from - 1) + text + line.slice(from - 1 + text.length)
    const renumber = (line: string, to: number) => at(line, 395, cents(to, 6))
    const lines = [
      header400("341"),
      good,
      renumber(at(good, 111, "310224"), 3),
      renumber(at(good, 254, "00000001,0000"), 4),
      renumber(at(good, 86, "         "), 5),
      renumber(good, 7),
      trailer400(7),
      renumber(good, 8)
    ]
    const file = read(lines.join("\n") + "\n\n")
    expect(file.entries.map((entry) => entry.line)).toEqual([2])
    expect(file.unreadable).toEqual([
      { line: 3, reason: "detail occurrence date (positions 111–116) \"310224\" is not a date DDMMYY" },
      { line: 4, reason: "detail paid amount (positions 254–266) \"00000001,0000\" is not an amount in cents" },
      { line: 5, reason: "detail nosso número (positions 86–94) \"         \" is blank" },
      { line: 6, reason: "record number \"000007\" (positions 395–400) is not its place in the file, 6: a record is missing or out of order" },
      { line: 8, reason: "record after the trailer (line 7)" }
    ])
    expect(read([header400("341"), good].join("\n")).unreadable).toEqual([
      { line: 2, reason: "the file ends without a trailer (record type 9): it may be cut short" }
    ])
  })

  it("pairs each CNAB 240 segment T with the segment U after it, and reports the ones that do not pair", () => {
    const file = read(file240([
      segmentT(1, "06", "10900000157", 2980, 120),
      segmentU(2, "06", 2980, "19102009", "20102009"),
      // T without its U: the next record is another T.
      segmentT(3, "06", "10900000158", 1000),
      segmentT(4, "09", "10900000159", 1000),
      segmentU(5, "09", 0, "19102009", "00000000"),
      // U without a T before it.
      segmentU(6, "06", 1000, "19102009", "20102009"),
      // U numbered out of turn: a record between them is missing.
      segmentT(7, "06", "10900000160", 1000),
      segmentU(9, "06", 1000, "19102009", "20102009"),
      // U whose movement code is not its T's.
      segmentT(10, "06", "10900000161", 1000),
      segmentU(11, "02", 0, "19102009", "00000000"),
      // Another batch's U.
      segmentT(12, "06", "10900000162", 1000),
      segmentU(13, "06", 1000, "19102009", "20102009", "0002"),
      // Segments other than T and U are not read.
      record(240, [[1, "341"], [4, "0001"], [8, "3"], [9, "00014"], [14, "Y"], [16, "06"]]),
      // A record of another bank, and a line of the wrong length.
      segmentT(15, "06", "10900000163", 1000).replace(/^341/, "237"),
      segmentT(16, "06", "10900000164", 1000).slice(0, 200),
      // An impossible date.
      segmentT(17, "06", "10900000165", 1000),
      segmentU(18, "06", 1000, "30022024", "01032024")
    ]))
    expect(file.entries.map((entry) => [entry.line, entry.ourNumber, entry.occurrence, entry.settled, entry.titleAmount, entry.fees, entry.paidAmount, entry.paymentDate, entry.creditDate])).toEqual([
      [3, "10900000157", "06", true, "29.800000", "1.200000", "29.800000", "2009-10-19", "2009-10-20"],
      [6, "10900000159", "09", false, "10.000000", "0.000000", "0.000000", null, null]
    ])
    expect(file.unreadable).toEqual([
      { line: 5, reason: "segment T is not followed by its segment U" },
      { line: 8, reason: "segment U without a segment T before it" },
      { line: 10, reason: "segment U has record number 00009 (positions 9–13), not the one after its segment T's 00007 (line 9)" },
      { line: 12, reason: "segment U movement code 02 differs from its segment T's 06 (line 11)" },
      { line: 14, reason: "segment U is in batch 0002, its segment T (line 13) in batch 0001" },
      { line: 15, reason: "segment \"Y\" (position 14) is not read: titles come in segments T and U" },
      { line: 16, reason: "bank code 237 (positions 1–3) differs from the file header's 341" },
      { line: 17, reason: "has 200 characters, not 240" },
      { line: 19, reason: "segment U (of the segment T on line 18) occurrence date (positions 138–145) \"30022024\" is not a date DDMMYYYY" }
    ])
  })

  it("checks the CNAB 240 file trailer", () => {
    const details = [segmentT(1, "06", "10900000157", 2980), segmentU(2, "06", 2980, "19102009", "20102009")]
    const lines = [header240(), batchHeader240, ...details, batchTrailer240]
    expect(read([...lines, fileTrailer240(6)].join("\n")).unreadable).toEqual([])
    expect(read([...lines, fileTrailer240(7)].join("\n")).unreadable).toEqual([
      { line: 6, reason: "the file trailer counts \"000007\" records (positions 24–29), the file has 6" }
    ])
    expect(read(lines.join("\n")).unreadable).toEqual([
      { line: 5, reason: "the file ends without a file trailer (record type 9): it may be cut short" }
    ])
    expect(read([...lines, fileTrailer240(7), batchTrailer240].join("\n")).unreadable).toEqual([
      { line: 7, reason: "record after the file trailer (line 6)" }
    ])
  })

  it("refuses files it cannot read at all, saying why", () => {
    const refused = (content: Uint8Array | string) => {
      const result = readCnabReturn(content)
      return result.ok ? "read" : result.message
    }
    expect(refused("")).toBe("the file is empty")
    expect(refused("\r\n\r\n")).toBe("the file is empty")
    expect(refused(new Uint8Array(0))).toBe("the file is empty")
    expect(refused("OFXHEADER:100\nDATA:OFXSGML\n")).toMatch(/neither a CNAB 240 file header .* nor a CNAB 400 return header/)
    expect(refused(header240("1"))).toMatch(/position 143\) is "1": this is not a return file/)
    expect(refused(record(400, [[1, "01REMESSA"], [77, "341"]]))).toMatch(/remessa/)
    expect(refused(header400("104"))).toMatch(/no CNAB 400 return layout for bank "104"/)
    expect(refused("x\n".repeat(CNAB_MAX_LINES + 1))).toMatch(/too large: .* 200000 lines/)
    expect(refused("x\n".repeat(CNAB_MAX_LINES))).toMatch(/neither a CNAB 240/)
  })
})
