import { CNAB400_LAYOUTS } from "./cnab400-layouts.js"
import { readCnab240 } from "./cnab240.js"
import { readCnab400 } from "./cnab400.js"
import { cnabLines } from "./text.js"
import type { CnabReadResult, CnabUnreadable } from "./types.js"

const byLine = (a: CnabUnreadable, b: CnabUnreadable) => a.line - b.line

/**
 * Reads a bank's CNAB return file ("arquivo retorno" of cobrança) into neutral entries.
 * The layout comes from the header: 240 characters with record type "0" at position 8
 * (FEBRABAN CNAB 240), or 400 characters starting "02RETORNO" (CNAB 400). A file that is
 * neither, or too large, is refused; a line inside it that cannot be read goes to
 * `unreadable` with the reason, never into an entry with a guessed value.
 */
export const readCnabReturn = (content: Uint8Array | string): CnabReadResult => {
  const read = cnabLines(content)
  if (!read.ok) return read
  const { lines } = read
  const header = lines[0]

  if (header.length === 240 && header[7] === "0") {
    const bankCode = header.slice(0, 3)
    if (!/^\d{3}$/.test(bankCode)) return { ok: false, message: `the CNAB 240 header's bank code "${bankCode}" (positions 1–3) is not three digits` }
    if (header[142] !== "2") {
      return { ok: false, message: `the CNAB 240 header's file code (position 143) is "${header[142]}": this is not a return file (2), perhaps a remessa (1)` }
    }
    const { entries, unreadable } = readCnab240(lines, bankCode)
    return { ok: true, layout: "240", bankCode, entries, unreadable: unreadable.sort(byLine) }
  }

  if (header.length === 400 && header.startsWith("02RETORNO")) {
    const bankCode = header.slice(76, 79)
    const layout = CNAB400_LAYOUTS.get(bankCode)
    if (layout === undefined) {
      const known = [...CNAB400_LAYOUTS].map(([code, { bank }]) => `${code} (${bank})`).join(", ")
      return { ok: false, message: `no CNAB 400 return layout for bank "${bankCode}" (header positions 77–79); the banks read here are ${known}` }
    }
    const { entries, unreadable } = readCnab400(lines, layout)
    return { ok: true, layout: "400", bankCode, entries, unreadable: unreadable.sort(byLine) }
  }

  if (header.length === 400 && header.startsWith("01REMESSA")) return { ok: false, message: "this is a CNAB 400 remessa (the header starts \"01REMESSA\"), not a return file" }
  return {
    ok: false,
    message: `the first line (${header.length} characters) is neither a CNAB 240 file header (240 characters, "0" at position 8) nor a CNAB 400 return header (400 characters starting "02RETORNO")`
  }
}
