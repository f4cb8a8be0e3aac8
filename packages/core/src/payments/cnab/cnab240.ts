import { paymentDateOf, type EntryRead } from "./entry.js"
import { RecordReader } from "./record-reader.js"
import type { CnabEntry, CnabUnreadable } from "./types.js"

/**
 * CNAB 240 return of "cobrança", FEBRABAN layout (versions 08.x to 10.x): file header
 * (record type "0" at position 8), batches (header "1", details "3", trailer "5") and a
 * file trailer ("9"). Each title comes as a segment T followed by its segment U.
 */

/** FEBRABAN's liquidation codes of movement: 06 liquidação, 17 liquidação após baixa ou de título não registrado. */
const SETTLED = new Set(["06", "17"])

interface Line {
  readonly number: number
  readonly record: string
}

/** Segment T (title, amount, fee) with the segment U (paid amounts and dates) that follows it. */
const readPair = (t: Line, u: Line): EntryRead => {
  const tReader = new RecordReader(t.record, "segment T")
  const uReader = new RecordReader(u.record, `segment U (of the segment T on line ${t.number})`)
  if (tReader.text(4, 7) !== uReader.text(4, 7)) {
    return { ok: false, line: u.number, reason: `segment U is in batch ${uReader.text(4, 7)}, its segment T (line ${t.number}) in batch ${tReader.text(4, 7)}` }
  }
  const tSequence = Number(tReader.text(9, 13))
  if (!/^\d{5}$/.test(tReader.text(9, 13)) || uReader.text(9, 13) !== String(tSequence + 1).padStart(5, "0")) {
    return { ok: false, line: u.number, reason: `segment U has record number ${uReader.text(9, 13)} (positions 9–13), not the one after its segment T's ${tReader.text(9, 13)} (line ${t.number})` }
  }
  const occurrence = tReader.code(16, 17, "movement code")
  if (uReader.text(16, 17) !== occurrence) {
    return { ok: false, line: u.number, reason: `segment U movement code ${uReader.text(16, 17)} differs from its segment T's ${occurrence} (line ${t.number})` }
  }
  const ourNumber = tReader.required(38, 57, "nosso número")
  const titleAmount = tReader.amount(82, 96, "title amount")
  const fees = tReader.amount(199, 213, "fee (tarifa/custas)")
  const interest = uReader.amount(18, 32, "interest (juros/multa/encargos)")
  const discount = uReader.amount(33, 47, "discount")
  const paidAmount = uReader.amount(78, 92, "paid amount")
  const netCredited = uReader.amount(93, 107, "net credited amount")
  const occurrenceDate = uReader.date(138, 145, "occurrence date")
  const creditDate = uReader.date(146, 153, "credit date")
  if (tReader.reasons.length > 0) return { ok: false, line: t.number, reason: tReader.reasons.join("; ") }
  if (uReader.reasons.length > 0) return { ok: false, line: u.number, reason: uReader.reasons.join("; ") }
  const settled = SETTLED.has(occurrence)
  const entry: CnabEntry = {
    line: t.number, ourNumber, occurrence, settled, titleAmount, paidAmount, fees, discount, interest, netCredited,
    occurrenceDate, paymentDate: paymentDateOf(settled, paidAmount, occurrenceDate), creditDate
  }
  return { ok: true, entry }
}

/** Entries and unreadable lines of a CNAB 240 return whose file header is `lines[0]`. */
export const readCnab240 = (lines: ReadonlyArray<string>, bankCode: string): { entries: Array<CnabEntry>; unreadable: Array<CnabUnreadable> } => {
  const entries: Array<CnabEntry> = []
  const unreadable: Array<CnabUnreadable> = []
  let pendingT: Line | undefined
  let trailerLine: number | undefined

  const dropPendingT = () => {
    if (pendingT !== undefined) unreadable.push({ line: pendingT.number, reason: "segment T is not followed by its segment U" })
    pendingT = undefined
  }

  for (let index = 1; index < lines.length; index++) {
    const line: Line = { number: index + 1, record: lines[index] }
    const skip = (reason: string) => {
      dropPendingT()
      unreadable.push({ line: line.number, reason })
    }
    if (trailerLine !== undefined) {
      skip(`record after the file trailer (line ${trailerLine})`)
      continue
    }
    if (line.record.length !== 240) {
      skip(`has ${line.record.length} characters, not 240`)
      continue
    }
    if (line.record.slice(0, 3) !== bankCode) {
      skip(`bank code ${line.record.slice(0, 3)} (positions 1–3) differs from the file header's ${bankCode}`)
      continue
    }
    const recordType = line.record[7]
    if (recordType === "1" || recordType === "5") {
      dropPendingT()
    } else if (recordType === "9") {
      dropPendingT()
      trailerLine = line.number
      const counted = line.record.slice(23, 29)
      if (!/^\d{6}$/.test(counted) || Number(counted) !== lines.length) {
        unreadable.push({ line: line.number, reason: `the file trailer counts "${counted}" records (positions 24–29), the file has ${lines.length}` })
      }
    } else if (recordType === "3") {
      const segment = line.record[13]
      if (segment === "T") {
        dropPendingT()
        pendingT = line
      } else if (segment === "U") {
        if (pendingT === undefined) {
          unreadable.push({ line: line.number, reason: "segment U without a segment T before it" })
        } else {
          const read = readPair(pendingT, line)
          if (read.ok) entries.push(read.entry)
          else unreadable.push({ line: read.line, reason: read.reason })
          pendingT = undefined
        }
      } else {
        skip(`segment "${segment}" (position 14) is not read: titles come in segments T and U`)
      }
    } else {
      skip(`record type "${recordType}" (position 8) is not a record of a CNAB 240 return`)
    }
  }
  dropPendingT()
  if (trailerLine === undefined) unreadable.push({ line: lines.length, reason: "the file ends without a file trailer (record type 9): it may be cut short" })
  return { entries, unreadable }
}
