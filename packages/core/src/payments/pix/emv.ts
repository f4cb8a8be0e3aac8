/**
 * The TLV layout of EMV QRCPS-MPM ("Data Objects") that a BR Code follows: every data object is
 * an ID of two digits, a length of two digits (01–99) and that many characters of value.
 */

export interface TlvField {
  readonly id: string
  readonly value: string
}

/** The longest value two length digits can announce. */
export const MAX_TLV_VALUE_LENGTH = 99

/**
 * One data object. Callers check lengths first and answer the user; a value that still does not fit
 * here is a bug in the caller, so it throws rather than writes a payload no bank can read.
 */
export const tlv = (id: string, value: string): string => {
  if (!/^\d{2}$/.test(id)) throw new RangeError(`EMV field id must be two digits, got ${id.length} characters`)
  if (value.length < 1 || value.length > MAX_TLV_VALUE_LENGTH) {
    throw new RangeError(`EMV field ${id} must hold 1 to ${MAX_TLV_VALUE_LENGTH} characters, got ${value.length}`)
  }
  return `${id}${String(value.length).padStart(2, "0")}${value}`
}

export type TlvDecodeResult =
  | { readonly ok: true; readonly fields: ReadonlyArray<TlvField> }
  | { readonly ok: false; readonly message: string }

/** Splits a run of data objects, refusing anything that does not tile the text exactly. */
export const decodeTlv = (text: string): TlvDecodeResult => {
  const fields: Array<TlvField> = []
  let at = 0
  while (at < text.length) {
    const header = text.slice(at, at + 4)
    if (!/^\d{4}$/.test(header)) return { ok: false, message: `expected a two-digit id and a two-digit length at position ${at}` }
    const id = header.slice(0, 2)
    const length = Number(header.slice(2))
    if (length === 0) return { ok: false, message: `field ${id} at position ${at} declares an empty value` }
    const value = text.slice(at + 4, at + 4 + length)
    if (value.length !== length) {
      return { ok: false, message: `field ${id} declares ${length} characters but only ${value.length} remain` }
    }
    fields.push({ id, value })
    at += 4 + length
  }
  return { ok: true, fields }
}
