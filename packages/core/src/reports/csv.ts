import type { ReportTable } from "./report.js"

const NUMBER = /^-?\d+(\.\d+)?$/

/**
 * One CSV field (RFC 4180): quoted when it holds a comma, quote or line break. Text a spreadsheet
 * would run as a formula (`=`, `+`, `-`, `@`, tab, carriage return first) is led by `'`; numbers
 * stay numbers.
 */
const field = (value: string | number | null): string => {
  if (value === null) return ""
  const text = String(value)
  const safe = !NUMBER.test(text) && /^[=+\-@\t\r]/.test(text) ? `'${text}` : text
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe
}

/** A report's table as CSV: a header line, then a line per row, each ended by CRLF. */
export const toCsv = (table: ReportTable): string =>
  [table.columns, ...table.rows].map((row) => `${row.map(field).join(",")}\r\n`).join("")
