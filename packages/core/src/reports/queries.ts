import { Context, type Effect } from "effect"

/** Which documents a report reads: receivables (owed to the tenant) or payables (owed by it). */
export type SettlementSide = "receivables" | "payables"

export interface AgingQuery {
  readonly tenantId: string
  readonly side: SettlementSide
  readonly asOf: string
  /** The first day past due of each bucket after `current` (1, then each bound + 1). */
  readonly starts: ReadonlyArray<number>
  readonly accountId?: string | undefined
  readonly categoryId?: string | undefined
  readonly partyId?: string | undefined
  /** Parties read at most: one more than answered, so the report knows it has too many. */
  readonly limit: number
}

/** One party's open documents, by bucket (0 is `current`). */
export interface AgingParty {
  readonly party_id: string | null
  readonly name: string | null
  readonly count: number
  readonly amounts: ReadonlyArray<{ readonly bucket: number; readonly amount: string }>
}

export type Interval = "day" | "week" | "month"

export interface CashFlowQuery {
  readonly tenantId: string
  readonly from: string
  readonly to: string
  readonly interval: Interval
  readonly accountId?: string | undefined
}

/** Money in and out of the periods starting on `start` (the first period's start is `from`). */
export interface PeriodFlow {
  readonly start: string
  readonly in: string
  readonly out: string
}

export interface CashFlowFigures {
  /** Initial balances plus every transaction before `from`. */
  readonly opening: string
  readonly realized: ReadonlyArray<PeriodFlow>
  readonly projected: ReadonlyArray<PeriodFlow>
}

export type Basis = "cash" | "accrual"

export interface IncomeQuery {
  readonly tenantId: string
  readonly from: string
  readonly to: string
  readonly basis: Basis
}

export interface CategoryAmount {
  readonly side: "revenue" | "expenses"
  readonly category_id: string | null
  readonly amount: string
}

export interface CategoryNode {
  readonly id: string
  readonly name: string
  readonly code: string | null
  readonly parent_id: string | null
  readonly position: number
}

export interface IncomeFigures {
  readonly amounts: ReadonlyArray<CategoryAmount>
  /** Every category with an amount and each of its ancestors. */
  readonly categories: ReadonlyArray<CategoryNode>
}

export type SalesSource = "sales-orders" | "invoices"
export type SalesGrouping = "product" | "customer" | "salesperson_name" | "month"

export interface SalesQuery {
  readonly tenantId: string
  readonly from: string
  readonly to: string
  readonly source: SalesSource
  readonly groupBy: SalesGrouping
  readonly limit: number
}

export interface SalesGroup {
  readonly key: string | null
  readonly label: string | null
  readonly documents: number
  readonly quantity: string
  readonly subtotal: string
  readonly discounts: string
  readonly taxes: string
  readonly total: string
}

/**
 * The store's aggregates behind the reports: each one statement that sums in SQL (`numeric`, six
 * decimals) scoped to the tenant, so no report walks records in the host.
 */
export class ReportQueries extends Context.Service<ReportQueries, {
  /** The tenant's today, in its time zone. */
  readonly today: (tenantId: string) => Effect.Effect<string>
  readonly aging: (query: AgingQuery) => Effect.Effect<ReadonlyArray<AgingParty>>
  readonly cashFlow: (query: CashFlowQuery) => Effect.Effect<CashFlowFigures>
  readonly income: (query: IncomeQuery) => Effect.Effect<IncomeFigures>
  /** The groups, largest total first (months in order), and how many documents they hold together. */
  readonly sales: (query: SalesQuery) => Effect.Effect<{ readonly groups: ReadonlyArray<SalesGroup>; readonly documents: number }>
}>()("erp/core/ReportQueries") {}
