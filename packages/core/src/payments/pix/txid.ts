import { randomInt } from "node:crypto"

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

/** Manual do BR Code, field 62-05 of a static BR Code: 1 to 25 letters and digits. */
export const MAX_STATIC_TXID_LENGTH = 25

/** What the manual prescribes in 62-05 when the payee gives no identifier. */
export const NO_TXID = "***"

export const isValidStaticTxid = (txid: string): boolean => txid === NO_TXID || /^[A-Za-z0-9]{1,25}$/.test(txid)

/**
 * A fresh 25-character alphanumeric txid (about 148 bits), drawn with `randomInt` so every character
 * is uniform over the 62 letters and digits: a guessable txid would let a stranger's payment be
 * reconciled against someone else's charge.
 */
export const newTxid = (): string => Array.from({ length: MAX_STATIC_TXID_LENGTH }, () => ALPHABET[randomInt(ALPHABET.length)]).join("")
