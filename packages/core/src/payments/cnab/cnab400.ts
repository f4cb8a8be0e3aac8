import type { Cnab400Layout } from "./cnab400-layouts.js"
import { paymentDateOf, type EntryRead } from "./entry.js"
import { RecordReader } from "./record-reader.js"
import type { CnabEntry, CnabUnreadable } from "./types.js"

/**
 * CNAB 400 return of "cobrança": a header ("0" at position 1, "02RETORNO"), one record per
 * title occurrence and a trailer ("9"), every record numbered at 395–400 from 1 in file order.
 */

const readDetail = (record: string, line: number, layout: Cnab400Layout): EntryRead => {
  const reader = new RecordReader(record, "detail")
  const ourNumber = reader.required(layout.ourNumber[0], layout.ourNumber[1], "nosso número")
  const occurrence = reader.code(109, 110, "occurrence")
  const occurrenceDate = reader.date(111, 116, "occurrence date")
  const titleAmount = reader.amount(153, 165, "title amount")
  const fees = reader.amount(layout.fees[0], layout.fees[1], "fee (tarifa)")
  const discount = reader.amount(241, 253, "discount")
  const paidAmount = reader.amount(254, 266, "paid amount")
  const interest = reader.amount(267, 279, "interest (juros de mora)")
  const creditDate = reader.date(layout.creditDate[0], layout.creditDate[1], "credit date")
  if (reader.reasons.length > 0) return { ok: false, line, reason: reader.reasons.join("; ") }
  const settled = layout.settled.has(occurrence)
  const entry: CnabEntry = {
    line, ourNumber, occurrence, settled, titleAmount, paidAmount, fees, discount, interest, netCredited: null,
    occurrenceDate, paymentDate: paymentDateOf(settled, paidAmount, occurrenceDate), creditDate
  }
  return { ok: true, entry }
}

/** Entries and unreadable lines of a CNAB 400 return whose header is `lines[0]`. */
export const readCnab400 = (lines: ReadonlyArray<string>, layout: Cnab400Layout): { entries: Array<CnabEntry>; unreadable: Array<CnabUnreadable> } => {
  const entries: Array<CnabEntry> = []
  const unreadable: Array<CnabUnreadable> = []
  let trailerLine: number | undefined

  for (let index = 1; index < lines.length; index++) {
    const line = index + 1
    const record = lines[index]
    if (trailerLine !== undefined) {
      unreadable.push({ line, reason: `record after the trailer (line ${trailerLine})` })
      continue
    }
    if (record.length !== 400) {
      unreadable.push({ line, reason: `has ${record.length} characters, not 400` })
      continue
    }
    const sequence = record.slice(394, 400)
    if (sequence !== String(line).padStart(6, "0")) {
      unreadable.push({ line, reason: `record number "${sequence}" (positions 395–400) is not its place in the file, ${line}: a record is missing or out of order` })
      continue
    }
    const recordType = record[0]
    if (recordType === "9") {
      trailerLine = line
    } else if (recordType === layout.detailType) {
      const read = readDetail(record, line, layout)
      if (read.ok) entries.push(read.entry)
      else unreadable.push({ line: read.line, reason: read.reason })
    } else {
      unreadable.push({ line, reason: `record type "${recordType}" (position 1) is not read: ${layout.bank} titles come in records of type ${layout.detailType}` })
    }
  }
  if (trailerLine === undefined) unreadable.push({ line: lines.length, reason: "the file ends without a trailer (record type 9): it may be cut short" })
  return { entries, unreadable }
}
