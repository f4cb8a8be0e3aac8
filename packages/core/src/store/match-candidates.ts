import * as SqlClient from "effect/sql/SqlClient"
import { Effect, Layer, Schema } from "effect"
import { type CandidateQuery, MatchCandidates, ourNumberDigits } from "../reconciliation/candidates.js"
import { decodeRows, openAmountSql, settlement } from "./settlement-sql.js"

const CandidateRow = Schema.Struct({
  id: Schema.String,
  open: Schema.String,
  due_date: Schema.String,
  party_id: Schema.NullOr(Schema.String),
  legal_name: Schema.NullOr(Schema.String),
  trade_name: Schema.NullOr(Schema.String),
  tax_id: Schema.NullOr(Schema.String),
  reference_code: Schema.NullOr(Schema.String),
  pix_txid: Schema.NullOr(Schema.String),
  our_number: Schema.NullOr(Schema.String)
})

const AllocationRow = Schema.Struct({ side: Schema.Literals(["receivables", "payables"]), document_id: Schema.String, allocation_id: Schema.String })

export const layerMatchCandidates = Layer.effect(
  MatchCandidates,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const candidates = decodeRows(CandidateRow)
    const allocations = decodeRows(AllocationRow)

    const open = (query: CandidateQuery) => {
      const { table, party, parties } = settlement[query.side]
      // Only receivables carry the identifiers of a bank charge.
      const charge = query.side === "receivables" ? "r.pix_txid, r.our_number" : "NULL::text AS pix_txid, NULL::text AS our_number"
      const chargeMatch = query.side === "receivables"
        ? sql`OR upper(r.pix_txid) = ANY(${query.words.map((word) => word.toUpperCase())}::text[]) OR ltrim(r.our_number, '0') = ANY(${query.digitRuns.map((run) => run.replace(/^0+/u, ""))}::text[])`
        : sql``
      return sql`SELECT r.id::text AS id, ${sql.literal(openAmountSql(query.side))}::numeric(20, 6)::text AS open, r.due_date::text AS due_date,
          r.${sql.literal(party)}::text AS party_id, p.legal_name, p.trade_name, p.tax_id, r.reference_code, ${sql.literal(charge)}
        FROM ${sql.literal(table)} r LEFT JOIN ${sql.literal(parties)} p ON p.tenant_id = r.tenant_id AND p.id = r.${sql.literal(party)}
        WHERE r.tenant_id = ${query.tenantId}::uuid AND r.deleted_at IS NULL AND r.status IN ('pending', 'partial')
          AND (r.due_date BETWEEN ${query.from}::date AND ${query.to}::date
            OR ${sql.literal(openAmountSql(query.side))} = ANY(${query.amounts}::numeric[])
            OR lower(r.reference_code) = ANY(${query.words}::text[]) OR r.reference_code = ANY(${query.digitRuns}::text[]) ${chargeMatch})
        ORDER BY abs(r.due_date - (${query.from}::date + (${query.to}::date - ${query.from}::date) / 2)), r.id
        LIMIT ${query.limit}`.pipe(
        Effect.orDie,
        Effect.flatMap(candidates),
        Effect.map((rows) => rows.map((row) => ({
          id: row.id,
          open: row.open,
          dueDate: row.due_date,
          partyId: row.party_id,
          partyNames: [row.legal_name, row.trade_name].filter((name): name is string => name !== null),
          partyTaxId: row.tax_id,
          referenceCode: row.reference_code,
          pixTxid: row.pix_txid,
          ourNumber: row.our_number
        })))
      )
    }

    const allocationsOf = (tenantId: string, transactionId: string) =>
      sql`SELECT 'receivables' AS side, receivable_id::text AS document_id, id::text AS allocation_id FROM receivable_allocations
          WHERE tenant_id = ${tenantId}::uuid AND financial_transaction_id = ${transactionId}::uuid
        UNION ALL
        SELECT 'payables', payable_id::text, id::text FROM payable_allocations
          WHERE tenant_id = ${tenantId}::uuid AND financial_transaction_id = ${transactionId}::uuid
        ORDER BY 3`.pipe(
        Effect.orDie,
        Effect.flatMap(allocations),
        Effect.map((rows) => rows.map((row) => ({ side: row.side, documentId: row.document_id, allocationId: row.allocation_id })))
      )

    const ourNumberRows = decodeRows(Schema.Struct({ id: Schema.String, our_number: Schema.String }))
    const byOurNumbers = (tenantId: string, accountId: string, numbers: ReadonlyArray<string>) => {
      const keys = [...new Set(numbers.map(ourNumberDigits).filter((key) => key.length > 0))]
      if (keys.length === 0) return Effect.succeed([])
      return sql`SELECT r.id::text AS id, r.our_number FROM receivables r
          CROSS JOIN LATERAL (SELECT regexp_replace(r.our_number, '[^0-9]', '', 'g') AS digits) d
          WHERE r.tenant_id = ${tenantId}::uuid AND r.financial_account_id = ${accountId}::uuid AND r.our_number IS NOT NULL AND r.deleted_at IS NULL
            AND d.digits <> '' AND EXISTS (SELECT 1 FROM unnest(${keys}::text[]) k WHERE right(k, length(d.digits)) = d.digits OR right(d.digits, length(k)) = k)`.pipe(
        Effect.orDie,
        Effect.flatMap(ourNumberRows),
        Effect.map((rows) => rows.map((row) => ({ id: row.id, ourNumber: row.our_number })))
      )
    }

    return MatchCandidates.of({ open, allocationsOf, byOurNumbers })
  })
)
