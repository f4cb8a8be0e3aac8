import { createHash } from "node:crypto"
import { isValidDate } from "../engine/datetime.js"
import { decimal, formatDecimal, parseDecimal } from "../money/decimal.js"
import { child, childValue, descendants, type OfxElement, OfxError, parseOfx } from "./parse.js"

/** One `STMTTRN` of a statement, in the fields of a financial transaction. */
export interface StatementLine {
  readonly fitid: string
  readonly trn_type: string
  /** `YYYY-MM-DD` as the bank dated it (its local day; the time and offset are dropped). */
  readonly posted_at: string
  readonly user_initiated_at: string | null
  readonly amount: string
  readonly name: string | null
  readonly extd_name: string | null
  readonly memo: string | null
  readonly refnum: string | null
  readonly checknum: string | null
  readonly srvrtid: string | null
  readonly correct_fitid: string | null
  readonly correct_action: "REPLACE" | "DELETE" | null
  readonly orig_currency_code: string | null
  readonly orig_amount: string | null
}

export interface Statement {
  /** `1.02`-style version from the headers (`102` → SGML, `220` → XML). */
  readonly version: string | null
  readonly currency: string | null
  /** The account the bank says the statement is of: its number (and bank id, when given). */
  readonly accounts: ReadonlyArray<string>
  readonly lines: ReadonlyArray<StatementLine>
}

export const TRANSACTION_TYPES = [
  "CREDIT", "DEBIT", "INT", "DIV", "FEE", "SRVCHG", "DEP", "ATM", "POS", "XFER", "CHECK", "PAYMENT", "CASH", "DIRECTDEP",
  "DIRECTDEBIT", "REPEATPMT", "HOLD", "OTHER"
] as const

/**
 * An OFX amount: `-1250.00`, `3500,50` (decimal comma, as many Brazilian banks write
 * it), `+12.5`, `1.234,56` (the last separator is the decimal one).
 */
export const parseOfxAmount = (text: string): string | undefined => {
  const compact = text.replace(/\s/g, "")
  const lastDot = compact.lastIndexOf(".")
  const lastComma = compact.lastIndexOf(",")
  const decimalAt = Math.max(lastDot, lastComma)
  const normalized = decimalAt < 0
    ? compact
    : `${compact.slice(0, decimalAt).replace(/[.,]/g, "")}.${compact.slice(decimalAt + 1)}`
  const parsed = parseDecimal(normalized.replace(/^\+/, ""))
  return parsed.ok ? parsed.value : undefined
}

/** `20240115`, `20240115103000`, `20240115103000.000[-3:BRT]` → `2024-01-15` (the bank's own day). */
export const parseOfxDate = (text: string): string | undefined => {
  const digits = text.trim().slice(0, 8)
  if (!/^\d{8}$/.test(digits)) return undefined
  const date = `${digits.slice(0, 4)}-${digits.slice(4, 6)}-${digits.slice(6, 8)}`
  return isValidDate(date) ? date : undefined
}

const truncate = (value: string | undefined, max: number) => (value === undefined ? null : value.slice(0, max))

/** Money in another currency: `CURRENCY` (amounts were in it) or `ORIGCURRENCY` (converted from it). */
const foreign = (line: OfxElement, amount: string) => {
  const currency = child(line, "CURRENCY")
  const original = child(line, "ORIGCURRENCY")
  const block = currency ?? original
  const symbol = childValue(block, "CURSYM")
  const rate = childValue(block, "CURRATE")
  const parsedRate = rate === undefined ? undefined : parseOfxAmount(rate)
  if (!block || !symbol || parsedRate === undefined || decimal(parsedRate).isZero()) return { amount, orig_currency_code: null, orig_amount: null }
  const code = symbol.toUpperCase().slice(0, 3)
  // CURRATE is units of the statement's currency per unit of CURSYM.
  return currency
    ? { amount: formatDecimal(decimal(amount).times(parsedRate)), orig_currency_code: code, orig_amount: amount }
    : { amount, orig_currency_code: code, orig_amount: formatDecimal(decimal(amount).dividedBy(parsedRate)) }
}

/** A stable id for a line that has none: its content, so a second import finds it again. */
const contentId = (line: Omit<StatementLine, "fitid">) =>
  `ofx:${createHash("sha256").update([line.posted_at, line.amount, line.trn_type, line.name ?? "", line.memo ?? "", line.checknum ?? "", line.refnum ?? ""].join("\u0000")).digest("hex").slice(0, 32)}`

