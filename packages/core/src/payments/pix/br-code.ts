import { toBrCodeAmount } from "./amount.js"
import { toEmvAscii } from "./ascii.js"
import { crc16Ccitt } from "./crc16.js"
import { MAX_TLV_VALUE_LENGTH, tlv } from "./emv.js"
import { type PixKey, parsePixKey } from "./key.js"
import { isValidStaticTxid, MAX_STATIC_TXID_LENGTH, NO_TXID } from "./txid.js"

/** The globally unique identifier that marks a merchant account template as PIX (Manual do BR Code, field 26-00). */
export const PIX_GUI = "br.gov.bcb.pix"

/** EMV QRCPS-MPM limits of Merchant Name (ID "59") and Merchant City (ID "60"). */
export const MAX_MERCHANT_NAME_LENGTH = 25
export const MAX_MERCHANT_CITY_LENGTH = 15

export interface BrCodeInput {
  /** A key as typed (checked and normalised here) or one `parsePixKey` already answered. */
  readonly key: string | PixKey
  readonly merchantName: string
  readonly merchantCity: string
  /** A positive decimal string in whole cents, such as "123.450000"; absent lets the payer type the amount. */
  readonly amount?: string | undefined
  /** 1–25 letters and digits, or "***" for none (see `newTxid`). */
  readonly txid: string
  /** Free text the payer's app shows (field 26-02, infoAdicional). */
  readonly description?: string | undefined
}

export type BrCodeResult =
  | { readonly ok: true; readonly brCode: string }
  | { readonly ok: false; readonly field: keyof BrCodeInput; readonly message: string }

const refuse = (field: keyof BrCodeInput, message: string): BrCodeResult => ({ ok: false, field, message })

/**
 * Name and city are cut to their EMV limits rather than refused: the payer's bank shows the account
 * holder's name from the DICT, not field 59, and settlement matches on key and txid, so a cut name
 * loses nothing a payment depends on, while refusing would make callers invent abbreviations of legal
 * names such as "Comércio de Alimentos São João Ltda".
 */
const fitted = (text: string, max: number): string | null => {
  const ascii = toEmvAscii(text)
  return ascii === null ? null : ascii.slice(0, max).trimEnd()
}

const keyOf = (key: string | PixKey) => (typeof key === "string" ? parsePixKey(key) : parsePixKey(key.value, key.type))

/**
 * A static PIX "copia e cola" code (Manual de Padrões para Iniciação do Pix, "BR Code estático"):
 * fields 00, 26, 52, 53, 54, 58, 59, 60, 62 in that order and the CRC of field 63 last, over the
 * whole payload including "6304". Every value is printable ASCII, so lengths count characters.
 */
export const buildBrCode = (input: BrCodeInput): BrCodeResult => {
  const key = keyOf(input.key)
  if (!key.ok) return refuse("key", key.message)

  const name = fitted(input.merchantName, MAX_MERCHANT_NAME_LENGTH)
  if (name === null) return refuse("merchantName", "the merchant name has characters with no ASCII spelling")
  if (name === "") return refuse("merchantName", "the merchant name is empty")
  const city = fitted(input.merchantCity, MAX_MERCHANT_CITY_LENGTH)
  if (city === null) return refuse("merchantCity", "the merchant city has characters with no ASCII spelling")
  if (city === "") return refuse("merchantCity", "the merchant city is empty")

  if (!isValidStaticTxid(input.txid)) {
    return refuse("txid", `the txid must be 1 to ${MAX_STATIC_TXID_LENGTH} letters and digits, or "${NO_TXID}" for none`)
  }

  let amount: string | null = null
  if (input.amount !== undefined) {
    const parsed = toBrCodeAmount(input.amount)
    if (!parsed.ok) return refuse("amount", parsed.message)
    amount = parsed.value
  }

  const description = input.description === undefined ? "" : toEmvAscii(input.description)
  if (description === null) return refuse("description", "the description has characters with no ASCII spelling")
  const gui = tlv("00", PIX_GUI)
  const keyField = tlv("01", key.key.value)
  // Field 26 holds GUI, key and description in at most 99 characters, so a longer key leaves less room.
  const room = MAX_TLV_VALUE_LENGTH - gui.length - keyField.length - 4
  if (description.length > 0 && description.length > room) {
    return refuse(
      "description",
      room > 0 ? `the description must have at most ${room} characters with this key` : "this key leaves no room for a description"
    )
  }
  const account = gui + keyField + (description.length > 0 ? tlv("02", description) : "")

  const payload = [
    tlv("00", "01"),
    tlv("26", account),
    tlv("52", "0000"),
    tlv("53", "986"),
    amount === null ? "" : tlv("54", amount),
    tlv("58", "BR"),
    tlv("59", name),
    tlv("60", city),
    tlv("62", tlv("05", input.txid)),
    "6304"
  ].join("")
  return { ok: true, brCode: payload + crc16Ccitt(payload) }
}
