import { describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import { OfxError, parseOfx, parseOfxAmount, parseOfxDate, readStatement } from "../src/index.js"

const fixture = (name: string) => new Uint8Array(fs.readFileSync(new URL(`../../../test/fixtures/ofx/${name}`, import.meta.url)))

describe("OFX statements", () => {
  it("reads a Brazilian bank's OFX 1.02 (SGML, Windows-1252, CRLF, unclosed leaves, decimal commas)", () => {
    const statement = readStatement(fixture("itau-2024-01.ofx"))
    expect(statement.version).toBe("102")
    expect(statement.currency).toBe("BRL")
    expect(statement.accounts).toEqual(["0341/1234/56789-0"])
    expect(statement.lines.map((line) => [line.fitid, line.trn_type, line.posted_at, line.amount])).toEqual([
      ["20240102001", "CREDIT", "2024-01-02", "4850.000000"],
      ["20240105001", "DEBIT", "2024-01-05", "-1250.000000"],
      ["20240110001", "DEBIT", "2024-01-10", "-389.900000"],
      // The bank used one FITID for two lines: the second is told apart, the same way on every import.
      ["20240110001#2", "FEE", "2024-01-10", "-54.900000"],
      ["20240115001", "CREDIT", "2024-01-15", "1200.000000"],
      ["20240131001", "DEBIT", "2024-01-31", "-2.350000"]
    ])
    expect(statement.lines[0].memo).toBe("PIX RECEBIDO PADARIA SÃO JOÃO LTDA")
    expect(statement.lines[2].memo).toBe("PAG BOLETO ENERGIA ELÉTRICA & GÁS")
    expect(statement.lines[1].checknum).toBe("000001")
  })

  it("reads a US card's OFX 2.2 (XML, entities, DTUSER, a foreign-currency line, an empty element)", () => {
    const statement = readStatement(fixture("chase-card-2024-01.qfx"))
    expect(statement.version).toBe("220")
    expect(statement.currency).toBe("USD")
    expect(statement.accounts).toEqual(["4111111111111111"])
    const [amazon, paris, payment] = statement.lines
    expect(amazon).toMatchObject({ fitid: "2024010324692163", posted_at: "2024-01-03", user_initiated_at: "2024-01-02", amount: "-42.170000", name: "AMZN Mktp US*2K4 & \"Co\" {x}", memo: "Order <123>" })
    expect(paris).toMatchObject({ amount: "-20.000000", orig_currency_code: "EUR", orig_amount: "-18.181818", memo: null })
    expect(payment).toMatchObject({ trn_type: "CREDIT", amount: "500.000000", name: "PAYMENT THANK YOU" })
  })

  it("keeps CDATA sections verbatim in OFX 2.x and 1.x: no entity decoding inside, `<` `&` `]]` and line breaks kept", () => {
    const line = (fitid: string, fields: string) =>
      `<STMTTRN><TRNTYPE>DEBIT</TRNTYPE><DTPOSTED>20240103</DTPOSTED><TRNAMT>-1.00</TRNAMT><FITID>${fitid}</FITID>${fields}</STMTTRN>`
    const xml = `<?xml version="1.0" encoding="UTF-8"?>
<?OFX OFXHEADER="200" VERSION="220"?>
<OFX><CREDITCARDMSGSRSV1><CCSTMTTRNRS><CCSTMTRS><CURDEF>USD</CURDEF><CCACCTFROM><ACCTID>4111</ACCTID></CCACCTFROM><BANKTRANLIST>
${line("1", "<NAME><![CDATA[AT&T <Wireless> &amp; Co]]></NAME><MEMO><![CDATA[first line\r\n  second </MEMO> line]]></MEMO>")}
${line("2", "<NAME>\n  <![CDATA[a]]b]] >c]]]>\n</NAME><MEMO>Tom &amp; <![CDATA[Jerry & <Co>]]> &lt;3</MEMO>")}
${line("3", "<NAME><![CDATA[]]></NAME><MEMO><![CDATA[<![CDATA[nested]]></MEMO>")}
</BANKTRANLIST></CCSTMTRS></CCSTMTTRNRS></CREDITCARDMSGSRSV1></OFX>`
    expect(readStatement(xml).lines.map((entry) => [entry.name, entry.memo])).toEqual([
      ["AT&T <Wireless> &amp; Co", "first line\r\n  second </MEMO> line"],
      ["a]]b]] >c]", "Tom & Jerry & <Co> <3"],
      [null, "<![CDATA[nested"]
    ])

    const sgml = `OFXHEADER:100\r\nDATA:OFXSGML\r\nVERSION:102\r\n\r\n<OFX><BANKMSGSRSV1><STMTTRNRS><STMTRS><CURDEF>BRL<BANKACCTFROM><BANKID>0341<ACCTID>1\r\n` +
      `<BANKTRANLIST><STMTTRN><TRNTYPE>DEBIT<DTPOSTED>20240103<TRNAMT>-1,00<FITID>9<NAME><![CDATA[PADARIA & CIA <SP>]]>\r\n<MEMO>PIX &amp; <![CDATA[&amp;]]>\r\n</STMTTRN></BANKTRANLIST></STMTRS></STMTTRNRS></BANKMSGSRSV1></OFX>`
    expect(readStatement(sgml).lines.map((entry) => [entry.name, entry.memo])).toEqual([["PADARIA & CIA <SP>", "PIX & &amp;"]])

    expect(() => parseOfx("<OFX><NAME><![CDATA[never closed]]</NAME></OFX>")).toThrow(/unclosed CDATA section/)
  })

  it("reads the same text whether it comes as bytes or as a string (an MCP argument)", () => {
    const bytes = fixture("itau-2024-01.ofx")
    const text = new TextDecoder("windows-1252").decode(bytes)
    expect(readStatement(text)).toEqual(readStatement(bytes))
  })

  it("keeps corrections and gives lines without a FITID a stable id from their content", () => {
    const corrections = readStatement(fixture("itau-2024-02-corrections.ofx")).lines
    expect(corrections.map((line) => [line.fitid, line.correct_fitid, line.correct_action])).toEqual([
      ["20240131001R", "20240131001", "REPLACE"],
      ["20240115001D", "20240115001", "DELETE"],
      ["20240202001", null, null]
    ])
    const noFitid = "<OFX><BANKMSGSRSV1><STMTTRNRS><STMTRS><BANKTRANLIST><STMTTRN><TRNTYPE>DEBIT<DTPOSTED>20240101<TRNAMT>-1.00<MEMO>A</STMTTRN></BANKTRANLIST></STMTRS></STMTTRNRS></BANKMSGSRSV1></OFX>"
    const first = readStatement(noFitid).lines[0].fitid
    expect(first).toMatch(/^ofx:[0-9a-f]{32}$/)
    expect(readStatement(noFitid).lines[0].fitid).toBe(first)
  })

  it.each([
    ["-1250.00", "-1250.000000"],
    ["3500,50", "3500.500000"],
    ["1.200,00", "1200.000000"],
    ["1,234.56", "1234.560000"],
    ["+12.5", "12.500000"],
    ["-.5", undefined],
    ["abc", undefined]
  ])("amount %s → %s", (text, expected) => {
    expect(parseOfxAmount(text)).toBe(expected)
  })

  it.each([
    ["20240115", "2024-01-15"],
    ["20240115103000", "2024-01-15"],
    ["20240115103000.000[-3:BRT]", "2024-01-15"],
    ["20240230", undefined],
    ["2024-01-15", undefined]
  ])("date %s → %s", (text, expected) => {
    expect(parseOfxDate(text)).toBe(expected)
  })

  it("refuses what is not a statement, naming why", () => {
    expect(() => readStatement("hello")).toThrow(OfxError)
    expect(() => readStatement("<OFX><SIGNONMSGSRSV1></SIGNONMSGSRSV1></OFX>")).toThrow(/no bank or credit-card statement/)
    expect(() => readStatement("<OFX><BANKMSGSRSV1><STMTTRNRS><STMTRS><BANKTRANLIST><STMTTRN><TRNAMT>1</STMTTRN></BANKTRANLIST></STMTRS></STMTTRNRS></BANKMSGSRSV1></OFX>"))
      .toThrow(/DTPOSTED/)
  })

  // Each file is 0.2-1.4 MB: read in one linear pass it takes well under a second, where a
  // backtracking or quadratic reader takes hours, so the test's own time limit is the check.
  it("costs time in proportion to the file, whatever it holds: long tag names, deep nesting, many tags", { timeout: 60_000 }, () => {
    const hostile = [
      `<OFX><${"A".repeat(200_000)}>x`,
      `<OFX>${"<STMTTRN>".repeat(100)}`,
      `<OFX>${"<AGG>".repeat(50)}${"</AGG>".repeat(50)}`,
      `<OFX>${"<A>1".repeat(200_000)}`,
      `<OFX>${"&amp;".repeat(200_000)}`,
      `<OFX><NAME>${"<![CDATA[]]".repeat(200_000)}`,
      `<OFX>${"<A><![CDATA[<&]]>".repeat(200_000)}`
    ]
    for (const text of hostile) {
      try {
        parseOfx(text)
      } catch (error) {
        expect(error).toBeInstanceOf(OfxError)
      }
    }
  })
})
