import BigNumber from "bignumber.js"
import type { CnabEntry } from "./types.js"

/** The entry's payment date: its occurrence date when money was received, else null. */
export const paymentDateOf = (settled: boolean, paidAmount: string, occurrenceDate: string | null): string | null =>
  settled || new BigNumber(paidAmount).isGreaterThan(0) ? occurrenceDate : null

export type EntryRead = { readonly ok: true; readonly entry: CnabEntry } | { readonly ok: false; readonly line: number; readonly reason: string }
