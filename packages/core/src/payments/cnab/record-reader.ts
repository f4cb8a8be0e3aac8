import BigNumber from "bignumber.js"

/**
 * Reads the fields of one fixed-width record by the 1-based, inclusive positions the
 * CNAB manuals give, and keeps every field that does not read as a reason, so a record
 * with any such field is reported rather than read with a guessed value.
 */
export class RecordReader {
  readonly reasons: Array<string> = []

  constructor(private readonly record: string, private readonly label: string) {}

  /** The characters at positions `from` to `to`. */
  text(from: number, to: number): string {
    return this.record.slice(from - 1, to)
  }

  /** Digits holding cents with no decimal point ("000000000012345" is 123.45), as "123.450000". */
  amount(from: number, to: number, name: string): string {
    const text = this.text(from, to)
    if (/^\d+$/.test(text)) return new BigNumber(text).shiftedBy(-2).toFixed(6)
    this.fail(from, to, name, text, "is not an amount in cents")
    return "0.000000"
  }

  /**
   * DDMMYYYY (CNAB 240) or DDMMYY (CNAB 400, years 00–69 in 2000–2069, 70–99 in 1970–1999)
   * as `YYYY-MM-DD`; zeros or blanks, which the layouts use for "no date", are null.
   */
  date(from: number, to: number, name: string): string | null {
    const text = this.text(from, to)
    if (/^0+$/.test(text) || /^ +$/.test(text)) return null
    const match = /^(\d{2})(\d{2})(\d{2}|\d{4})$/.exec(text)
    if (match) {
      const [day, month, written] = [Number(match[1]), Number(match[2]), Number(match[3])]
      const year = match[3].length === 4 ? written : written <= 69 ? 2000 + written : 1900 + written
      const date = new Date(Date.UTC(year, month - 1, day))
      if (date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day) {
        return `${String(year).padStart(4, "0")}-${match[2]}-${match[1]}`
      }
    }
    this.fail(from, to, name, text, `is not a date ${to - from === 7 ? "DDMMYYYY" : "DDMMYY"}`)
    return null
  }

  /** Two digits: the occurrence code. */
  code(from: number, to: number, name: string): string {
    const text = this.text(from, to)
    if (/^\d+$/.test(text)) return text
    this.fail(from, to, name, text, "is not a numeric code")
    return text
  }

  /** A field that must not be blank, blanks trimmed. */
  required(from: number, to: number, name: string): string {
    const text = this.text(from, to).trim()
    if (text === "") this.fail(from, to, name, this.text(from, to), "is blank")
    return text
  }

  private fail(from: number, to: number, name: string, text: string, why: string): void {
    this.reasons.push(`${this.label} ${name} (positions ${from}–${to}) "${text}" ${why}`)
  }
}
