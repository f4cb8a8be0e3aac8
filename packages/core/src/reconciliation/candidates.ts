import { Context, type Effect } from "effect"
import type { SettlementSide } from "../reports/queries.js"
import type { MatchLine, OpenDocument } from "./match.js"
import { readLine } from "./text.js"

/** Which open documents of one side a batch of statement lines may pay. */
export interface CandidateQuery {
  readonly tenantId: string
  readonly side: SettlementSide
  /** Due dates within this range… */
  readonly from: string
  readonly to: string
  /** …or an open amount equal to one of these, or an identifier among the lines' words and digits. */
  readonly amounts: ReadonlyArray<string>
  readonly words: ReadonlyArray<string>
  readonly digitRuns: ReadonlyArray<string>
  /** At most this many, the due dates nearest the range's middle first. */
  readonly limit: number
}

/** One allocation of a statement line, to a receivable or a payable. */
export interface LineAllocation {
  readonly side: SettlementSide
  readonly documentId: string
  readonly allocationId: string
}

/**
 * The reads reconciliation needs beyond one record: open documents with their counterparty's
 * names and tax id, and a line's allocations on either side. The store implements them in SQL.
 */
export class MatchCandidates extends Context.Service<MatchCandidates, {
  readonly open: (query: CandidateQuery) => Effect.Effect<ReadonlyArray<OpenDocument>>
  readonly allocationsOf: (tenantId: string, transactionId: string) => Effect.Effect<ReadonlyArray<LineAllocation>>
  /**
   * An account's receivables whose our number a bank's file may write as one of `numbers`: the
   * digits of one end the other's (`sameOurNumber` then decides).
   */
  readonly byOurNumbers: (tenantId: string, accountId: string, numbers: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<{ readonly id: string; readonly ourNumber: string }>>
}>()("erp/core/MatchCandidates") {}

/** The digits of an our number, its zeros kept: banks write it at a fixed width, which is what tells 1 from 11. */
export const ourNumberDigits = (ourNumber: string) => ourNumber.replace(/\D/gu, "")

/** The fewest digits two our numbers must share: every bank's layout is at least this wide. */
const MIN_OUR_NUMBER_DIGITS = 8

/** Whether a bank's file's our number names this receivable's: one's digits end the other's (the bank adds its wallet, agreement or check digit). */
export const sameOurNumber = (fromFile: string, stored: string) => {
  const file = ourNumberDigits(fromFile)
  const mine = ourNumberDigits(stored)
  return Math.min(file.length, mine.length) >= MIN_OUR_NUMBER_DIGITS && (file.endsWith(mine) || mine.endsWith(file))
}
/** How far around the lines' posting dates due dates are looked for (beside amounts and identifiers, found anywhere). */
const WINDOW_DAYS = 60
/** At most this many documents scored for one request. */
export const MAX_CANDIDATES = 20_000

const shift = (day: string, days: number) => new Date(Date.parse(`${day}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10)

/** The documents of `side` that `lines` may pay. */
export const candidateQuery = (tenantId: string, side: SettlementSide, lines: ReadonlyArray<MatchLine>): CandidateQuery => {
  const days = lines.map((line) => line.postedAt).sort()
  const texts = lines.map((line) => readLine(line.text))
  return {
    tenantId,
    side,
    from: shift(days[0], -WINDOW_DAYS),
    to: shift(days[days.length - 1], WINDOW_DAYS),
    amounts: [...new Set(lines.map((line) => line.left))],
    words: [...new Set(texts.flatMap((text) => [...text.words]))],
    digitRuns: [...new Set(texts.flatMap((text) => [...text.digitRuns]))],
    limit: MAX_CANDIDATES
  }
}