/** Reads the lines of one `STMTTRN`; refuses a line without a date or amount (naming its position). */
const readLine = (line: OfxElement, index: number): Omit<StatementLine, "fitid"> & { fitid: string | undefined } => {
  const postedText = childValue(line, "DTPOSTED")
  const posted = postedText === undefined ? undefined : parseOfxDate(postedText)
  if (posted === undefined) throw new OfxError(`transaction ${index + 1} has no valid DTPOSTED`)
  const amountText = childValue(line, "TRNAMT")
  const amount = amountText === undefined ? undefined : parseOfxAmount(amountText)
  if (amount === undefined) throw new OfxError(`transaction ${index + 1} has no valid TRNAMT`)
  const type = (childValue(line, "TRNTYPE") ?? "").toUpperCase()
  const userText = childValue(line, "DTUSER")
  const action = (childValue(line, "CORRECTACTION") ?? "").toUpperCase()
  const payee = child(line, "PAYEE")
  return {
    fitid: truncate(childValue(line, "FITID"), 255) ?? undefined,
    trn_type: (TRANSACTION_TYPES as ReadonlyArray<string>).includes(type) ? type : decimal(amount).isNegative() ? "DEBIT" : "CREDIT",
    posted_at: posted,
    user_initiated_at: userText === undefined ? null : parseOfxDate(userText) ?? null,
    ...foreign(line, amount),
    name: truncate(childValue(line, "NAME") ?? childValue(payee, "NAME"), 255),
    extd_name: truncate(childValue(line, "EXTDNAME"), 255),
    memo: truncate(childValue(line, "MEMO"), 1000),
    refnum: truncate(childValue(line, "REFNUM"), 64),
    checknum: truncate(childValue(line, "CHECKNUM"), 64),
    srvrtid: truncate(childValue(line, "SRVRTID"), 64),
    correct_fitid: truncate(childValue(line, "CORRECTFITID"), 255),
    correct_action: action === "REPLACE" || action === "DELETE" ? action : null
  }
}

/**
 * The most lines one import takes: months of a busy account. An import is one transaction
 * that lasts longer with every line (bench/ofx-import.mjs), so larger statements come in parts.
 */
export const MAX_STATEMENT_LINES = 2_000

/**
 * The statement lines of a bank (`STMTRS`) or credit-card (`CCSTMTRS`) statement file.
 * Each line keeps its `FITID`; a line without one gets an id from its content, and a
 * `FITID` the file repeats (some banks reuse one for several lines) gets `#2`, `#3`… in
 * file order, so importing the same file again finds every line again.
 */
export const readStatement = (content: Uint8Array | string): Statement => {
  const document = parseOfx(content)
  const statements = [...descendants(document.root, "STMTRS"), ...descendants(document.root, "CCSTMTRS")]
  if (statements.length === 0) throw new OfxError("the file holds no bank or credit-card statement (STMTRS or CCSTMTRS)")
  const accounts = new Set<string>()
  const raw: Array<ReturnType<typeof readLine>> = []
  let currency: string | null = null
  for (const statement of statements) {
    currency ??= childValue(statement, "CURDEF")?.toUpperCase().slice(0, 3) ?? null
    const from = child(statement, "BANKACCTFROM") ?? child(statement, "CCACCTFROM")
    const number = childValue(from, "ACCTID")
    if (number) accounts.add([childValue(from, "BANKID"), childValue(from, "BRANCHID"), number].filter(Boolean).join("/"))
    const lines = descendants(child(statement, "BANKTRANLIST") ?? statement, "STMTTRN")
    if (raw.length + lines.length > MAX_STATEMENT_LINES) {
      throw new OfxError(`the file has more than ${MAX_STATEMENT_LINES} transactions: import it in parts`)
    }
    lines.forEach((line) => raw.push(readLine(line, raw.length)))
  }
  const seen = new Map<string, number>()
  const lines = raw.map((line): StatementLine => {
    const base = line.fitid ?? contentId(line)
    const earlier = seen.get(base) ?? 0
    seen.set(base, earlier + 1)
    return { ...line, fitid: earlier === 0 ? base : `${base}#${earlier + 1}` }
  })
  return { version: document.headers.VERSION ?? null, currency, accounts: [...accounts], lines }
}
