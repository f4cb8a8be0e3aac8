import { Effect, Schema } from "effect"
import type { Row } from "../engine/resource.js"
import { decimal, formatDecimal } from "../money/decimal.js"
import type { SettlementSide } from "../reports/queries.js"
import type { MatchLine } from "./match.js"

/** The fields of a financial transaction that reconciliation reads, decoded from its record. */
export const LineRecord = Schema.Struct({
  id: Schema.String,
  amount: Schema.String,
  allocated_total: Schema.String,
  posted_at: Schema.String,
  is_reconciled: Schema.Boolean,
  ignored_at: Schema.NullOr(Schema.String),
  name: Schema.NullOr(Schema.String),
  extd_name: Schema.NullOr(Schema.String),
  memo: Schema.NullOr(Schema.String),
  refnum: Schema.NullOr(Schema.String),
  checknum: Schema.NullOr(Schema.String)
})
export type LineRecord = typeof LineRecord.Type

const decodeLine = Schema.decodeUnknownEffect(LineRecord)

/** A stored transaction as reconciliation reads it; one that does not decode is a defect of the store. */
export const lineOf = (record: Row) => Effect.orDie(decodeLine(record))

/** Money in settles receivables, money out payables. */
export const sideOf = (line: LineRecord): SettlementSide => (decimal(line.amount).isNegative() ? "payables" : "receivables")

/** What is left of the line to allocate. */
export const leftOf = (line: LineRecord) => decimal(line.amount).abs().minus(line.allocated_total)

export const matchLineOf = (line: LineRecord): MatchLine => ({
  id: line.id,
  amount: line.amount,
  left: formatDecimal(leftOf(line)),
  postedAt: line.posted_at.slice(0, 10),
  text: [line.name, line.extd_name, line.memo, line.refnum, line.checknum]
})
