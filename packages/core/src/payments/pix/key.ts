import { isValidCnpj, isValidCpf } from "../../resources/tax-ids.js"

/** The five kinds of key the DICT (Diretório de Identificadores de Contas Transacionais) holds. */
export const PIX_KEY_TYPES = ["cpf", "cnpj", "email", "phone", "evp"] as const
export type PixKeyType = (typeof PIX_KEY_TYPES)[number]

/** A key in the canonical form the DICT stores it, which is also the form a BR Code carries. */
export interface PixKey {
  readonly type: PixKeyType
  readonly value: string
}

export type PixKeyResult = { readonly ok: true; readonly key: PixKey } | { readonly ok: false; readonly message: string }

/** The DICT's limit on an e-mail key. */
export const MAX_EMAIL_KEY_LENGTH = 77

/** The DICT's e-mail pattern (API do DICT, `Key` of type EMAIL), applied after lower-casing. */
const EMAIL = /^[a-z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/

/**
 * A Brazilian number in E.164: +55, a two-digit area code (DDD, 11–99, none ending in 0), then
 * eight digits for a landline or nine starting with 9 for a mobile (Anatel's numbering plan).
 */
const BRAZILIAN_PHONE = /^\+55[1-9]{2}(?:9\d{8}|\d{8})$/

/** A random key (EVP) is a UUID, which the DICT stores in lower case. */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/** Punctuation people write CPFs, CNPJs and phone numbers with. */
const DOCUMENT_PUNCTUATION = /[.\-/\s]/g
const PHONE_PUNCTUATION = /[\s().-]/g

const ok = (type: PixKeyType, value: string): PixKeyResult => ({ ok: true, key: { type, value } })
const refuse = (message: string): PixKeyResult => ({ ok: false, message })

const cpf = (text: string): PixKeyResult => {
  const digits = text.replace(DOCUMENT_PUNCTUATION, "")
  if (!/^\d{11}$/.test(digits)) return refuse("a CPF key must have 11 digits")
  return isValidCpf(digits) ? ok("cpf", digits) : refuse("the CPF key's check digits do not match")
}

const cnpj = (text: string): PixKeyResult => {
  const digits = text.replace(DOCUMENT_PUNCTUATION, "")
  if (!/^\d{14}$/.test(digits)) return refuse("a CNPJ key must have 14 digits")
  return isValidCnpj(digits) ? ok("cnpj", digits) : refuse("the CNPJ key's check digits do not match")
}

const email = (text: string): PixKeyResult => {
  const lower = text.toLowerCase()
  if (lower.length > MAX_EMAIL_KEY_LENGTH) return refuse(`an e-mail key must have at most ${MAX_EMAIL_KEY_LENGTH} characters`)
  return EMAIL.test(lower) ? ok("email", lower) : refuse("the e-mail key is not a valid address")
}

const phone = (text: string): PixKeyResult => {
  const compact = text.replace(PHONE_PUNCTUATION, "")
  if (!compact.startsWith("+55")) return refuse("a phone key must be a Brazilian number starting with +55")
  return BRAZILIAN_PHONE.test(compact)
    ? ok("phone", compact)
    : refuse("a phone key must be +55, a two-digit area code and an 8-digit landline or 9-digit mobile number")
}

const evp = (text: string): PixKeyResult => {
  const lower = text.toLowerCase()
  return UUID.test(lower) ? ok("evp", lower) : refuse("a random key must be a UUID such as 123e4567-e89b-12d3-a456-426614174000")
}

const byType: Readonly<Record<PixKeyType, (text: string) => PixKeyResult>> = { cpf, cnpj, email, phone, evp }

/** Recognises the kind of key from its shape; 11 digits are a CPF and never a phone, which needs +55. */
const detect = (text: string): PixKeyResult => {
  if (text.includes("@")) return email(text)
  if (text.startsWith("+")) return phone(text)
  if (/^[0-9a-f-]{36}$/i.test(text)) return evp(text)
  const digits = text.replace(DOCUMENT_PUNCTUATION, "")
  if (/^\d+$/.test(digits)) {
    if (digits.length === 11) return cpf(digits)
    if (digits.length === 14) return cnpj(digits)
  }
  return refuse("a PIX key must be a CPF, a CNPJ, an e-mail address, a phone number starting with +55 or a random key (UUID)")
}

/**
 * Checks a PIX key and brings it to the DICT's canonical form: CPF and CNPJ as digits, e-mail and
 * random key in lower case, phone as +55 and digits. Without `type` the kind is read from the shape.
 * Messages never quote the input, so they are safe to return in a 422.
 */
export const parsePixKey = (input: string, type?: PixKeyType): PixKeyResult => {
  const text = input.trim()
  if (text.length === 0) return refuse("the PIX key is empty")
  if (type === undefined) return detect(text)
  // The type may come straight from a request body; an unknown one is refused, not looked up blindly.
  return Object.hasOwn(byType, type) ? byType[type](text) : refuse(`the PIX key type must be one of ${PIX_KEY_TYPES.join(", ")}`)
}
