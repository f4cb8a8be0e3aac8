import { Effect, Schema } from "effect"
import type { SettlementSide } from "../reports/queries.js"

/** Tables and columns of receivables and payables, from a fixed map: never from a request. */
export const settlement = {
  receivables: { table: "receivables", allocations: "receivable_allocations", key: "receivable_id", party: "customer_id", parties: "customers" },
  payables: { table: "payables", allocations: "payable_allocations", key: "payable_id", party: "supplier_id", parties: "suppliers" }
} as const

/**
 * What settles a document less its allocations (alias `r`). Only a partial document has
 * allocations to subtract: a pending one has none (its status says so), so it costs no lookup.
 */
export const openAmountSql = (side: SettlementSide) => {
  const { allocations, key } = settlement[side]
  return `(r.amount - r.discount_amount + r.surcharge_amount - CASE WHEN r.status = 'partial' THEN coalesce((SELECT sum(a.allocated_amount)
    FROM ${allocations} a WHERE a.tenant_id = r.tenant_id AND a.${key} = r.id), 0) ELSE 0 END)`
}

/** Rows decoded by their schema; a row that does not fit is a defect of the statement, not of the request. */
export const decodeRows = <S extends Schema.Top & Schema.ConstraintDecoder<unknown>>(row: S) => {
  const decode = Schema.decodeUnknownEffect(Schema.Array(row))
  return (rows: ReadonlyArray<unknown>) => Effect.orDie(decode(rows))
}
