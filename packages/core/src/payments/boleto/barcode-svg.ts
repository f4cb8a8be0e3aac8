/**
 * The boleto's 44 digits as FEBRABAN prints them: Interleaved 2 of 5, digits in pairs (the first
 * of a pair in the bars, the second in the spaces between them), a start of four narrow elements
 * and a stop of a wide bar and two narrow elements; a wide element three times a narrow one.
 */
const PATTERNS = ["nnwwn", "wnnnw", "nwnnw", "wwnnn", "nnwnw", "wnwnn", "nwwnn", "nnnww", "wnnwn", "nwnwn"] as const
const NARROW = 1
const WIDE = 3
const HEIGHT = 50
const QUIET = 10

/** The bars of the digits as an SVG document: black rectangles on white, no script, no external reference. */
export const barcodeSvg = (digits: string): string => {
  if (!/^(\d\d)+$/u.test(digits)) throw new Error("Interleaved 2 of 5 takes an even number of digits")
  const elements: Array<{ bar: boolean; width: number }> = []
  const push = (pattern: string, bar: boolean) => {
    for (const element of pattern) elements.push({ bar, width: element === "w" ? WIDE : NARROW })
  }
  for (const [index, element] of ["n", "n", "n", "n"].entries()) elements.push({ bar: index % 2 === 0, width: element === "w" ? WIDE : NARROW })
  for (let index = 0; index < digits.length; index += 2) {
    const bars = PATTERNS[Number(digits[index])]
    const spaces = PATTERNS[Number(digits[index + 1])]
    for (let position = 0; position < 5; position++) {
      push(bars[position], true)
      push(spaces[position], false)
    }
  }
  push("w", true)
  push("n", false)
  push("n", true)
  let x = QUIET
  const rects: Array<string> = []
  for (const element of elements) {
    if (element.bar) rects.push(`<rect x="${x}" y="0" width="${element.width}" height="${HEIGHT}"/>`)
    x += element.width
  }
  const width = x + QUIET
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${HEIGHT}" preserveAspectRatio="none" shape-rendering="crispEdges"><rect width="${width}" height="${HEIGHT}" fill="#fff"/><g fill="#000">${rects.join("")}</g></svg>`
}
