export { type BrCodeAmountResult, toBrCodeAmount } from "./amount.js"
export {
  type BrCodeInput,
  type BrCodeResult,
  buildBrCode,
  MAX_MERCHANT_CITY_LENGTH,
  MAX_MERCHANT_NAME_LENGTH,
  PIX_GUI
} from "./br-code.js"
export { crc16Ccitt } from "./crc16.js"
export { type TlvField } from "./emv.js"
export { MAX_EMAIL_KEY_LENGTH, parsePixKey, PIX_KEY_TYPES, type PixKey, type PixKeyResult, type PixKeyType } from "./key.js"
export { brCodeSvg } from "./qr-svg.js"
export { type BrCodeField, type BrCodeReading, type BrCodeReadResult, parseBrCode } from "./read-br-code.js"
export { isValidStaticTxid, MAX_STATIC_TXID_LENGTH, newTxid, NO_TXID } from "./txid.js"
