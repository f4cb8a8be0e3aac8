/** One title event of a return file, in neutral terms. Amounts are six-digit decimal strings. */
export interface CnabEntry {
  /** The line (1-based) of the record that names the title: segment T in CNAB 240, the detail in CNAB 400. */
  readonly line: number
  /** The bank's identification of the title (nosso número) as the record writes it, blanks trimmed. */
  readonly ourNumber: string
  /** The bank's two-digit occurrence code ("código de movimento" / "ocorrência"), e.g. "06" liquidação. */
  readonly occurrence: string
  /** True when the occurrence is one of the bank's liquidation codes: the title is paid. */
  readonly settled: boolean
  readonly titleAmount: string
  readonly paidAmount: string
  /** The bank's fee for the occurrence (tarifa / despesas de cobrança). */
  readonly fees: string
  readonly discount: string
  /** Interest and late charges (juros / multa / encargos) the payer paid. */
  readonly interest: string
  /** The net amount credited to the account, where the layout carries it (CNAB 240 segment U), else null. */
  readonly netCredited: string | null
  /** The date of the occurrence, `YYYY-MM-DD`, or null when the bank leaves it zero. */
  readonly occurrenceDate: string | null
  /** The occurrence date when the occurrence reports money received (settled, or a paid amount above zero), else null. */
  readonly paymentDate: string | null
  /** The date the bank credits the account, or null when the bank leaves it zero. */
  readonly creditDate: string | null
}

/** A line the reader does not turn into an entry, and why. */
export interface CnabUnreadable {
  readonly line: number
  readonly reason: string
}

export interface CnabReturn {
  readonly layout: "240" | "400"
  /** The bank's three-digit COMPE code from the file header. */
  readonly bankCode: string
  readonly entries: ReadonlyArray<CnabEntry>
  readonly unreadable: ReadonlyArray<CnabUnreadable>
}

/** The return file read, or why it cannot be read at all. */
export type CnabReadResult = ({ readonly ok: true } & CnabReturn) | { readonly ok: false; readonly message: string }
