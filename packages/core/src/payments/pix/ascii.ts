/**
 * Letters that Unicode compatibility decomposition leaves whole, spelled the way Brazilian banks print
 * them; accented letters (ã, ç, é…) need no entry, as decomposition splits them into letter and mark.
 */
const SPELLED: Readonly<Record<string, string>> = {
  "ß": "ss", "Æ": "AE", "æ": "ae", "Œ": "OE", "œ": "oe", "Ø": "O", "ø": "o", "Đ": "D", "đ": "d", "Ð": "D",
  "ð": "d", "Ł": "L", "ł": "l", "Þ": "TH", "þ": "th", "ı": "i",
  "‘": "'", "’": "'", "‚": "'", "“": "\"", "”": "\"", "„": "\"", "–": "-", "—": "-", "‐": "-", "‑": "-", "…": "..."
}

/** EMV "ans" (alphanumeric special) values are the printable ASCII characters. */
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/

/**
 * Text brought to the printable ASCII a BR Code carries: accents dropped ("São João" → "Sao Joao"),
 * runs of whitespace made one space, ends trimmed. `null` when a character has no ASCII spelling
 * (a CJK name, an emoji): guessing one would print a name the payee never gave.
 */
export const toEmvAscii = (text: string): string | null => {
  const decomposed = text.normalize("NFKD").replace(/\p{M}/gu, "")
  const spelled = Array.from(decomposed, (character) => SPELLED[character] ?? character).join("")
  const spaced = spelled.replace(/\s+/g, " ").trim()
  return PRINTABLE_ASCII.test(spaced) ? spaced : null
}
