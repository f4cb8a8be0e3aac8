import BigNumber from "bignumber.js"
import { crc16Ccitt } from "./crc16.js"
import { decodeTlv, type TlvField } from "./emv.js"
import { PIX_GUI } from "./br-code.js"

/** A data object and, for the templates below, the data objects inside it. */
export interface BrCodeField extends TlvField {
  readonly fields?: ReadonlyArray<TlvField>
}

/** What a BR Code says, as far as it says it: absent fields are `null`. */
export interface BrCodeReading {
  /** Top-level data objects in the order they appear. */
  readonly fields: ReadonlyArray<BrCodeField>
  /** Whether field 63 is last and holds the CRC16 of everything before its value. */
  readonly crcValid: boolean
  readonly key: string | null
  readonly description: string | null
  /** Field 54 in the six-digit form the API carries ("123.45" → "123.450000"). */
  readonly amount: string | null
  readonly merchantName: string | null
  readonly merchantCity: string | null
  readonly txid: string | null
}

export type BrCodeReadResult = ({ readonly ok: true } & BrCodeReading) | { readonly ok: false; readonly message: string }

/** EMV QRCPS-MPM templates: merchant account information 26–51, additional data 62, unreserved 80–99. */
const isTemplate = (id: string) => {
  const n = Number(id)
  return (n >= 26 && n <= 51) || n === 62 || n >= 80
}

const withChildren = (field: TlvField): BrCodeField => {
  if (!isTemplate(field.id)) return field
  const inner = decodeTlv(field.value)
  return inner.ok ? { ...field, fields: inner.fields } : field
}

const valueOf = (fields: ReadonlyArray<TlvField> | undefined, id: string) => fields?.find((field) => field.id === id)?.value ?? null

const sixDigits = (text: string | null) => (text !== null && /^\d+(?:\.\d{1,6})?$/.test(text) ? new BigNumber(text).toFixed(6) : null)

/**
 * Reads a BR Code back into its fields: for tests, and for reconciliation, which finds the txid of a
 * charge in a statement line. Surrounding whitespace is ignored, as pasted codes often carry some.
 * Any merchant account template whose GUI is PIX holds the key; some issuers write the GUI upper-case.
 */
export const parseBrCode = (text: string): BrCodeReadResult => {
  const code = text.trim()
  const decoded = decodeTlv(code)
  if (!decoded.ok) return { ok: false, message: `not a BR Code: ${decoded.message}` }
  const fields = decoded.fields.map(withChildren)
  const last = fields[fields.length - 1]
  const crcValid = last !== undefined && last.id === "63" && last.value.length === 4 &&
    crc16Ccitt(code.slice(0, -4)) === last.value.toUpperCase()
  const account = fields.find((field) => isTemplate(field.id) && Number(field.id) <= 51 &&
    valueOf(field.fields, "00")?.toLowerCase() === PIX_GUI)
  const additional = fields.find((field) => field.id === "62")
  return {
    ok: true,
    fields,
    crcValid,
    key: valueOf(account?.fields, "01"),
    description: valueOf(account?.fields, "02"),
    amount: sixDigits(valueOf(fields, "54")),
    merchantName: valueOf(fields, "59"),
    merchantCity: valueOf(fields, "60"),
    txid: valueOf(additional?.fields, "05")
  }
}
