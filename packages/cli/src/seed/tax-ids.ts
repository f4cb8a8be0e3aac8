import type { Faker } from "@faker-js/faker"

/** Tax ids with valid check digits (Receita Federal's modulo 11) and EINs with a prefix the IRS assigns. */

const checkDigit = (digits: ReadonlyArray<number>, weights: ReadonlyArray<number>) => {
  const rest = digits.reduce((sum, digit, index) => sum + digit * weights[index], 0) % 11
  return rest < 2 ? 0 : 11 - rest
}

const randomDigits = (faker: Faker, count: number) => Array.from({ length: count }, () => faker.number.int({ min: 0, max: 9 }))

export const cpf = (faker: Faker): string => {
  const base = randomDigits(faker, 9)
  if (base.every((digit) => digit === base[0])) base[8] = (base[8] + 1) % 10
  const first = checkDigit(base, [10, 9, 8, 7, 6, 5, 4, 3, 2])
  const second = checkDigit([...base, first], [11, 10, 9, 8, 7, 6, 5, 4, 3, 2])
  const d = [...base, first, second].join("")
  return `${d.slice(0, 3)}.${d.slice(3, 6)}.${d.slice(6, 9)}-${d.slice(9)}`
}

export const cnpj = (faker: Faker): string => {
  const base = [...randomDigits(faker, 8), 0, 0, 0, 1]
  const first = checkDigit(base, [5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2])
  const second = checkDigit([...base, first], [6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2])
  const d = [...base, first, second].join("")
  return `${d.slice(0, 2)}.${d.slice(2, 5)}.${d.slice(5, 8)}/${d.slice(8, 12)}-${d.slice(12)}`
}

/** Campus prefixes the IRS assigns (a sample). */
const EIN_PREFIXES = ["10", "12", "20", "27", "30", "33", "35", "45", "46", "52", "81", "84", "88", "94", "95"]

export const ein = (faker: Faker): string => `${faker.helpers.arrayElement(EIN_PREFIXES)}-${randomDigits(faker, 7).join("")}`
