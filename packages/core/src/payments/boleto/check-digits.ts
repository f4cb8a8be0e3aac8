/**
 * The check digits of the FEBRABAN "bloqueto de cobrança" layout and of the banks'
 * "nosso número". Every function takes a string of decimal digits.
 */

/**
 * Módulo 10 as the linha digitável fields use it: weights 2, 1, 2, 1… from the right,
 * the digits of each product summed (a product of 10 to 18 counts as product − 9),
 * check digit = 10 − (sum mod 10), and 10 becomes 0.
 */
export const modulo10 = (digits: string): number => {
  let sum = 0
  let weight = 2
  for (let index = digits.length - 1; index >= 0; index--) {
    const product = Number(digits[index]) * weight
    sum += product > 9 ? product - 9 : product
    weight = weight === 2 ? 1 : 2
  }
  return (10 - (sum % 10)) % 10
}

/** Σ digit × weight, the weights running 2, 3, … `maxWeight` from the right and starting again at 2. */
export const modulo11Sum = (digits: string, maxWeight: number): number => {
  let sum = 0
  let weight = 2
  for (let index = digits.length - 1; index >= 0; index--) {
    sum += Number(digits[index]) * weight
    weight = weight === maxWeight ? 2 : weight + 1
  }
  return sum
}

/**
 * The general check digit of the 44-digit barcode (position 5), over the other 43 digits:
 * 11 − (Σ mod 11) with weights 2 to 9; FEBRABAN turns a result of 0, 10 or 11 into 1,
 * so the digit is never 0.
 */
export const barcodeCheckDigit = (digits43: string): number => {
  const digit = 11 - (modulo11Sum(digits43, 9) % 11)
  return digit === 0 || digit === 10 || digit === 11 ? 1 : digit
}
