/** Check digits of Brazilian CPF (11 digits) and CNPJ (14 digits), per Receita Federal's modulo-11 rules. */
const checkDigit = (digits: ReadonlyArray<number>, weights: ReadonlyArray<number>): number => {
  const sum = digits.reduce((total, digit, index) => total + digit * weights[index], 0)
  const rest = sum % 11
  return rest < 2 ? 0 : 11 - rest
}

const allSame = (text: string) => /^(\d)\1*$/.test(text)

export const isValidCpf = (text: string): boolean => {
  if (!/^\d{11}$/.test(text) || allSame(text)) return false
  const digits = [...text].map(Number)
  const first = checkDigit(digits.slice(0, 9), [10, 9, 8, 7, 6, 5, 4, 3, 2])
  const second = checkDigit(digits.slice(0, 10), [11, 10, 9, 8, 7, 6, 5, 4, 3, 2])
  return first === digits[9] && second === digits[10]
}

export const isValidCnpj = (text: string): boolean => {
  if (!/^\d{14}$/.test(text) || allSame(text)) return false
  const digits = [...text].map(Number)
  const first = checkDigit(digits.slice(0, 12), [5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2])
  const second = checkDigit(digits.slice(0, 13), [6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2])
  return first === digits[12] && second === digits[13]
}

export const TAX_ID_TYPES = ["CPF", "CNPJ", "SSN", "EIN", "ITIN", "FOREIGN", "OTHER"] as const
export type TaxIdType = (typeof TAX_ID_TYPES)[number]

/** Canonical form of a tax id for its type (digits only for the national numbers), or the reason it is not one. */
export const normalizeTaxId = (type: TaxIdType | null | undefined, taxId: string): { ok: true; value: string } | { ok: false; reason: string } => {
  const digits = taxId.replace(/[.\-/\s]/g, "")
  switch (type) {
    case "CPF":
      return isValidCpf(digits) ? { ok: true, value: digits } : { ok: false, reason: "is not a valid CPF (11 digits with valid check digits)" }
    case "CNPJ":
      return isValidCnpj(digits) ? { ok: true, value: digits } : { ok: false, reason: "is not a valid CNPJ (14 digits with valid check digits)" }
    case "SSN":
    case "EIN":
    case "ITIN":
      return /^\d{9}$/.test(digits) ? { ok: true, value: digits } : { ok: false, reason: `is not a valid ${type} (9 digits)` }
    default:
      return { ok: true, value: taxId.trim() }
  }
}

/** People carry these; everything else is a company unless the caller says so. */
export const individualTaxIdTypes: ReadonlyArray<TaxIdType> = ["CPF", "SSN", "ITIN"]

/** CPF or CNPJ when the number has valid check digits; nothing is guessed otherwise. */
export const inferTaxIdType = (taxId: string): TaxIdType | undefined => {
  const digits = taxId.replace(/[.\-/\s]/g, "")
  if (isValidCpf(digits)) return "CPF"
  if (isValidCnpj(digits)) return "CNPJ"
  return undefined
}
